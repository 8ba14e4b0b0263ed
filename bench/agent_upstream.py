"""An upstream MCP server for ``bench/agent_eval.py``'s proxied calls (stdio, own code): it
lists luaguard's built-in Roblox tools (their schemas without luaguard's roles, as a third-party
server would publish them) and answers every call with "ok" - the bench measures what the proxy
lets through, not what a server does - except the calls that would change the project
(``patch_script``, ``create_script``, ``delete_script``, ``create_instance``), answered
``isError`` "not carried out" so the proxy's session view stays the project's: the bench's
cases are independent calls, not one agent's session."""

import copy

from mcp import types
from mcp.server.lowlevel import Server

from luaguard.toolcalls.schemas import BUILTIN_TOOLS


def _strip(obj):
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k != "x-luaguard"}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


TOOLS = [types.Tool(name=t["name"], description=t["description"], input_schema=_strip(copy.deepcopy(t["parameters"])))
         for t in BUILTIN_TOOLS]


async def on_list_tools(ctx, params):
    return types.ListToolsResult(tools=TOOLS)


CHANGES = {"patch_script", "create_script", "delete_script", "create_instance"}
NOT_DONE = "bench upstream: not carried out"


async def on_call_tool(ctx, params):
    if params.name in CHANGES:
        return types.CallToolResult(content=[types.TextContent(type="text", text=NOT_DONE)], is_error=True)
    return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])


if __name__ == "__main__":
    import anyio
    from mcp.server.stdio import stdio_server

    server = Server("bench-upstream", on_list_tools=on_list_tools, on_call_tool=on_call_tool)

    async def main():
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
