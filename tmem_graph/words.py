"""Content words: what two texts share besides function words, the unit every lexical check
(construction's repairs, the construction metrics, the answer's citations) counts in."""

from __future__ import annotations

import re

# English function words and chat fillers: what two texts share besides these is their content
STOP = frozenset("""
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing done down during each even ever few for from
further get gets got had has have having he her here hers herself him himself his how i if in into
is it its itself just let like lot me more most much my myself no nor not now of off oh ok okay on
once one only or other our ours ourselves out over own really same she should so some such than
that the their theirs them themselves then there these they thing things this those through to too
under until up us very was way we well were what when where which while who whom why will with
would yeah yes you your yours yourself yourselves 's 're 've 'll 'd 'm
""".split())

def content_words(text: str | None) -> set[str]:
    """Lower-cased words of `text` without function words, a plural `s` folded (`dogs` → `dog`)."""
    out = set()
    for w in re.findall(r"[a-z0-9]+", (text or "").lower()):
        if w in STOP or len(w) < 2:
            continue
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def share_in(text: str | None, other: str | None) -> float:
    """The share of `text`'s content words found in `other` (0 when `text` has none)."""
    words = content_words(text)
    return len(words & content_words(other)) / len(words) if words else 0.0
