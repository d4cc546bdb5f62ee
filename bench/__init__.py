"""`make bench`: mcp-schema's codec against orjson, mcp-types, jsonschema-rs and pydantic."""
