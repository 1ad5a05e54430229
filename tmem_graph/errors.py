"""Every exception of the package: one root, with short specific subclasses.

The CLI turns every `TmemError` into a one-line message and exit status 1; anything else is a
bug and keeps its traceback.
"""


class TmemError(Exception):
    """Base class of every error tmem-graph raises on purpose."""


class ConfigError(TmemError):
    """A setting is missing or has an invalid value."""


class LLMNotConfigured(ConfigError):
    """An operation that needs an LLM (build, ask) was asked where none is configured."""


class ServerError(TmemError):
    """The local Neo4j server could not be provisioned, started or stopped."""


class DatabaseUnavailable(TmemError):
    """The Neo4j database cannot be reached."""


class SchemaError(TmemError):
    """The database has no tmem schema, or its vector indexes have another dimension."""


class StoreClosed(TmemError):
    """A Store (or the Memory that opened it) was used after `close()`."""


class UsageError(TmemError):
    """A call or command names something that does not exist or does not fit (an unknown
    cascade component, an empty query, a topic the memory lacks, clashing options)."""


class OutputError(TmemError):
    """A result could not be written where asked (the path is named)."""


class DatabaseFault(TmemError):
    """Neo4j failed inside a query (e.g. an index left unusable by a crash)."""


class RolledBack(DatabaseFault):
    """Neo4j rolled a write transaction back (a deadlock with another writer): nothing of it was
    written, and running it again is safe. The writers of this package run it again themselves."""


class TransactionTooLarge(TmemError):
    """A write needs more transaction memory than the server allows; the message names the setting."""


class ValidationError(TmemError):
    """An input document breaks a rule; `problems` lists every violation found."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        head = self.problems[0] if self.problems else "invalid document"
        more = f" (and {len(self.problems) - 1} more problems)" if len(self.problems) > 1 else ""
        super().__init__(head + more)


class MemoryNotFound(TmemError):
    """No memory with the given id exists in the database."""


class ObjectNotFound(MemoryNotFound):
    """The memory holds no turn, scene or item with the given id (the message names both)."""


class MemoryBusy(TmemError):
    """A memory kept changing while it was read (writers committed throughout the wait)."""


class ServiceBusy(TmemError):
    """A service has as many LLM calls (ask, build) under way as it allows: try again."""


class Forbidden(TmemError):
    """A service caller whose token may only read asked to change a memory it sees."""


class MemoryExists(TmemError):
    """A memory with the given id already exists and replacing it was not asked for."""


class EncoderMismatch(TmemError):
    """The configured encoder differs from the one a memory was built with."""


class LeaseHeld(TmemError):
    """Another writer holds the memory's write lease (tmem_graph/store/lease.py). The message
    names its process id and host; `public`, what a service tells its callers, does not."""

    def __init__(self, message: str, public: str | None = None):
        super().__init__(message)
        self.public = public or message


class LeaseLost(TmemError):
    """This writer's lease lapsed or was taken over before its write committed."""


class LLMError(TmemError):
    """An LLM call failed after its retries; the message names the stage and the object."""


class InvalidReply(LLMError):
    """Every reply to a structured call was invalid (e.g. cut at the token cap): the endpoint
    answered, so a smaller request may still succeed."""


class LocalLLMError(TmemError):
    """The local model cannot be assembled, started or reached."""


def public(exc: TmemError) -> str:
    """What a service tells its callers of `exc`: its message, less what names another writer."""
    return getattr(exc, "public", None) or str(exc)
