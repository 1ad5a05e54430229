"""Who may call a server and what each caller may do: one token (`TMEM_SERVE_TOKEN`, with the
server's `--memories` patterns), each token with its memory patterns and read or read-write
access. Tokens are kept as sha256 digests; a presented token is hashed and compared with every
digest in constant time.
"""

from __future__ import annotations

import fnmatch
import hashlib
import hmac
from dataclasses import dataclass
from typing import Iterable

from ..errors import ConfigError

LOOPBACK = ("127.0.0.1", "localhost", "::1")
MIN_TOKEN_CHARS = 16
CALLER = "tmem.caller"   # the key of the ASGI scope where the HTTP gate leaves the caller's Scope


@dataclass(frozen=True)
class Scope:
    """What one caller may do: see the memories whose ids match `patterns` (shell patterns;
    empty: every memory) and, with `write`, change them. `name` is for the server's log only."""
    patterns: tuple[str, ...] = ()
    write: bool = True
    name: str = ""

    def allows(self, memory_id: str) -> bool:
        return not self.patterns or any(fnmatch.fnmatchcase(memory_id, p) for p in self.patterns)


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
        if token is None and host not in LOOPBACK:
            raise ConfigError(f"refusing to serve on {host} without a token: set TMEM_SERVE_TOKEN "
                              "(or --token-file) to a secret of 16 characters or more, or bind 127.0.0.1")
        scope = Scope(tuple(patterns))
        return Access(((_digest(token), scope),)) if token else Access(anonymous=scope)


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()
