// One write lease per memory (tmem_graph/lease.py): its uniqueness is what makes two writers
// that take it at once see one lease.
CREATE CONSTRAINT write_lease_key IF NOT EXISTS FOR (n:WriteLease) REQUIRE n.memory_id IS UNIQUE
