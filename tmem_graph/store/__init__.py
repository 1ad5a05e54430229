"""The only door to Neo4j (the only package that imports `neo4j`): `Store` runs the named,
parameterised queries of `cypher/`, `WriteLease` keeps one writer per memory."""

from .graph import LIST_PAGE, TRANSIENT_TRIES, Store, bolt_ping, ft_scope, new_version
from .lease import WriteLease, name_of, staged_id

__all__ = ["LIST_PAGE", "TRANSIENT_TRIES", "Store", "WriteLease", "bolt_ping", "ft_scope", "name_of", "new_version",
           "staged_id"]
