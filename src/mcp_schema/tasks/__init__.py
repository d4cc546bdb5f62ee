"""The Tasks extension (``io.modelcontextprotocol/tasks``): long-running calls as tasks."""
