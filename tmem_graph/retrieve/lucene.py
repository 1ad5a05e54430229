"""Safe Lucene queries from user text for the shared full-text index."""

from __future__ import annotations

import re

_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')
_WORD = re.compile(r"\w+", re.UNICODE)
MAX_TERMS = 64


def escape(term: str) -> str:
    """Backslash-escape every Lucene metacharacter in `term`."""
    return _SPECIAL.sub(r"\\\1", term)


def terms(text: str) -> list[str]:
    """Distinct lower-cased word tokens of `text` (so AND/OR/NOT are never operators)."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        seen.setdefault(word, None)
        if len(seen) == MAX_TERMS:
            break
    return list(seen)


def scoped_query(scope: str, fields: dict[str, float], text: str) -> str | None:
    """`+ft_scope:<scope> +(field:(t1 t2 …)^boost …)`, or None when `text` has no words."""
    words = terms(text)
    if not words:
        return None
    body = " ".join(escape(w) for w in words)
    clauses = " ".join(f"{field}:({body})" + (f"^{boost:g}" if boost != 1 else "")
                       for field, boost in fields.items())
    return f"+ft_scope:{escape(scope)} +({clauses})"
