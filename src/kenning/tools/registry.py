"""Agent memory tools (MemGPT/Letta style): JSON-schema definitions and one dispatcher.

A tool is a :class:`ToolSpec`: a name, a description, the JSON schema of its arguments, whether
it writes, and a handler. :class:`ToolRegistry` renders the definitions in the OpenAI
function-calling format and dispatches a call: it checks the arguments against the same
schema, then runs the handler against a memory (an embedded :class:`kenning.Memory` or a
:class:`kenning.Client`) inside a :class:`ToolBinding`.

The binding is set by the host application, never by the model: the tenant, user and session
the agent works in, and whether the host lets the agent read the user's other sessions. No
tool argument names a tenant, user or session, so a tool call cannot reach outside its
binding. Reading another session of the user (search, facts, profile) needs both the host's
flag and the user's stored consent (``memory.facts.shares_across_sessions``): the host cannot
share what the user did not agree to, and a user's consent does not open every agent's tools.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kenning.api import ReadsAPI
from kenning.context.api import PinsAPI, TaskAPI
from kenning.errors import InvalidInput, NotFound
from kenning.longterm.api import FactsAPI
from kenning.records import PinKind, Scope, check_json, too_deep
from kenning.tools.schema import check_arguments

__all__ = [
    "HOST_ONLY_PIN_KINDS",
    "ContextTarget",
    "FactsTarget",
    "MemoryTarget",
    "ToolBinding",
    "ToolRegistry",
    "ToolSpec",
    "shares_sessions",
]

#: Pins an agent's tools may never create, change or close: only the host application's API
#: can, so a prompt-injected "the manager approved it" cannot become an approval.
HOST_ONLY_PIN_KINDS = frozenset({PinKind.APPROVAL, PinKind.AUTHORIZATION, PinKind.HUMAN_GATE})


class ContextTarget(PinsAPI, TaskAPI, Protocol):
    """What the tools use of ``memory.context``: its pins and task state (a
    :class:`~kenning.WorkingContext` or the client's)."""


#: What the tools use of ``memory.facts`` (a :class:`~kenning.LongTermMemory` or the
#: client's): the user's facts, profile and consent.
FactsTarget = FactsAPI


class MemoryTarget(ReadsAPI, Protocol):
    """What the tools use of a memory: :class:`kenning.Memory` and :class:`kenning.Client`."""

    @property
    def context(self) -> ContextTarget: ...

    @property
    def facts(self) -> FactsTarget: ...


@dataclass(frozen=True, slots=True)
class ToolBinding:
    """Where an agent's tool calls act, set by the host application.

    Attributes:
        scope: the tenant, user and session of the conversation (a session is required).
        share_sessions: the host lets the agent read the user's other sessions. The tools do
            only when the user's stored consent allows it too (see :func:`shares_sessions`);
            without both, every read stays in this session.
    """

    scope: Scope
    share_sessions: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.scope, Scope):
            raise InvalidInput("a tool binding needs a kenning.Scope")
        self.scope.require_session()

    @property
    def user_scope(self) -> Scope:
        """The bound user across their sessions (where shared reads go)."""
        return Scope(self.scope.tenant, self.scope.user, agent=self.scope.agent)


def shares_sessions(memory: MemoryTarget, binding: ToolBinding) -> bool:
    """True if a tool call may read the bound user's other sessions: the host's flag *and*
    the user's stored consent (``share_across_sessions``, over the tenant's default)."""
    return binding.share_sessions and memory.facts.shares_across_sessions(binding.scope)


Handler = Callable[[MemoryTarget, ToolBinding, dict[str, Any]], Any]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool: its name, what it does (the model reads this), its arguments' JSON schema,
    whether it writes (a read-only credential may not call it), and its handler."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    handler: Handler
    writes: bool = False
    #: Runs on the raw arguments before the schema check, to refuse a call for what it asks
    #: (``ToolRefused``) rather than for its shape.
    guard: Callable[[Mapping[str, Any]], None] | None = None

    def definition(self) -> dict[str, Any]:
        """The OpenAI function-calling definition (``{"type": "function", "function": …}``)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": dict(self.parameters),
            },
        }


class ToolRegistry:
    """A set of tools and their dispatcher.

    >>> from kenning import Memory, Scope
    >>> from kenning.tools import ToolBinding, default_registry
    >>> tools = default_registry()
    >>> with Memory.open(":memory:", embedder=None) as memory:
    ...     binding = ToolBinding(Scope("acme", "dana", "s1"))
    ...     tools.dispatch(memory, binding, "set_pin", {"kind": "entity_id", "value": "A-1"})["key"]
    'entity_id:A-1'
    """

    def __init__(self, specs: Sequence[ToolSpec] = ()) -> None:
        self._specs: dict[str, ToolSpec] = {}
        for spec in specs:
            self.add(spec)

    def add(self, spec: ToolSpec) -> None:
        """Register *spec* (the long-term memory tools are added this way)."""
        if spec.name in self._specs:
            raise InvalidInput(f"a tool named {spec.name!r} is registered already")
        self._specs[spec.name] = spec

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    @property
    def names(self) -> list[str]:
        return list(self._specs)

    def spec(self, name: str) -> ToolSpec:
        """The tool *name*; ``NotFound`` naming the tools that exist otherwise."""
        try:
            return self._specs[name]
        except KeyError:
            raise NotFound(f"no tool named {name!r:.80}; tools: {self.names}") from None

    def definitions(self) -> list[dict[str, Any]]:
        """Every tool in the OpenAI function-calling format, to pass as ``tools=``."""
        return [s.definition() for s in self._specs.values()]

    def dispatch(
        self, memory: MemoryTarget, binding: ToolBinding, name: str, arguments: object
    ) -> Any:
        """Run the tool *name* with *arguments* (a JSON object, or its text) inside *binding*;
        return its JSON-ready result.

        Raises:
            NotFound: no such tool.
            InvalidInput: arguments that do not match the tool's schema, or that no backend
                can store (see :func:`kenning.records.check_json`: nesting, NUL characters,
                lone surrogates, non-finite numbers).
            ToolRefused: the call asks for what only the host may do (see
                :data:`HOST_ONLY_PIN_KINDS`).
        """
        spec = self.spec(name)
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"the arguments of {name} are not JSON: {exc.msg}") from exc
            except RecursionError as exc:
                raise too_deep(f"{name}.arguments") from exc
            except ValueError as exc:  # an integer past the parser's digits
                raise InvalidInput(f"the arguments of {name} are not JSON: {exc}") from exc
        # Every transport (MCP, REST, a host's own loop) comes through here.
        check_json(arguments, f"{name}.arguments")
        if spec.guard is not None and isinstance(arguments, Mapping):
            spec.guard(arguments)
        checked = check_arguments(arguments, spec.parameters, tool=name)
        return spec.handler(memory, binding, checked)
