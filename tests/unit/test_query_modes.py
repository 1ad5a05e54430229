"""How each named query's session is opened (READ or WRITE): recall and exploration only read,
every migration and every merge writes; Neo4j refuses a write in a READ session, so the
integration suite catches a write classified as a read."""

import pytest

from tmem_graph.store.queries import access_mode, cypher_root, mode_of, names


def every_query() -> list[str]:
    root = cypher_root()
    return sorted(str(p.relative_to(root).with_suffix("")) for p in root.rglob("*.cypher"))


def test_recall_and_exploration_only_read():
    reads = [n for n in every_query() if n.startswith(("retrieve/", "explore/"))]
    assert reads and {access_mode(n) for n in reads} == {"READ"}


def test_migrations_merges_and_deletes_write():
    writes = names("schema") + [n for n in every_query() if n.startswith(("store/", "repair/", "lease/"))
                                and any(w in n for w in ("merge", "delete", "drop", "create", "link", "acquire"))]
    assert writes and {access_mode(n) for n in writes} == {"WRITE"}


@pytest.mark.parametrize("text, mode", [("MATCH (n) RETURN n.created_at // CREATE nothing", "READ"),
                                        ("MATCH (n) WHERE n.t = 'SET x' RETURN n", "READ"),
                                        ("MATCH (n) set n.x = 1", "WRITE"),
                                        ("CALL db.awaitIndexes(5)", "READ")])
def test_comments_strings_and_names_do_not_count_as_writes(text, mode):
    assert mode_of(text) == mode
