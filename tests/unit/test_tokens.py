"""The service's tokens file (docs/service.md, "Tokens") and what `Access` makes of a presented
token; nothing runs but the parser."""

import hashlib
import re
from pathlib import Path

import pytest

from tmem_graph.errors import ConfigError
from tmem_graph.serve.access import Access, read_tokens

DOCS = Path(__file__).parents[2] / "docs" / "service.md"
TEAM, DEMO = "team-token-of-enough-length", "demo-token-of-enough-length"
TABLE_A = '[tokens.a]\ntoken = "x-token-of-enough-length"\n'   # the start of a token's table


def tokens_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tokens.toml"
    path.write_text(text, encoding="utf-8")
    return path


def two_tokens(tmp_path: Path) -> Access:
    return read_tokens(tokens_file(tmp_path, f"""
[tokens.team]
sha256 = "{hashlib.sha256(TEAM.encode()).hexdigest()}"
memories = ["team-*"]
access = "read-write"

[tokens.demo]
token = "{DEMO}"
memories = ["demo-*", "shared"]
access = "read"
"""))


def test_each_token_finds_its_own_scope_and_no_other(tmp_path):
    access = two_tokens(tmp_path)
    team, demo = access.caller(TEAM.encode()), access.caller(DEMO.encode())
    assert (team.name, team.patterns, team.write) == ("team", ("team-*",), True)
    assert (demo.name, demo.patterns, demo.write) == ("demo", ("demo-*", "shared"), False)
    assert team.allows("team-1") and not team.allows("demo-1") and not team.allows("shared")
    assert demo.allows("demo-1") and demo.allows("shared") and not demo.allows("team-1")
    digest = hashlib.sha256(TEAM.encode()).hexdigest().encode()
    for wrong in (None, b"", TEAM[:-1].encode(), TEAM.encode() + b"x", digest):
        assert access.caller(wrong) is None, wrong   # not a prefix, not the digest itself
    assert access.allows("team-1") and access.allows("shared") and not access.allows("other")   # the worker's


def test_the_example_of_the_docs_is_a_valid_tokens_file(tmp_path):
    # the file the guide writes with a heredoc, its first token's digest worked out by the shell there
    example = re.search(r"cat > tokens.toml <<EOF\n(.*?)\nEOF", DOCS.read_text(encoding="utf-8"), re.S).group(1)
    example = re.sub(r'"\$\(printf.*\)"', '"' + hashlib.sha256(b"some-token-of-the-team").hexdigest() + '"', example)
    assert "$" not in example
    access = read_tokens(tokens_file(tmp_path, example))
    assert [(s.name, s.write) for s in access.scopes] == [("team-app", True), ("demo-viewer", False)]
    assert access.caller(b"the-token-itself-of-16-characters-or-more").name == "demo-viewer"


@pytest.mark.parametrize("text, problem", [
    ("[tokens.a\n", "not a TOML file (Expected ']' at the end of a table declaration"),
    ("", "no token: the file needs at least one [tokens.NAME] table"),
    ("[token.a]\n", "unknown key 'token' (the file holds [tokens.NAME] tables)"),
    ("[tokens]\na = 1\n", "tokens.a: a table expected"),
    (TABLE_A + 'memories = ["*"]\naccess = "read"\nmemory = "x"\n',
     "tokens.a: unknown key 'memory' (it takes access, memories, sha256, token)"),
    ('[tokens.a]\nmemories = ["*"]\naccess = "read"\n', "tokens.a: give the token's sha256"),
    (TABLE_A + 'sha256 = "00"\nmemories = ["*"]\naccess = "read"\n',
     "tokens.a: give the token's sha256 (its hex digest) or the token itself, one of the two"),
    ('[tokens.a]\nsha256 = "abc"\nmemories = ["*"]\naccess = "read"\n',
     "tokens.a: sha256 must be 64 hexadecimal digits"),
    ('[tokens.a]\ntoken = "short"\nmemories = ["*"]\naccess = "read"\n',
     "tokens.a: token must be a string of 16 characters or more"),
    (TABLE_A + 'access = "read"\n', "tokens.a: memories must be a list"),
    (TABLE_A + 'memories = []\naccess = "read"\n', "tokens.a: memories must"),
    (TABLE_A + 'memories = "team-*"\naccess = "read"\n', "tokens.a: memories must"),
    (TABLE_A + 'memories = ["*"]\naccess = "write"\n',
     "tokens.a: access must be \"read\" or \"read-write\", not 'write'"),
    (TABLE_A + 'memories = ["*"]\n', "tokens.a: access must be"),
    (TABLE_A + 'memories = ["*"]\naccess = "read"\n[tokens.b]\nmemories = ["*"]\naccess = "read"\n'
     f'sha256 = "{hashlib.sha256(b"x-token-of-enough-length").hexdigest()}"\n',
     "tokens.b: the same token as tokens.a"),
])
def test_a_bad_file_is_one_line_naming_the_file_and_the_problem(tmp_path, text, problem):
    path = tokens_file(tmp_path, text)
    with pytest.raises(ConfigError) as error:
        read_tokens(path)
    assert str(error.value).startswith(f"{path}: {problem}") and "\n" not in str(error.value)


def test_a_missing_or_unreadable_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match=re.escape(f"{tmp_path / 'nope.toml'}: cannot read the tokens file (No such")):
        read_tokens(tmp_path / "nope.toml")
    path = tokens_file(tmp_path, "")
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(ConfigError, match=re.escape(f"{path}: not a TOML file")):
        read_tokens(path)


def test_one_token_or_none_as_before():
    one = Access.for_bind("0.0.0.0", "a-single-token-of-length", ["svc-*"])
    assert one.caller(b"a-single-token-of-length").patterns == ("svc-*",) and one.caller(b"other") is None
    assert one.caller(None) is None and one.caller(b"a-single-token-of-length").write
    loopback = Access.for_bind("127.0.0.1", None, ["svc-*"])
    assert loopback.caller(None).patterns == ("svc-*",) and loopback.caller(b"anything").write
    with pytest.raises(ConfigError, match="refusing to serve on 0.0.0.0 without a token"):
        Access.for_bind("0.0.0.0", None)
    with pytest.raises(ConfigError, match="at least 16 characters"):
        Access.for_bind("127.0.0.1", "short")
