"""BM25 whose every statistic comes from one memory (shared/docs/design.md, "Retrieval").

Neo4j's full-text index keeps its statistics (document frequencies, average field lengths)
for the whole index, so a memory's BM25 ranking moved when another memory was imported and a
caller could tell whether other memories used a word (docs/retrieval.md, "Lexical ranking").
Here each memory's topics, scenes, items and turns are analysed in Python, as Lucene's
`english` analyzer does (words, possessives dropped, its stop words, the Porter stemmer), into
one index per kind, kept per process for the memory's version (`LexiconCache`): a recall
ranks with the index of the version it reads, a write makes a new version and the next recall
loads it again.
"""

from __future__ import annotations

import heapq
import math
import re
import threading
from collections import Counter, OrderedDict, defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable, Iterator

import snowballstemmer

from .vectors import Vectors

# Lucene's English stop words (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET)
STOP = frozenset("a an and are as at be but by for if in into is it no not of on or such that the their then "
                 "there these they this to was will with".split())
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_STEMMER = snowballstemmer.stemmer("porter")   # what Lucene's PorterStemFilter implements
_STEM_LOCK = threading.Lock()                  # a snowball stemmer keeps state between calls
MAX_TERMS = 64      # a query's distinct terms beyond these are not searched (as the Lucene path did)
K1, B = 1.2, 0.75   # Lucene's BM25Similarity defaults
COUNTED_TEXTS = 8192   # texts whose analysis is kept (`counted`)
CACHE_DOCS = 500_000  # documents and embeddings (Vectors.size) held per process, all memories, before forgetting


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """The Porter stem of `word`; a word of one or two characters is its own stem, as in Lucene's
    PorterStemmer (Snowball's would stem "s" to nothing and "us" to "u")."""
    if len(word) <= 2:
        return word
    with _STEM_LOCK:
        return _STEMMER.stemWord(word)


def analyse(text: str | None) -> list[str]:
    """The terms of `text`: lower-cased words, a final 's dropped, stop words out, stemmed."""
    out = []
    for word in _WORD.findall((text or "").lower()):
        if word.endswith(("'s", "’s")):
            word = word[:-2]
        word = word.replace("’", "'")
        if word and word not in STOP:
            out.append(stem(word))
    return out


@lru_cache(maxsize=COUNTED_TEXTS)
def counted(text: str | None) -> tuple[tuple[str, int], ...]:
    """The terms of `text` with their counts, in order of first use; kept for the texts every
    recall analyses again (a memory's pending turns, ranked on their own statistics each time)."""
    return tuple(Counter(analyse(text)).items())


def query_terms(text: str) -> list[str]:
    """The distinct terms of a query, in order, at most MAX_TERMS."""
    return list(dict.fromkeys(analyse(text)))[:MAX_TERMS]


class Bm25:
    """BM25 over one kind of object, each field scored on its own statistics and weighted by its
    boost, summed (as a Lucene query of one boosted clause per field)."""

    def __init__(self, docs: Iterable[tuple[str, dict[str, str | None]]], boosts: dict[str, float]):
        self.ids: list[str] = []
        self.boosts = boosts
        self.postings: dict[str, dict[str, list[tuple[int, int]]]] = {f: {} for f in boosts}
        self.lengths: dict[str, list[int]] = {f: [] for f in boosts}
        for n, (key, fields) in enumerate(docs):
            self.ids.append(key)
            for field in boosts:
                terms = counted(fields.get(field))
                self.lengths[field].append(sum(tf for _, tf in terms))
                for term, tf in terms:
                    self.postings[field].setdefault(term, []).append((n, tf))
        self.having = {f: sum(1 for x in v if x) for f, v in self.lengths.items()}   # Lucene's docCount
        self.average = {f: sum(v) / self.having[f] if self.having[f] else 0.0 for f, v in self.lengths.items()}
        # each document's length normalisation per field, computed once here rather than for
        # every hit of every query (only fields with a term have hits, so `average` is not 0)
        self.norms = {f: [K1 * (1 - B + B * n / self.average[f]) if n else 0.0 for n in v]
                      for f, v in self.lengths.items()}

    def __len__(self) -> int:
        return len(self.ids)

    def rank(self, terms: list[str], limit: int | None = None) -> list[tuple[str, float]]:
        """(id, score) of every object matching a term, best first, equal scores by id."""
        scores: defaultdict[int, float] = defaultdict(float)
        for field, boost in self.boosts.items():
            docs, norms, postings = self.having[field], self.norms[field], self.postings[field]
            for term in terms:
                hits = postings.get(term)
                if not hits:
                    continue
                weight = boost * math.log(1 + (docs - len(hits) + 0.5) / (len(hits) + 0.5))   # boost × idf
                for n, tf in hits:
                    scores[n] += weight * tf / (tf + norms[n])
        ids = self.ids
        ranked = ((ids[n], s) for n, s in scores.items())
        return sorted(ranked, key=_best_first) if limit is None else heapq.nsmallest(limit, ranked, key=_best_first)

    def held(self, terms: list[str], field: str = "text") -> float | None:
        """The largest share of the terms' weight that one object holds in `field`: each term
        weighs its IDF on these statistics (a term no object has weighs the most), and an object
        holds the weight of the terms it has, however often. 1.0 when one object has every term,
        0.0 when none has any; None without terms (nothing to hold). How close the nearest object
        is in words, whatever the length of the query or of the object
        (`RetrievalSettings.weak_words`)."""
        if not terms:
            return None
        docs, postings = self.having.get(field, 0), self.postings.get(field, {})
        held: defaultdict[int, float] = defaultdict(float)
        total = 0.0
        for term in dict.fromkeys(terms):
            hits = postings.get(term, ())
            weight = math.log(1 + (docs - len(hits) + 0.5) / (len(hits) + 0.5))
            total += weight
            for n, _ in hits:
                held[n] += weight
        return max(held.values(), default=0.0) / total


def _best_first(pair: tuple[str, float]) -> tuple[float, str]:
    return -pair[1], pair[0]


@dataclass
class Lexicon:
    """One version of one memory as this process ranks it: indexed per kind for BM25 (`KINDS`),
    and its embeddings for the exact vector rankings (`vectors.Vectors`)."""
    version: str
    kinds: dict[str, Bm25]
    vectors: Vectors = field(default_factory=lambda: Vectors({}))

    def depth(self, index: str, wanted: int) -> int:
        """How deep a vector ranking of `index` (or trigger family) goes: what is wanted, at
        most what the memory holds (0: none)."""
        return min(wanted, self.vectors.held(index))

    @property
    def size(self) -> int:
        """Documents and embeddings held (`Vectors.size`): what the cache counts against its limit."""
        return sum(len(b) for b in self.kinds.values()) + self.vectors.size


# the fields of each kind and their boosts (the title weighs most: it names what the object is about)
KINDS = {
    "topic": {"title": 2.0, "keywords_text": 1.0, "summary": 1.0},
    "scene": {"title": 3.0, "summary": 2.0, "narrative": 1.0, "text": 1.0},
    "item": {"text": 1.0},
    "turn": {"text": 1.0},
}


def build(row: dict) -> Lexicon:
    """A memory's Lexicon from the columns of `retrieve/lexicon` (one [id, field values…] list
    per object, fields in the order of `KINDS`, and the embeddings)."""
    kinds = {}
    for kind, boosts in KINDS.items():
        kinds[kind] = Bm25(((r[0], dict(zip(boosts, r[1:]))) for r in row[f"{kind}s"]), boosts)
    return Lexicon(row["version"], kinds, Vectors.of(row))


class LexiconCache:
    """The Lexicons this process has loaded, one version per memory, least recently used forgotten
    first once they hold more than `limit` objects (a memory larger than that is kept alone)."""

    def __init__(self, limit: int = CACHE_DOCS):
        self.limit = limit
        self._held: OrderedDict[tuple[str, str], Lexicon] = OrderedDict()
        self._lock = threading.Lock()
        self._loading: dict[tuple[str, str], list] = {}   # a lock per memory being loaded, and its users

    @contextmanager
    def loading(self, where: str, memory_id: str) -> Iterator[None]:
        """Held while one memory's Lexicon is loaded: recalls that miss the cache at once load it
        one after the other, so the second finds the first's copy instead of loading it again."""
        key = (where, memory_id)
        with self._lock:
            entry = self._loading.setdefault(key, [threading.Lock(), 0])
            entry[1] += 1
        try:
            with entry[0]:
                yield
        finally:
            with self._lock:
                entry[1] -= 1
                if not entry[1]:
                    del self._loading[key]

    def get(self, where: str, memory_id: str) -> Lexicon | None:
        with self._lock:
            found = self._held.get((where, memory_id))
            if found is not None:
                self._held.move_to_end((where, memory_id))
            return found

    def put(self, where: str, memory_id: str, lexicon: Lexicon) -> None:
        with self._lock:
            self._held[(where, memory_id)] = lexicon
            self._held.move_to_end((where, memory_id))
            total = sum(x.size for x in self._held.values())
            while len(self._held) > 1 and total > self.limit:
                _, gone = self._held.popitem(last=False)
                total -= gone.size

    def drop(self, where: str, memory_id: str) -> None:
        with self._lock:
            self._held.pop((where, memory_id), None)


CACHE = LexiconCache()
