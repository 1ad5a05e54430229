"""One root exception for the package, with short specific subclasses.

The CLI turns every `TmemError` into a one-line message and exit status 1; anything else is a
bug and keeps its traceback.
"""


class TmemError(Exception):
    """Base class of every error tmem-graph raises on purpose."""


class ConfigError(TmemError):
    """A setting is missing or has an invalid value."""


class ServerError(TmemError):
    """The local Neo4j server could not be provisioned, started or stopped."""


class DatabaseUnavailable(TmemError):
    """The Neo4j database cannot be reached."""


class ValidationError(TmemError):
    """An input document breaks a rule; `problems` lists every violation found."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        head = self.problems[0] if self.problems else "invalid document"
        more = f" (and {len(self.problems) - 1} more problems)" if len(self.problems) > 1 else ""
        super().__init__(head + more)


class MemoryNotFound(TmemError):
    """No memory with the given id exists in the database."""


class MemoryExists(TmemError):
    """A memory with the given id already exists and replacing it was not asked for."""


class EncoderMismatch(TmemError):
    """The configured encoder differs from the one a memory was built with."""


class LeaseHeld(TmemError):
    """Another writer holds the memory's write lease (tmem_graph/lease.py)."""


class LeaseLost(TmemError):
    """This writer's lease lapsed or was taken over before its write committed."""
