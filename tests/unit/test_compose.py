"""docker/compose.yaml, docker/Dockerfile and the HTTP app agree (docs/service.md, "With Docker
Compose"): the service starts `tmem serve` on the port it publishes, its health check asks a
route the app has and answers without a token, it reaches the `neo4j` service and waits for it.
No container engine runs here: the files are read as text and YAML, the app is built in-process."""

import json
import re
import shlex
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from fastapi.testclient import TestClient

from tmem_graph.serve.access import Access
from tmem_graph.serve.http import create_app

DOCKER = Path(__file__).parents[2] / "docker"
TOKEN = "a-service-token-of-enough-length"


def compose(name: str = "compose.yaml") -> dict:
    return yaml.safe_load((DOCKER / name).read_text(encoding="utf-8"))


def instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions of its last stage, as (KEYWORD, arguments), continuations joined."""
    text = re.sub(r"\\\n", " ", (DOCKER / "Dockerfile").read_text(encoding="utf-8"))
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    pairs = [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]
    last = max(i for i, (keyword, _) in enumerate(pairs) if keyword == "FROM")
    return pairs[last:]


def instruction(keyword: str) -> str:
    found = [args for kw, args in instructions() if kw == keyword]
    assert len(found) == 1, f"the image's last stage has {len(found)} {keyword} instructions"
    return found[0]


def option(argv: list[str], name: str) -> str:
    assert name in argv, f"{argv} has no {name}"
    return argv[argv.index(name) + 1]


def health_url(test: list[str]) -> str:
    """The URL a health check's command asks (CMD exec form)."""
    assert test[0] == "CMD", f"the health check is not in exec form: {test}"
    urls = re.findall(r"https?://[^'\"\s]+", " ".join(test[1:]))
    assert len(urls) == 1, f"the health check asks {urls}"
    return urls[0]


def serve_app(host: str = "0.0.0.0", healthy: bool = True):
    """The app `tmem serve --host HOST` builds with one token, over a service stub (no database:
    /health is answered from the stub's `health`)."""
    state = {"ok": True, "worker": "running"} if healthy else {"ok": False, "worker": "running"}
    service = SimpleNamespace(access=Access.for_bind(host, TOKEN), health=lambda: state)
    return create_app(service, host=host)


@pytest.fixture(scope="module")
def tmem():
    return compose()["services"]["tmem"]


def test_the_service_runs_tmem_serve_on_all_interfaces_on_the_port_it_publishes(tmem):
    argv = tmem["command"]
    assert argv[:2] == ["tmem", "serve"]
    assert option(argv, "--host") == "0.0.0.0"
    port = option(argv, "--port")
    published = [p.rsplit(":", 1)[-1] for p in tmem["ports"]]
    assert published == [port]


def test_the_image_runs_the_same_command_and_exposes_its_port(tmem):
    cmd = json.loads(instruction("CMD"))   # exec form: JSON
    assert cmd == tmem["command"]
    assert instruction("EXPOSE").split() == [option(cmd, "--port")]
    assert "ENTRYPOINT" not in dict(instructions())


def test_the_health_checks_ask_the_served_port_for_a_route_of_the_app(tmem):
    port = option(tmem["command"], "--port")
    compose_url = health_url(tmem["healthcheck"]["test"])
    image_url = health_url(["CMD", *json.loads(instruction("HEALTHCHECK").split("CMD", 1)[1])])
    assert compose_url == image_url == f"http://127.0.0.1:{port}/health"
    app = serve_app().app   # the FastAPI app behind the Gate
    assert any(getattr(r, "path", None) == "/health" and "GET" in r.methods for r in app.routes)


def test_health_answers_without_a_token_and_nothing_else_does():
    # as the container's check calls it: the server bound beyond loopback, with a token
    client = TestClient(serve_app(), base_url="http://127.0.0.1:8765")
    health = client.get("/health")
    assert health.status_code == 200 and health.json() == {"ok": True, "worker": "running"}
    assert client.get("/memories").status_code == 401
    assert client.get("/openapi.json").status_code == 401
    down = TestClient(serve_app(healthy=False), base_url="http://127.0.0.1:8765").get("/health")
    assert down.status_code == 503   # urlopen raises on it: the check fails


def test_the_service_reaches_the_neo4j_service_once_it_is_healthy_and_its_schema_applied(tmem):
    services = compose()["services"]
    assert tmem["environment"]["NEO4J_URI"] == "bolt://neo4j:7687"
    assert "neo4j" in services and "7687" in " ".join(services["neo4j"]["ports"])
    assert tmem["depends_on"]["neo4j"]["condition"] == "service_healthy"
    schema = services["tmem-schema"]
    assert schema["command"] == ["tmem", "schema", "apply"]
    assert schema["environment"] == tmem["environment"] and schema["image"] == tmem["image"]
    assert schema["depends_on"]["neo4j"]["condition"] == "service_healthy"
    assert tmem["depends_on"]["tmem-schema"]["condition"] == "service_completed_successfully"
    assert tmem["restart"] == "unless-stopped"


def test_the_service_needs_a_token_and_keeps_its_data_in_the_image_s_volume(tmem):
    # bound beyond loopback, `tmem serve` refuses to start without one
    assert tmem["environment"]["TMEM_SERVE_TOKEN"] == "${TMEM_SERVE_TOKEN:-}"
    env = dict(pair.split("=", 1) for pair in shlex.split(instruction("ENV")))
    home = env["TMEM_HOME"]
    assert any(v.endswith(f":{home}") for v in tmem["volumes"])
    assert instruction("VOLUME") == home
    user = instruction("USER").split(":")[0]
    assert user not in ("root", "0")


def test_the_tokens_override_serves_the_mounted_file_and_no_token_beside_it(tmem):
    override = compose("compose.tokens.yaml")["services"]["tmem"]
    argv = override["command"]
    assert argv[:len(tmem["command"])] == tmem["command"]
    mounted = option(argv, "--tokens")
    assert any(v.rsplit(":", 2)[1:] == [mounted, "ro"] for v in override["volumes"])
    assert override["environment"]["TMEM_SERVE_TOKEN"] == ""


def test_the_neo4j_service_merges_its_vector_index_segments_as_the_local_server_does():
    """The image reads NEO4J_a_b__c=v as the setting a.b_c=v: the vector index settings of
    `tmem db start` (LocalServer) reach the container's Neo4j with the same values."""
    from tmem_graph.local.neo4j import LocalServer

    settings = {name[len("NEO4J_"):].replace("__", "\0").replace("_", ".").replace("\0", "_"): str(value)
                for name, value in compose()["services"]["neo4j"]["environment"].items()}
    assert settings["internal.dbms.index.vector.post_population_compaction"] == LocalServer.vector_compaction
    assert settings["internal.dbms.index.vector.standard_merge_factor"] == str(LocalServer.vector_merge_factor)
