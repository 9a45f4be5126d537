"""MCP: the memory as tools for AI assistants (see server.py)."""
