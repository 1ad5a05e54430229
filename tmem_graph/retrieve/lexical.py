"""BM25 on each memory's own statistics, kept in the database with the memory
(shared/docs/design.md, "Retrieval").

Neo4j's full-text index keeps its statistics (document frequencies, average field lengths)
for the whole index, so a memory's BM25 ranking would move when another memory is imported and
a caller could tell whether other memories use a word (docs/design-and-evidence.md).
So every object's texts are analysed here, as Lucene's `english` analyzer does (words,
possessives dropped, its stop words, the Porter stemmer), when it is written: it links to one
`:Term` node of its memory per distinct term of each field (`HAS_TERM {tf}`), whose degree is
the term's document frequency in that memory, and to one per field, whose degree counts the
objects with text there and whose `total` sums their lengths (`term_rows`, `store/terms_write`).
A recall asks the full-text index for candidates within the memory and scores them exactly
with those statistics in Cypher (`retrieve/rankings`); this process keeps a few numbers per
memory version (`Statistics`), never the memory's texts. `Bm25` ranks texts held in Python:
the turns no scene holds yet, on their own statistics, and tests' reference rankings.
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

# Lucene's English stop words (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET)
STOP = frozenset("a an and are as at be but by for if in into is it no not of on or such that the their then "
                 "there these they this to was will with".split())
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_STEMMER = snowballstemmer.stemmer("porter")   # what Lucene's PorterStemFilter implements
_STEM_LOCK = threading.Lock()                  # a snowball stemmer keeps state between calls
MAX_TERMS = 64      # a query's distinct terms beyond these are not searched (as the Lucene path did)
K1, B = 1.2, 0.75   # Lucene's BM25Similarity defaults
COUNTED_TEXTS = 8192   # texts whose analysis is kept (`counted`)
CACHE_MEMORIES = 10_000   # memories whose Statistics a process keeps before forgetting the least recently used


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


_LUCENE_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')


def joined(parts: dict) -> str | None:
    """The full-text query of `lucene_parts` with every word, for the objects of one kind of one
    memory (their `ft_scope` token) that share a word with the text in one of the fields (boosted
    as the BM25 ranking weighs them): `+ft_scope:<scope> +(title:(w1 w2)^3 …)`; None when the
    text has no words. retrieve/rankings builds the same query without the common words."""
    if not parts["words"]:
        return None
    body = " ".join(w["text"] for w in parts["words"])
    return parts["scope"] + " +(" + " ".join(c["open"] + body + c["close"] for c in parts["clauses"]) + ")"


def lucene_parts(scope: str, fields: dict[str, float], text: str, terms: list[str]) -> dict:
    """The pieces of a full-text query (`joined`): `scope` ("+ft_scope:<scope>"), `clauses` (per
    field, what opens and closes its list of words: "title:(" and ")^3"), `words` (each word of
    `text`, lower-cased, so AND, OR and NOT are never operators, and escaped, at most MAX_TERMS,
    with the place in `terms` of the term it analyses to, -1 when none: a stop word); the index
    analyses them as it analysed the texts."""
    words = list(dict.fromkeys(w for w in _WORD.findall((text or "").lower())))[:MAX_TERMS]
    place = {term: n for n, term in enumerate(terms)}
    return {"scope": f"+ft_scope:{scope}",
            "clauses": [{"open": f"{field}:(", "close": ")" + (f"^{boost:g}" if boost != 1 else "")}
                        for field, boost in fields.items()],
            "words": [{"text": _LUCENE_SPECIAL.sub(r"\\\1", w), "term": place.get(next(iter(analyse(w)), None), -1)}
                      for w in words]}


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


# the fields of each kind and their boosts (the title weighs most: it names what the object is about)
KINDS = {
    "topic": {"title": 2.0, "keywords_text": 1.0, "summary": 1.0},
    "scene": {"title": 3.0, "summary": 2.0, "narrative": 1.0, "text": 1.0},
    "item": {"text": 1.0},
    "turn": {"text": 1.0},
}
LABELS = {"topic": "Topic", "scene": "Scene", "item": "Item", "turn": "Turn"}
# the vector indexes recall searches; the trigger views are counted per family under the key
# "vec|trigger_embedding|<family>" (the name of the one index that held them all, kept so that stored
# counts stay valid; each family now has its own index: store/graph.py VECTOR_INDEXES)
VECTOR_INDEXES = ("topic_embedding", "scene_embedding", "scene_dialogue_embedding", "scene_horizon_embedding",
                  "item_embedding", "turn_embedding")
TRIGGER_FAMILIES = ("item", "scene", "horizon")


def term_key(kind: str, field: str, term: str = "") -> str:
    """The key of a memory's `:Term` node: a term of one field of one kind ("scene|title|allergi"),
    or with no term the field itself ("scene|title|": every object with text in that field links
    to it, with its length)."""
    return f"{kind}|{field}|{term}"


def vector_key(index: str) -> str:
    """The key of the `:Term` node every object in a vector index links to ("vec|item_embedding|",
    "vec|trigger_embedding|horizon"): its degree is how many entries the index holds for the memory."""
    return f"vec|{index}|"


def term_rows(kind: str, docs: Iterable[tuple[str, dict]]) -> list[dict]:
    """The rows of `store/terms_write` for objects of `kind`: each object's distinct terms per
    field with their counts (`keys`, `tfs`), the field itself with its length (the counts summed),
    its lengths in the order of `KINDS` (`lens`), and its terms with their counts as one string
    (`lex`, read by `lex_probe`)."""
    rows = []
    for key, fields in docs:
        keys, tfs, lens, lex = [], [], [], []
        for field in KINDS[kind]:
            terms = counted(fields.get(field))
            length = sum(tf for _, tf in terms)
            lens.append(length)
            if length:
                keys.append(term_key(kind, field))
                tfs.append(length)
                for term, tf in terms:
                    keys.append(term_key(kind, field, term))
                    tfs.append(tf)
                    lex.append(f"{field}|{term}:{tf}")
        rows.append({"id": key, "keys": keys, "tfs": tfs, "lens": lens, "lex": " " + " ".join(lex) + " "})
    return rows


def link_rows(ids: Iterable[str]) -> list[dict]:
    """The rows of `store/terms_write` for objects that have no text BM25 ranks (trigger views):
    linked to the vector index they are in alone."""
    return [{"id": key, "keys": [], "tfs": [], "lens": [], "lex": None} for key in ids]


def lex_probe(field: str, term: str) -> str:
    """What precedes a term's count in an object's `lex` string (" title|oyster:2 text|ana:1 "):
    the recall reads a candidate's term counts off it, one string search per query term."""
    return f" {field}|{term}:"


def statistics_keys() -> list[str]:
    """The `:Term` keys whose degree (and total) `retrieve/statistics` reads once per version."""
    return ([term_key(kind, field) for kind, boosts in KINDS.items() for field in boosts]
            + [vector_key(i) for i in VECTOR_INDEXES] + [vector_key("trigger_embedding") + f for f in TRIGGER_FAMILIES])


@dataclass
class Statistics:
    """What one version of one memory is ranked by, kept in this process (a few numbers, whatever
    the memory's size): per field of each kind, how many objects have text there (`docs`) and
    their total length; per vector index (and trigger family), how many entries it holds; how many
    turns wait for a scene."""
    version: str
    docs: dict[str, int] = field(default_factory=dict)      # term_key(kind, field) -> objects
    totals: dict[str, int] = field(default_factory=dict)    # term_key(kind, field) -> summed lengths
    counts: dict[str, int] = field(default_factory=dict)    # index or trigger family -> entries
    turn_passages: bool = False   # the memory's every turn has a passage embedding (the turn lane)
    pending: int = 0              # turns waiting for a scene (in the turn index too)

    def held(self, index: str) -> int:
        """How many entries `index` (or a trigger family) holds for the memory."""
        return self.counts.get(index, 0)

    def depth(self, index: str, wanted: int) -> int:
        """How deep a vector ranking of `index` (or trigger family) goes: what is wanted, at
        most what the memory holds (0: none)."""
        return min(wanted, self.held(index))

    def fields(self, kind: str) -> list[dict]:
        """The `fields` of a BM25 ranking's parameters: each field's boost, its objects and their
        mean length on this memory (`retrieve/rankings`)."""
        out = []
        for name, boost in KINDS[kind].items():
            key = term_key(kind, name)
            docs = self.docs.get(key, 0)
            out.append({"boost": boost, "docs": docs, "avg": self.totals.get(key, 0) / docs if docs else 1.0})
        return out



def build(row: dict) -> Statistics:
    """A memory's Statistics from the columns of `retrieve/statistics`."""
    docs, totals, counts = {}, {}, {}
    for key, degree, total in row["terms_held"]:
        if key.startswith("vec|"):
            index, family = key.split("|")[1:3]
            counts[family or index] = int(degree or 0)
        else:
            docs[key], totals[key] = int(degree or 0), int(total or 0)
    return Statistics(row["version"], docs, totals, counts, bool(row.get("turn_passages")),
                      int(row.get("pending") or 0))


class StatisticsCache:
    """The Statistics this process has loaded, one version per memory, least recently used
    forgotten first once there are more than `limit` of them."""

    def __init__(self, limit: int = CACHE_MEMORIES):
        self.limit = limit
        self._held: OrderedDict[tuple[str, str], Statistics] = OrderedDict()
        self._lock = threading.Lock()
        self._loading: dict[tuple[str, str], list] = {}   # a lock per memory being loaded, and its users

    @contextmanager
    def loading(self, where: str, memory_id: str) -> Iterator[None]:
        """Held while one memory's Statistics is loaded: recalls that miss the cache at once load it
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

    def get(self, where: str, memory_id: str) -> Statistics | None:
        with self._lock:
            found = self._held.get((where, memory_id))
            if found is not None:
                self._held.move_to_end((where, memory_id))
            return found

    def put(self, where: str, memory_id: str, stats: Statistics) -> None:
        with self._lock:
            self._held[(where, memory_id)] = stats
            self._held.move_to_end((where, memory_id))
            while len(self._held) > self.limit:
                self._held.popitem(last=False)

    def drop(self, where: str, memory_id: str) -> None:
        with self._lock:
            self._held.pop((where, memory_id), None)


CACHE = StatisticsCache()
