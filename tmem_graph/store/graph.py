"""The only door to Neo4j: parameterised queries from `cypher/`, sessions and transactions."""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
import uuid
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any, Callable, Iterator

import neo4j
from neo4j import GraphDatabase
from neo4j.exceptions import (AuthError, ClientError, DriverError, IncompleteCommit, Neo4jError,
                              ServiceUnavailable, SessionExpired, TransientError)

from ..config import MAX_BUDGET, RetrievalSettings, Settings
from ..errors import (DatabaseFault, DatabaseUnavailable, MemoryExists, MemoryNotFound, RolledBack, SchemaError,
                      StoreClosed, TransactionTooLarge, ValidationError)
from .lease import WriteLease, name_of
from .queries import READ, WRITE, access_mode, names, query

TRANSIENT_TRIES = 3   # a one-query transaction that Neo4j rolled back (a deadlock) runs again this often
VECTOR_INDEXES = ("topic_embedding", "scene_embedding", "scene_dialogue_embedding", "scene_horizon_embedding",
                  "item_embedding", "item_view_embedding", "scene_trigger_view_embedding",
                  "horizon_view_embedding", "turn_embedding")
# each family of trigger views' search (its own label and index: cypher/schema/0058)
VIEW_SEARCHES = {"item": "retrieve/item_views_dense", "scene": "retrieve/scene_views_dense",
                 "horizon": "retrieve/horizon_views_dense"}
# indexes whose vectors are longer than the encoder's (store/scene_horizon: one component more)
LONGER = {"scene_horizon_embedding": 1}
# what `tmem db check --repair` rebuilds, and the query that drops each (schema apply re-creates it)
REPAIRABLE_INDEXES = {"topic_embedding": "repair/drop_topic_embedding",
                      "scene_embedding": "repair/drop_scene_embedding",
                      "scene_dialogue_embedding": "repair/drop_scene_dialogue_embedding",
                      "scene_horizon_embedding": "repair/drop_scene_horizon_embedding",
                      "item_embedding": "repair/drop_item_embedding",
                      "item_view_embedding": "repair/drop_item_view_embedding",
                      "scene_trigger_view_embedding": "repair/drop_scene_trigger_view_embedding",
                      "horizon_view_embedding": "repair/drop_horizon_view_embedding",
                      "turn_embedding": "repair/drop_turn_embedding", "text_search": "repair/drop_text_search",
                      "turn_search": "repair/drop_turn_search"}
# the property each vector index holds, which a node must have for `check_indexes` to probe the index in its memory
PROBE_PROPERTY = {"topic_embedding": "embedding", "scene_embedding": "embedding",
                  "scene_dialogue_embedding": "dialogue_embedding", "scene_horizon_embedding": "horizon_embedding",
                  "item_embedding": "embedding",
                  "item_view_embedding": "embedding", "scene_trigger_view_embedding": "embedding",
                  "horizon_view_embedding": "embedding",
                  "turn_embedding": "passage_embedding"}
# the depths `check_indexes` searches each index at: the shallowest, the default recall's, the deepest,
# each no deeper than the probed memory's entries, as recall (retrieve/lexical.py, Statistics.depth)
PROBE_LIMITS = (1, RetrievalSettings().candidates, MAX_BUDGET)
LIST_PAGE = 1000   # memories per query of a listing
DELETE_QUERIES = ("store/delete_triggers", "store/delete_items", "store/delete_topics",
                  "store/delete_scenes", "store/delete_turns", "store/delete_personas",
                  "store/delete_changes", "store/delete_terms", "store/delete_memory")


def new_version() -> str:
    """A memory's version after a write: new for every write transaction."""
    return uuid.uuid4().hex


def ft_scope(kind: str, memory_id: str) -> str:
    """One Lucene token naming a kind of object in one memory (see cypher/schema/0040)."""
    return kind + hashlib.sha1(memory_id.encode("utf-8")).hexdigest()


class Store:
    """A connection to one Neo4j database holding many memories."""

    def __init__(self, settings: Settings):
        self.settings = settings
        auth = (self.settings.user, self.settings.password or "") if self.settings.user else None
        try:
            self._driver = GraphDatabase.driver(self.settings.uri, auth=auth,
                                                notifications_min_severity="OFF")
        except (ValueError, neo4j.exceptions.ConfigurationError) as exc:
            raise DatabaseUnavailable(f"invalid Neo4j URI {self.settings.uri!r}: {exc}") from None
        self._checked = False
        # shared by every session of this Store: a session starts after the writes the earlier
        # ones committed, so a recall after an add sees it on any member of a cluster
        self.bookmarks = GraphDatabase.bookmark_manager()
        self.closed = False
        # called after every `run` and `tx_run` as listener(name, params, wall_ms, server_ms):
        # benchmarks time the named queries through it instead of running query text themselves
        self.query_listeners: list[Callable[[str, dict, float, float], None]] = []

    def close(self) -> None:
        self._driver.close()
        self.closed = True

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- low level -------------------------------------------------------------------------
    def check(self) -> None:
        """Raise DatabaseUnavailable (naming the URI) unless the database answers."""
        if self._checked:
            return
        try:
            self._driver.verify_connectivity()
        except AuthError as exc:
            raise DatabaseUnavailable(
                f"Neo4j at {self.settings.uri} refused the credentials: {exc.message}") from None
        except (ServiceUnavailable, OSError, Neo4jError) as exc:
            raise DatabaseUnavailable(
                f"cannot reach Neo4j at {self.settings.uri} ({_short(exc)}); "
                "start the local server with `tmem db start` or set NEO4J_URI") from None
        self._checked = True

    def ping(self) -> None:
        """Raise DatabaseUnavailable unless the database answers a query now (never cached)."""
        self.run("store/ping")

    @contextmanager
    def session(self, mode: str) -> Iterator[neo4j.Session]:
        """A session whose access mode is stated (READ or WRITE, `queries.access_mode`): on a
        cluster it routes reads to any member and writes to the leader."""
        if self.closed:
            raise StoreClosed(f"the connection to {self.settings.uri} is closed (its Memory or Store was closed)")
        if mode not in (READ, WRITE):
            raise ValueError(f"a session's access mode is READ or WRITE, not {mode!r}")
        self.check()
        with self._driver.session(database=self.settings.database, default_access_mode=mode,
                                  bookmark_manager=self.bookmarks) as s:
            yield s

    def run(self, name: str, **params: Any) -> list[dict]:
        """Run the named query in its own transaction; return its records as dicts. A transient
        failure (a deadlock between two writers, which Neo4j resolves by rolling one back) is
        tried again, up to TRANSIENT_TRIES times: the query's own transaction left nothing."""
        with self._translated(name):
            for attempt in range(1, TRANSIENT_TRIES + 1):
                try:
                    return self._run_once(name, params)
                except TransientError:
                    if attempt == TRANSIENT_TRIES:
                        raise
                    time.sleep(0.05 * attempt)
        raise AssertionError("unreachable")

    def _run_once(self, name: str, params: dict) -> list[dict]:
        t0 = time.perf_counter()
        with self.session(access_mode(name)) as s:
            result = s.run(query(name), unlogged(params))
            rows = [record_data(r) for r in result]
            self._tell(name, params, t0, result)
            return rows

    def _tell(self, name: str, params: dict, t0: float, result: neo4j.Result) -> None:
        """Pass a query's wall time since `t0` and the server's own time to the listeners."""
        if self.query_listeners:
            summary = result.consume()
            server_ms = (summary.result_available_after or 0) + (summary.result_consumed_after or 0)
            wall_ms = (time.perf_counter() - t0) * 1000
            for listener in self.query_listeners:
                listener(name, params, wall_ms, server_ms)

    @contextmanager
    def transaction(self) -> Iterator[neo4j.Transaction]:
        """One explicit write transaction: everything inside commits together or not at all."""
        with self.session(WRITE) as s:
            with self._translated("begin"):
                tx = s.begin_transaction()
            try:
                yield tx
                with self._translated("commit"):
                    tx.commit()
            except BaseException:
                if not tx.closed():
                    with contextlib.suppress(Neo4jError, DriverError, OSError):
                        tx.rollback()
                raise

    def tx_run(self, tx: neo4j.Transaction, name: str, **params: Any) -> list[dict]:
        """Run the named query inside `tx`; its records as dicts."""
        t0 = time.perf_counter()
        with self._translated(name):
            result = tx.run(query(name), unlogged(params))
            rows = [record_data(r) for r in result]
            self._tell(name, params, t0, result)
            return rows

    @contextmanager
    def _translated(self, name: str) -> Iterator[None]:
        """The driver's and the server's failures as one-line errors that say what to do."""
        try:
            yield
        except IncompleteCommit as exc:
            raise DatabaseUnavailable(f"lost Neo4j at {self.settings.uri} while committing ({_short(exc)}); "
                                      "the write may or may not have landed: check it before writing again") from None
        except (ServiceUnavailable, SessionExpired) as exc:
            raise DatabaseUnavailable(f"lost Neo4j at {self.settings.uri} during {name}: {_short(exc)}") from None
        except TransientError as exc:
            raise RolledBack(f"Neo4j rolled back {name} ({_short(exc)}); nothing of it was written: "
                             "run it again") from None
        except Neo4jError as exc:
            text = str(exc.message or exc)
            if "MemoryPoolOutOfMemoryError" in (exc.code or "") + text or "memory pool" in text.lower():
                raise TransactionTooLarge(
                    f"{name}: the write needs more transaction memory than the server allows "
                    "(dbms.memory.transaction.total.max); raise it (the local server: "
                    "neo4j.local.conf, see docs/neo4j.md) or write the memory in parts") from None
            if "no such fulltext schema index" in text.lower() or "there is no such vector schema index" in text.lower():
                raise SchemaError(f"{name}: the database's schema is older than this version of tmem-graph "
                                  f"({_short(exc)}); run `tmem schema apply`") from None
            if "too large to index" in text or "too large" in text and "index" in text:
                raise ValidationError([f"{name}: a value is too large for Neo4j's index ({_short(exc)})"]) from None
            if (exc.code or "").startswith("Neo.DatabaseError") or "index" in text.lower() and (
                    "not found" in text.lower() or "no such" in text.lower() or "does not exist" in text.lower()):
                raise DatabaseFault(f"Neo4j failed inside {name} ({_short(exc)}); if the server was killed, "
                                    "run `tmem db check`") from None
            if "ConstraintValidationFailed" in (exc.code or ""):
                raise  # the store's callers turn it into MemoryExists and the like
            raise DatabaseFault(f"Neo4j refused {name} ({exc.code}: {_short(exc)})") from None
        except DriverError as exc:
            raise DatabaseUnavailable(f"Neo4j at {self.settings.uri} failed during {name}: {_short(exc)}") from None

    # -- schema ----------------------------------------------------------------------------
    def apply_schema(self, dimensions: int, timeout_s: int = 300) -> list[str]:
        """Apply every migration under cypher/schema in order (idempotent); wait for indexes."""
        existing = self.vector_dimensions()
        wrong = {n: d for n, d in existing.items() if d != dimensions}
        if wrong:
            raise SchemaError(
                f"the database's vector indexes have dimension {sorted(set(wrong.values()))}, "
                f"the encoder has {dimensions}; one database holds one embedding dimension")
        applied = names("schema")
        with self.session(WRITE) as s:
            for name in applied:
                with self._translated(name):
                    s.run(query(name), {"dimensions": dimensions}).consume()
            with self._translated("waiting for the indexes"):
                s.run("CALL db.awaitIndexes($t)", {"t": timeout_s}).consume()
        return applied

    def check_indexes(self, dimensions: int) -> list[dict]:
        """Each index of the schema: its name, state, and whether a search of it answers (a
        crashed server can leave an index ONLINE but throwing on every query; recall itself
        searches none, docs/reliability.md).
        Returns one {"name", "state", "ok", "problem"} per index."""
        states = {r["name"]: r for r in self.run("store/indexes")}
        vector = [1.0] + [0.0] * (dimensions - 1)
        probes = {name: (query_name, params, label) for name, query_name, params, label in [
            ("topic_embedding", "retrieve/topics_dense", {}, "Topic"),
            ("scene_embedding", "retrieve/scenes_dense", {}, "Scene"),
            ("scene_dialogue_embedding", "retrieve/scenes_dialogue_dense", {}, "Scene"),
            ("scene_horizon_embedding", "retrieve/scenes_horizon_dense", {}, "Scene"),
            ("item_embedding", "retrieve/items_dense", {}, "Item"),
            ("item_view_embedding", VIEW_SEARCHES["item"], {"family": "item"}, "ItemView"),
            ("scene_trigger_view_embedding", VIEW_SEARCHES["scene"], {"family": "scene"}, "SceneView"),
            ("horizon_view_embedding", VIEW_SEARCHES["horizon"], {"family": "horizon"}, "HorizonView"),
            ("turn_embedding", "retrieve/turns_dense", {}, "Turn"),
            ("text_search", "retrieve/fulltext", {"lucene": "+ft_scope:probe"}, None),
            ("turn_search", "live/turns_fulltext", {"lucene": "+ft_scope:probe"}, None),
        ]}
        report = []
        for name in REPAIRABLE_INDEXES:
            row = states.get(name)
            entry = {"name": name, "state": row["state"] if row else "missing", "ok": False, "problem": None}
            if row is None:
                entry["problem"] = "the index does not exist"
            elif row["state"] != "ONLINE":
                entry["problem"] = f"the index is {row['state']} ({row['population'] or 0:.0f}% populated)"
            else:
                query_name, params, label = probes[name]
                # a vector search is probed in a memory it can find something in (an empty
                # database has nothing to search: the probe then only plans the query)
                found = self.run("store/probe_memory", label=label, family=params.get("family"),
                                 property=PROBE_PROPERTY.get(name)) if label else []
                memory = found[0]["memory_id"] if found else "probe"
                limits = sorted({min(limit, found[0]["entries"]) for limit in PROBE_LIMITS} if found else {1})
                try:
                    with self.session(READ) as s:   # as deep as recalls search: a crashed vector index can
                        for limit in limits:         # answer at depth 1 and fail every search at 50
                            s.run(query(query_name), {"memory_id": memory, "vector": vector, "limit": limit,
                                                      **params}).consume()
                    entry["ok"] = True
                except (Neo4jError, DriverError) as exc:
                    entry["problem"] = f"queries on it fail: {_short(exc)}"
            report.append(entry)
        return report

    def repair_indexes(self, names: list[str], dimensions: int, timeout_s: int = 600) -> None:
        """Drop the named indexes and build them again from the stored data (schema apply)."""
        with self.session(WRITE) as s:
            for name in names:
                with self._translated(REPAIRABLE_INDEXES[name]):
                    s.run(query(REPAIRABLE_INDEXES[name])).consume()
        self.apply_schema(dimensions, timeout_s)

    def vector_dimensions(self) -> dict[str, int]:
        """The encoder dimension each of the project's vector indexes that exists serves (its own,
        less the components store/scene_horizon adds)."""
        rows = self.run("store/vector_indexes")
        return {r["name"]: int(r["dimensions"]) - LONGER.get(r["name"], 0) for r in rows
                if r["name"] in VECTOR_INDEXES and r["dimensions"] is not None}

    def require_schema(self, dimensions: int) -> None:
        """Raise unless every vector index exists with this dimension."""
        dims = self.vector_dimensions()
        missing = [n for n in VECTOR_INDEXES if n not in dims]
        if not missing and "turn_search" not in {r["name"] for r in self.run("store/indexes")}:
            missing = ["turn_search"]  # a schema applied before the live path
        if missing:
            raise SchemaError(f"the database has no tmem schema (missing {', '.join(missing)}); "
                            "run `tmem schema apply` first")
        wrong = {n: d for n, d in dims.items() if d != dimensions}
        if wrong:
            raise SchemaError(f"vector indexes have dimension {sorted(set(wrong.values()))} but the "
                            f"encoder has {dimensions}")

    # -- memories --------------------------------------------------------------------------
    def memory(self, memory_id: str) -> dict:
        """Header of one memory, by its name or the id its objects carry (`pid`, store/memory_get):
        id (the name), pid, encoder, dim, speakers, created_at, ledger, version."""
        rows = self.run("store/memory_get", memory_id=memory_id)
        if not rows:
            raise MemoryNotFound(f"no memory {memory_id!r} in {self.settings.uri}")
        header = rows[0]
        header["ledger"] = json.loads(header["ledger"]) if header.get("ledger") else None
        return header

    def exists(self, memory_id: str) -> bool:
        return bool(self.run("store/memory_get", memory_id=memory_id))

    def memory_ids(self, after: str | None = None, limit: int = LIST_PAGE) -> list[str]:
        """At most `limit` memory names in order, those that sort after `after`."""
        return [r["id"] for r in self.run("store/memory_ids", after=after, limit=limit)]

    def summaries(self, ids: list[str]) -> list[dict]:
        """The named memories with their object counts, in id order (the absent left out)."""
        return self.run("store/memory_list", ids=ids) if ids else []

    def counts(self, memory_id: str) -> dict:
        """Object counts of one memory, by the id its objects carry (`pid`)."""
        rows = self.run("store/memory_counts", memory_id=memory_id)
        if not rows:
            raise MemoryNotFound(f"no memory {name_of(memory_id)!r} in {self.settings.uri}")
        counts = rows[0]
        counts["trigger_families"] = dict(sorted(counts["trigger_families"]))
        return counts

    def delete_in_batches(self, memory_id: str, lease: WriteLease) -> int:
        """Delete a hidden memory (`importing` set) batch by batch, each batch its own transaction
        (bounded, whatever the memory's size), the Memory node last; return the nodes deleted.
        Killed half-way, it leaves the memory hidden: the next write of it or `tmem db check
        --repair` goes on from there."""
        deleted = 0
        for name in DELETE_QUERIES:
            while True:
                lease.ensure()
                with self.transaction() as tx:
                    lease.check_in(tx)
                    n = self.tx_run(tx, name, memory_id=memory_id, limit=self.settings.write_batch)[0]["deleted"]
                deleted += n
                if n < self.settings.write_batch:
                    break
        return deleted

    def remove_debris(self, memory_id: str, lease: WriteLease) -> list[str]:
        """Under the memory's lease (so its writer is gone): delete what an import or a drop of it
        (or a replacement's staged version) that did not finish left hidden. Returns the ids of
        the Memory nodes deleted."""
        removed = []
        for hidden in self.hidden(memory_id):
            self.delete_in_batches(hidden["id"], lease)
            removed.append(hidden["id"])
        return removed

    def hidden(self, memory_id: str | None = None) -> list[dict]:
        """Memories an import or a drop left hidden ({id, token}): under way, or killed;
        `memory_id`: those of that name alone (its own node and its staged versions)."""
        return self.run("store/memory_debris", memory_id=memory_id)

    def drop(self, memory_id: str) -> int:
        """Delete one memory (by its name) and nothing else; return the number of nodes deleted.
        It is hidden from every reader in one small transaction, then deleted in batches."""
        if not self.exists(memory_id):
            raise MemoryNotFound(f"no memory {memory_id!r} in {self.settings.uri}")
        with WriteLease(self, memory_id, "drop") as lease:
            rows = self.run("store/memory_get", memory_id=memory_id)   # its version now no one else writes it
            pid = rows[0]["pid"] if rows else None
            with lease.committing(), self.transaction() as tx:
                lease.check_in(tx)
                self.tx_run(tx, "live/memory_hold", memory_id=pid)   # an add runs wholly before or after
                if pid is None or not self.tx_run(tx, "store/memory_hide", memory_id=pid, token=f"drop:{lease.token}"):
                    raise MemoryNotFound(f"no memory {memory_id!r} in {self.settings.uri}")
            deleted = self.delete_in_batches(pid, lease)
            self.remove_debris(memory_id, lease)   # what a killed write of it left hidden goes too
            return deleted

    def create_memory_in(self, tx: neo4j.Transaction, memory_id: str, encoder: str, dim: int,
                         speakers: list[str], importing: str | None = None) -> None:
        """Create the Memory node; with `importing` (a token), hidden until `publish`."""
        try:
            self.tx_run(tx, "store/memory_create", memory_id=memory_id, encoder=encoder, dim=dim,
                        speakers=speakers, version=new_version(), importing=importing,
                        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
        except ClientError as exc:
            if "ConstraintValidationFailed" in (exc.code or ""):
                raise MemoryExists(f"memory {memory_id!r} already exists") from None
            raise


class _Unlogged(list):
    """A list parameter whose repr is short: the driver formats every RUN message for its debug
    log even when nothing logs it, a repr of each parameter (a recall's two query vectors: 0.7 ms
    of 1.0 per recall); packed as any list."""
    __slots__ = ()

    def __repr__(self) -> str:
        return f"<list of {len(self)}>"


def unlogged(params: dict) -> dict:
    """`params` with each list in a `_Unlogged` (the same values on the wire)."""
    return {k: _Unlogged(v) if type(v) is list else v for k, v in params.items()}


_PLAIN = frozenset({str, int, float, bool, type(None)})


class _NotPlain(Exception):
    """A value that `Record.data()` transforms (a node, a relationship, a path...)."""


def _plain(value: Any) -> Any:
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is list:   # the driver's own list, not a copy, when it holds scalars only (a vector, ids)
        return value if set(map(type, value)) <= _PLAIN else [_plain(v) for v in value]
    if kind is dict:
        return {k: _plain(v) for k, v in value.items()}
    raise _NotPlain


def record_data(record: neo4j.Record) -> dict:
    """`record.data()`, the same dict, made directly when every value is a string, number,
    boolean, null, list or map (every recall row): the driver's generic walk of ~600 values took
    about 2 ms of a recall's CPU (docs/design-and-evidence.md)."""
    try:
        return {k: _plain(v) for k, v in zip(record.keys(), record)}
    except _NotPlain:
        return record.data()


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def bolt_ping(port: int, host: str = "127.0.0.1", timeout: float = 5.0) -> tuple[bool, str]:
    """Ask the server at host:port for `RETURN 1` over Bolt without credentials.

    Returns (True, "") when the default database answers; (True, why) when Bolt works but the
    login is refused (auth is on: the server is up); (False, why) when it is not ready yet.
    """
    try:
        with GraphDatabase.driver(f"bolt://{host}:{port}", auth=None, connection_timeout=timeout,
                                  connection_acquisition_timeout=timeout) as driver:
            with driver.session(default_access_mode=READ) as session:
                session.run("RETURN 1 AS ok").consume()
        return True, ""
    except AuthError as exc:
        return True, f"Bolt login refused: {exc.message}"
    except (DriverError, Neo4jError, OSError) as exc:
        return False, (str(exc).strip().splitlines() or [type(exc).__name__])[0]
