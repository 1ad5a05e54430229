"""What a service says of another writer: what it does, never its process or host, and
something sensible when the lease was let go as it was read (its node read as nulls)."""

from tmem_graph.store.lease import what_of


def test_a_holder_is_named_by_what_it_does():
    assert what_of("correct item i4 (pid 4242 on build-host-7)") == "correct item i4"
    assert what_of("build") == "build"
    assert what_of(None) == "another writer"
