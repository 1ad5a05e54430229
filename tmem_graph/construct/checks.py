"""Lexical checks that construction repairs and the construction metrics share, so that what a
build drops and what `tmem eval construction` counts are decided by the same rule."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..words import STOP, content_words, share_in  # noqa: F401 - the words every check counts

COPY_SHARE = 0.6  # a trigger whose content words are this much its host's text restates it


def without_names(text: str, names: Iterable[str]) -> str:
    """`text` without the speakers' `names` (each whole, with its possessive `'s`): what a line
    of a conversation between the same few people is about, once who is talking is set aside."""
    parts = [re.escape(n.strip()) for n in names if n and n.strip()]
    if not parts:
        return text
    pattern = r"(?<!\w)(?:" + "|".join(sorted(parts, key=len, reverse=True)) + r")(?:['’ʼ]s)?(?!\w)"
    return " ".join(re.sub(pattern, " ", text, flags=re.IGNORECASE).split())


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


def invented_numbers(statement: str, source: str) -> set[str]:
    """The numbers written in digits in `statement` that `source` does not hold, in digits or
    as a word ("20" in a sentence about a conversation that never says 20 or twenty)."""
    said = set(re.findall(r"\d+", source)) | {str(n) for w, n in NUMBER_WORDS.items()
                                                 if re.search(rf"\b{w}\b", source, re.IGNORECASE)}
    return set(re.findall(r"\d+", statement)) - said


NUMBER_WORDS = {w: n for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())} | {"thirty": 30, "forty": 40, "fifty": 50, "hundred": 100}


def supports(statement: str, turn_text: str, cosine: float, names: list[str] = ()) -> bool:
    """Whether a turn supports a statement about its speaker: close to it in meaning
    (`cosine`, the encoder's), or holding half its content words (speakers' names aside,
    since a turn rarely names its own speaker). A statement that shares no word with the
    turn is never supported by it."""
    words = content_words(statement) - {w for n in names for w in content_words(n)}
    shared = words & content_words(turn_text)
    return bool(shared) and (cosine >= SUPPORT_COSINE or len(shared) >= SUPPORT_SHARE * len(words))
