"""Lexical checks that construction repairs and the construction metrics share, so that what a
build drops and what `tmem eval construction` counts are decided by the same rule."""

from __future__ import annotations

import re
from collections.abc import Iterable

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

COPY_SHARE = 0.6  # a trigger whose content words are this much its host's text restates it


def content_words(text: str | None) -> set[str]:
    """Lower-cased words of `text` without function words, a plural `s` folded (`dogs` → `dog`)."""
    out = set()
    for w in re.findall(r"[a-z0-9]+", (text or "").lower()):
        if w in STOP or len(w) < 2:
            continue
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def without_names(text: str, names: Iterable[str]) -> str:
    """`text` without the speakers' `names` (each whole, with its possessive `'s`): what a line
    of a conversation between the same few people is about, once who is talking is set aside."""
    parts = [re.escape(n.strip()) for n in names if n and n.strip()]
    if not parts:
        return text
    pattern = r"(?<!\w)(?:" + "|".join(sorted(parts, key=len, reverse=True)) + r")(?:['’ʼ]s)?(?!\w)"
    return " ".join(re.sub(pattern, " ", text, flags=re.IGNORECASE).split())


def share_in(text: str | None, other: str | None) -> float:
    """The share of `text`'s content words found in `other` (0 when `text` has none)."""
    words = content_words(text)
    return len(words & content_words(other)) / len(words) if words else 0.0


def copies(text: str | None, host: str | None, threshold: float = COPY_SHARE) -> bool:
    """Whether a trigger's `text` restates its host's text instead of naming another situation."""
    return bool(content_words(text)) and share_in(text, host) >= threshold


# first- and second-person words: a persona sentence holding one is a line of the dialogue
FIRST_SECOND_PERSON = frozenset("me my mine myself you your yours yourself yourselves we our ours ourselves us".split())


def in_dialogue_voice(text: str) -> bool:
    """Whether a sentence reads as a line of the conversation rather than a statement about a
    speaker: a question, a line under a speaker's name ("Ben: Fair enough."), or words in the
    first or second person ("I'm still looking into counseling jobs.", "Your drive to help is
    awesome!"). The 1.5B model copies such lines into a persona verbatim, where a turn that
    says them supports them word for word. "I" counts only
    as a capital standing alone or before an apostrophe (not "i.e." nor "World War I."), a word
    in capitals is an abbreviation ("US", "MY"), and one before a hyphen a prefix ("us-based").
    Still read as the dialogue's: "type I diabetes", a title such as "Me Before You"; a persona
    loses such a sentence, not a fact it cannot say otherwise."""
    if text.rstrip().endswith("?") or re.match(r"\s*[A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*)?:\s", text):
        return True   # a question, or a transcript line under its speaker's name ("Ben: Fair enough.")
    for m in re.finditer(r"[A-Za-z]+(?:['’][A-Za-z]+)?", text):
        word, after = m.group(0), text[m.end():m.end() + 1]
        head = re.split(r"['’]", word)[0]
        if head == "I" and (word != "I" or after != "."):
            return True
        if head.lower() in FIRST_SECOND_PERSON and not (head.isupper() and len(head) > 1) and after != "-":
            return True
    return False


def about_another(text: str, speaker: str, names: list[str]) -> bool:
    """Whether a persona sentence of `speaker` has another of the conversation's speakers as its
    subject ("Ben asked for photos of the market." in Ana's profile): it opens with that name,
    not followed by "'s" ("Ben's sister Clara ..." may still be about the speaker), and not with
    the speaker's own name first."""
    for name in names:
        if name != speaker and re.match(rf"\s*{re.escape(name)}\b(?!['’]s)", text) \
                and not re.match(rf"\s*{re.escape(speaker)}\b", text):
            return True
    return False


SUPPORT_COSINE = 0.65  # a turn this close to a statement about its speaker supports it
SUPPORT_SHARE = 0.6    # ... as does a turn holding this share of the statement's content words


def supports(statement: str, turn_text: str, cosine: float, names: list[str] = ()) -> bool:
    """Whether a turn supports a statement about its speaker: close to it in meaning
    (`cosine`, the encoder's), or holding half its content words (speakers' names aside,
    since a turn rarely names its own speaker). A statement that shares no word with the
    turn is never supported by it."""
    words = content_words(statement) - {w for n in names for w in content_words(n)}
    shared = words & content_words(turn_text)
    return bool(shared) and (cosine >= SUPPORT_COSINE or len(shared) >= SUPPORT_SHARE * len(words))
