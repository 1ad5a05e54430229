"""tmem-graph: T-Mem long-term conversational memory on Neo4j."""

from .api import Memory, apply_schema, build_due, import_memory, ingest, list_memories
from .config import RetrievalSettings, Settings
from .errors import TmemError

__all__ = ["Memory", "Settings", "RetrievalSettings", "TmemError", "apply_schema", "build_due", "import_memory",
           "ingest", "list_memories"]
__version__ = "0.1.0"
