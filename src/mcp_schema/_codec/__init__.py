"""The parts of `mcp_schema.codec`, one idea per module; import from the facade."""
