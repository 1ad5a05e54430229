"""Exact vector rankings over one memory's own embeddings (docs/retrieval.md, "Exact vector
rankings").

Neo4j's vector indexes are approximate (HNSW), and one index holds every memory of a database:
a search filtered to one memory walks a graph built over all of them, so which of a memory's
near neighbours it returns moved when another memory was imported, and two imports of one
memory ranked near ties differently. Here each memory's embeddings are held in this process
beside its BM25 statistics, for the version of the memory they were read at (`Lexicon`), and
every ranking is the exact cosine over that memory alone: what a recall returns depends on the
memory and the query, nothing else. Scores are Neo4j's cosine mapped to [0, 1], (1 + cos) / 2,
as its vector indexes and `vector.similarity.cosine` give them; equal scores keep the order of
the rows (by id, as the queries' `ORDER BY score DESC, id` did).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

EMBEDDING_UNIT = 384 * 4   # bytes: one all-MiniLM-L6-v2 embedding as float32


@dataclass(frozen=True)
class Shelf:
    """One kind of a memory's embeddings: a key per row (in tie order) and the unit vectors."""
    keys: list[tuple]
    unit: np.ndarray

    @classmethod
    def of(cls, rows: list[list], dim: int | None = None) -> "Shelf":
        """A shelf of `[key…, embedding]` rows, sorted by key (a null key before any value). A
        row whose embedding is not `dim` numbers (None: the first row's count) or has no cosine
        with anything (all zeros, a NaN or an infinity) is left out, as Neo4j's vector indexes
        leave such a node out: it is ranked nowhere, and nothing fails."""
        if dim is None and rows:
            dim = len(rows[0][-1])
        # a property list holds one type, so its first value tells whether it holds numbers
        rows = [r for r in rows if isinstance(r[-1], list) and len(r[-1]) == dim and dim
                and isinstance(r[-1][0], (int, float)) and not isinstance(r[-1][0], bool)]
        if not rows:
            return cls([], np.zeros((0, 0), dtype=np.float32))
        rows = sorted(rows, key=lambda r: tuple((v is not None, v) for v in r[:-1]))
        unit = np.asarray([r[-1] for r in rows], dtype=np.float32)
        norms = np.linalg.norm(unit, axis=1)
        usable = np.isfinite(norms) & (norms > 0)   # a NaN or an infinity makes the norm so too
        if not usable.all():
            rows, unit, norms = [r for r, ok in zip(rows, usable) if ok], unit[usable], norms[usable]
        return cls([tuple(r[:-1]) for r in rows], unit / norms[:, None])

    def __len__(self) -> int:
        return len(self.keys)

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Every row's score for a unit query vector: (1 + cos) / 2."""
        return (1.0 + self.unit @ query) / 2.0

    def best(self, scores: np.ndarray, k: int) -> np.ndarray:
        """The rows of the `k` highest scores, best first, equal scores in row order."""
        if k <= 0 or not len(self):
            return np.zeros(0, dtype=np.int64)
        return np.argsort(-scores, kind="stable")[:k]


def _unit(vector) -> np.ndarray:
    q = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(q))
    return q / norm if norm > 0 else q


@dataclass(frozen=True)
class Vectors:
    """One version of one memory's embeddings, by the index recall would otherwise search."""
    shelves: dict[str, Shelf]          # topic_embedding, scene_embedding, ..., and a trigger family each
    turn_passages: bool = False        # the memory's every turn has a passage embedding
    _hosts: dict[str, tuple[np.ndarray, list[str]]] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, row: dict) -> "Vectors":
        """The Vectors of the columns of `retrieve/lexicon`."""
        dim = row.get("dim")   # the memory's encoder's; an embedding of another length is left out
        shelves = {"topic_embedding": Shelf.of(row["topic_vectors"], dim),
                   "scene_embedding": Shelf.of(row["scene_vectors"], dim),
                   "scene_dialogue_embedding": Shelf.of(row["dialogue_vectors"], dim),
                   "item_embedding": Shelf.of(row["item_vectors"], dim),
                   "turn_embedding": Shelf.of(row["turn_vectors"], dim)}
        by_family: dict[str, list[list]] = {}
        for family, host, position, channel, embedding in row["trigger_vectors"]:
            # ties in (host, position) order, as the item views' `ORDER BY score DESC, host, position`
            by_family.setdefault(family, []).append([host, position, channel, embedding])
        shelves.update({family: Shelf.of(rows, dim) for family, rows in by_family.items()})
        hosts = {}
        for family, shelf in shelves.items():   # each view's host as an index, for a host's mean
            if family in by_family:
                names = sorted({k[0] for k in shelf.keys})
                where = {h: n for n, h in enumerate(names)}
                hosts[family] = (np.asarray([where[k[0]] for k in shelf.keys], dtype=np.int64), names)
        return cls(shelves, bool(row.get("turn_passages")), hosts)

    def held(self, index: str) -> int:
        """How many embeddings `index` (or a trigger family) holds for the memory."""
        shelf = self.shelves.get(index)
        return 0 if shelf is None else len(shelf)

    @property
    def size(self) -> int:
        """The embeddings held, each counted as its bytes over `EMBEDDING_UNIT` (a 384-dimension
        float32 embedding counts one, a 768-dimension one two): what a cache limits."""
        return sum(s.unit.nbytes for s in self.shelves.values()) // EMBEDDING_UNIT

    def nearest(self, index: str, vector, k: int) -> list[tuple[str, float]]:
        """The `k` nodes of `index` nearest `vector`: (id, score), best first."""
        shelf = self.shelves.get(index)
        if shelf is None or k <= 0 or not len(shelf):
            return []
        scores = shelf.scores(_unit(vector))
        return [(shelf.keys[n][0], float(scores[n])) for n in shelf.best(scores, k)]

    def turns(self, vector, k: int) -> tuple[list[tuple[str, float]], list[str]]:
        """The `k` scene-held turns nearest `vector` by their passage embedding, (id, score) best
        first, and the scene holding each."""
        shelf = self.shelves.get("turn_embedding")
        if shelf is None or k <= 0 or not len(shelf) or not self.turn_passages:
            return [], []
        scores = shelf.scores(_unit(vector))
        rows = shelf.best(scores, k)
        return [(shelf.keys[n][0], float(scores[n])) for n in rows], [shelf.keys[n][1] for n in rows]

    def views(self, family: str, vector, k: int) -> list[tuple[tuple, float]]:
        """The `k` trigger views of `family` nearest `vector`: ((host, position, channel), score)."""
        shelf = self.shelves.get(family)
        if shelf is None or k <= 0 or not len(shelf):
            return []
        scores = shelf.scores(_unit(vector))
        return [(shelf.keys[n], float(scores[n])) for n in shelf.best(scores, k)]

    def hosts(self, family: str, vector, k: int, mean: bool) -> list[tuple[str, float]]:
        """The hosts of the `k` views of `family` nearest `vector`, each scored by its best view,
        or with `mean` by the mean of all its views; best first, equal scores by host."""
        shelf = self.shelves.get(family)
        if shelf is None or k <= 0 or not len(shelf):
            return []
        scores = shelf.scores(_unit(vector))
        reached = {shelf.keys[n][0] for n in shelf.best(scores, k)}
        host_of, names = self._hosts[family]
        count = len(names)
        if mean:
            per_host = np.bincount(host_of, weights=scores, minlength=count) / np.bincount(host_of, minlength=count)
        else:
            per_host = np.full(count, -np.inf)
            np.maximum.at(per_host, host_of, scores)
        return sorted(((h, float(per_host[n])) for n, h in enumerate(names) if h in reached),
                      key=lambda pair: (-pair[1], pair[0]))

    def cosines(self, ids, vector) -> list[tuple[str, float]]:
        """The score of each scene of `ids` that has an embedding, in the order of `ids`."""
        shelf = self.shelves.get("scene_embedding")
        if shelf is None:
            return []
        where = {k[0]: n for n, k in enumerate(shelf.keys)}
        rows = [where[i] for i in dict.fromkeys(ids) if i in where]
        if not rows:
            return []
        scores = (1.0 + shelf.unit[rows] @ _unit(vector)) / 2.0
        return [(shelf.keys[n][0], float(s)) for n, s in zip(rows, scores)]
