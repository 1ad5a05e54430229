"""Who may call a server and what each caller may do: one token (`TMEM_SERVE_TOKEN`, with the
server's `--memories` patterns) or a tokens file (`tmem serve --tokens`), each token with its
own memory patterns and read or read-write access (docs/service.md, "Tokens").

Tokens are kept as sha256 digests, so a tokens file may hold the digests instead of the
secrets; a presented token is hashed and compared with every digest in constant time.
"""

from __future__ import annotations

import fnmatch
import hashlib
import hmac
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..errors import ConfigError

LOOPBACK = ("127.0.0.1", "localhost", "::1")
MIN_TOKEN_CHARS = 16
CALLER = "tmem.caller"   # the key of the ASGI scope where the HTTP gate leaves the caller's Scope
TOKEN_KEYS = {"sha256", "token", "memories", "access"}
ACCESS = {"read": False, "read-write": True}


@dataclass(frozen=True)
class Scope:
    """What one caller may do: see the memories whose ids match `patterns` (shell patterns;
    empty: every memory) and, with `write`, change them. `name` is for the server's log only."""
    patterns: tuple[str, ...] = ()
    write: bool = True
    name: str = ""

    def allows(self, memory_id: str) -> bool:
        return not self.patterns or any(fnmatch.fnmatchcase(memory_id, p) for p in self.patterns)

    def describe(self) -> str:
        return f"{self.name} ({'read-write' if self.write else 'read'}: {', '.join(self.patterns) or '*'})"


@dataclass(frozen=True)
class Access:
    """The callers of one server: with `tokens` (each token's sha256 digest and its Scope) a
    request must carry one of them; without, every caller has `anonymous` (loopback or stdio)."""
    tokens: tuple[tuple[bytes, Scope], ...] = ()
    anonymous: Scope | None = None

    def caller(self, bearer: bytes | None) -> Scope | None:
        """The scope of whoever presents `bearer` (None: refused). Every digest is compared, each
        in constant time, so how long it takes says nothing of which token matched, or how nearly."""
        if self.anonymous is not None:
            return self.anonymous
        if not bearer:
            return None
        digest, found = hashlib.sha256(bearer).digest(), None
        for known, scope in self.tokens:
            if hmac.compare_digest(digest, known):
                found = scope
        return found

    def allows(self, memory_id: str) -> bool:
        """Whether any caller may see `memory_id`: what the server's build worker builds."""
        return any(scope.allows(memory_id) for scope in self.scopes)

    @property
    def scopes(self) -> list[Scope]:
        return [scope for _, scope in self.tokens] or [self.anonymous]

    @staticmethod
    def for_bind(host: str, token: str | None, patterns: Iterable[str] = ()) -> "Access":
        """The access of a server bound to `host` with one token (or none, on loopback only)."""
        if token is not None and len(token) < MIN_TOKEN_CHARS:
            raise ConfigError(f"the service token must be at least {MIN_TOKEN_CHARS} characters long")
        if token is not None and (problem := unsendable(token)):
            raise ConfigError(f"the service token {problem}")
        if token is None and host not in LOOPBACK:
            raise ConfigError(f"refusing to serve on {host} without a token: set TMEM_SERVE_TOKEN "
                              "(or --token-file, or --tokens) to a secret of 16 characters or more, or bind 127.0.0.1")
        scope = Scope(tuple(patterns))
        return Access(((_digest(token), scope),)) if token else Access(anonymous=scope)


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def read_tokens(path: Path) -> Access:
    """The access a tokens file describes; a ConfigError naming the file and its first problem
    when it cannot be used (the server then refuses to start)."""
    try:
        with path.open("rb") as f:
            data = tomllib.load(f)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the tokens file ({exc.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not a TOML file ({exc})") from None
    try:
        return Access(tuple(_tokens(data)))
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def _tokens(data: dict) -> Iterable[tuple[bytes, Scope]]:
    """Each [tokens.NAME] table as (digest, Scope); a ValueError for the first problem."""
    extra = sorted(set(data) - {"tokens"})
    if extra:
        raise ValueError(f"unknown key {extra[0]!r} (the file holds [tokens.NAME] tables)")
    tokens = data.get("tokens")
    if not isinstance(tokens, dict) or not tokens:
        raise ValueError("no token: the file needs at least one [tokens.NAME] table")
    seen: dict[bytes, str] = {}
    for name, entry in tokens.items():
        where = f"tokens.{name}"
        if not isinstance(entry, dict):
            raise ValueError(f"{where}: a table expected ([tokens.{name}] with memories, access and sha256 or token)")
        unknown = sorted(set(entry) - TOKEN_KEYS)
        if unknown:
            raise ValueError(f"{where}: unknown key {unknown[0]!r} (it takes {', '.join(sorted(TOKEN_KEYS))})")
        digest = _secret(where, entry)
        if digest in seen:
            raise ValueError(f"{where}: the same token as tokens.{seen[digest]}")
        seen[digest] = name
        patterns = entry.get("memories")
        if (not isinstance(patterns, list) or not patterns
                or not all(isinstance(p, str) and p for p in patterns)):
            raise ValueError(f"{where}: memories must be a list of memory id patterns, e.g. [\"team-*\"] "
                             "([\"*\"] for every memory)")
        access = entry.get("access")
        if access not in ACCESS:
            raise ValueError(f"{where}: access must be \"read\" or \"read-write\", not {access!r}")
        yield digest, Scope(tuple(patterns), ACCESS[access], name)


def _secret(where: str, entry: dict) -> bytes:
    """The digest of a token given as `sha256` (its hex digest) or `token` (the secret itself)."""
    if ("sha256" in entry) == ("token" in entry):
        raise ValueError(f"{where}: give the token's sha256 (its hex digest) or the token itself, one of the two")
    if "sha256" in entry:
        value = entry["sha256"]
        if not isinstance(value, str) or not re.fullmatch(r"[0-9a-fA-F]{64}", value):
            raise ValueError(f"{where}: sha256 must be 64 hexadecimal digits (printf %s \"$TOKEN\" | sha256sum)")
        return bytes.fromhex(value)
    value = entry["token"]
    if not isinstance(value, str) or len(value) < MIN_TOKEN_CHARS:
        raise ValueError(f"{where}: token must be a string of {MIN_TOKEN_CHARS} characters or more")
    if problem := unsendable(value):
        raise ValueError(f"{where}: token {problem}")
    return _digest(value)


def unsendable(token: str) -> str | None:
    """Why no request can present `token` (the gate strips what follows `Bearer`; a header holds
    no control character), or None."""
    if token != token.strip():
        return "has spaces around it, which no request can send"
    if not token.isprintable():
        return "holds a control character, which no request can send"
    return None
