"""MCP, both ways: ``helix.mcp.client`` reaches MCP servers' tools from a run (a tool
source below the runtime); ``helix.mcp.server`` exposes Helix's runs to MCP clients
(``helix mcp serve``, through ``helix.api``)."""
