"""The knowledge service: `terag serve` (HTTP, FastAPI on uvicorn) and `terag mcp` (MCP).

One process holds one `TeragClient` (the driver and the models are loaded once) and serves every
namespace; API keys scope callers to namespaces. `TeragRemote` (in `remote`) is the client side:
it needs only httpx and pydantic, so an application can query a running service without torch or
the Neo4j driver.

This package's `__init__` imports nothing, so `from terag_neo4j.service.remote_client import TeragRemote`
stays as light as the remote client itself.
"""
