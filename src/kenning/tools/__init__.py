"""Memory tools for agents that manage their own memory (MemGPT/Letta style).

``default_registry().definitions()`` gives JSON-schema definitions in the OpenAI
function-calling format; ``dispatch(memory, binding, name, arguments)`` runs a call inside the
tenant, user and session the host bound it to. The same registry backs ``POST /v1/tools/{name}``
and the MCP server (``kenning mcp``, ``/mcp``).
"""

from kenning.tools.fact_tools import fact_tools
from kenning.tools.memory_tools import default_registry, memory_tools
from kenning.tools.registry import (
    HOST_ONLY_PIN_KINDS,
    ContextTarget,
    FactsTarget,
    MemoryTarget,
    ToolBinding,
    ToolRegistry,
    ToolSpec,
    shares_sessions,
)

__all__ = [
    "HOST_ONLY_PIN_KINDS",
    "ContextTarget",
    "FactsTarget",
    "MemoryTarget",
    "ToolBinding",
    "ToolRegistry",
    "ToolSpec",
    "default_registry",
    "fact_tools",
    "memory_tools",
    "shares_sessions",
]
