"""The mcp-schema generator (build time only; the shipped package never imports it)."""
