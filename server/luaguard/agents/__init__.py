"""Front ends for coding agents: the pre-tool-use hook (:mod:`.hook`), the MCP server
(:mod:`.mcp_server`) and the agents' payload formats and file edits they read.  No check
logic lives here: every verdict comes from :mod:`luaguard.toolcalls.api`."""
