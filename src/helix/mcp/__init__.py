"""MCP, both ways: reaching MCP servers from a run, and serving Helix to MCP clients.

``helix.mcp.client`` turns an MCP server's tools into a run's tool source (below the
runtime); ``helix.mcp.server`` exposes Helix's runs to MCP clients (``helix mcp
serve``, through ``helix.api``).
"""

__all__: list[str] = []
