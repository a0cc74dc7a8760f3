"""Agent tools: every LSP question a coding agent asks, as `lspmux mcp` (an MCP server) and
`lspmux <verb>` (the same tools on the command line). See docs/agents.md."""
