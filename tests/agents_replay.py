"""A model for the OpenAI Agents SDK that replays recorded outputs (no LLM is reachable here):
each call answers with the next recorded list of output items and remembers its input, for
``Runner.run``, ``Runner.run_sync`` and ``Runner.run_streamed``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from agents import Agent, Runner
from agents.items import ModelResponse, TResponseOutputItem, TResponseStreamEvent
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseCreatedEvent,
    ResponseFunctionToolCall,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
)


def said(text: str, n: int = 0) -> ResponseOutputMessage:
    """An assistant message as the Responses API returns it."""
    return ResponseOutputMessage(
        id=f"msg_{n}", type="message", role="assistant", status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )  # fmt: skip


def calls(name: str, arguments: str, call_id: str) -> ResponseFunctionToolCall:
    """A function call as the Responses API returns it."""
    return ResponseFunctionToolCall(
        type="function_call", name=name, arguments=arguments, call_id=call_id, id=f"fc_{call_id}"
    )


class ReplayModel(Model):
    def __init__(self) -> None:
        self.outputs: list[list[TResponseOutputItem]] = []
        self.inputs: list[Any] = []

    def then(self, *items: TResponseOutputItem) -> ReplayModel:
        self.outputs.append(list(items))
        return self

    @property
    def last_input(self) -> Any:
        return self.inputs[-1]

    def _next(self, given: Any) -> list[TResponseOutputItem]:
        self.inputs.append(given)
        if not self.outputs:
            raise AssertionError("the model was called more often than recorded")
        return self.outputs.pop(0)

    async def get_response(self, system_instructions: Any, input: Any, model_settings: Any,
                           tools: Any, output_schema: Any, handoffs: Any, tracing: Any, *,
                           previous_response_id: Any = None, conversation_id: Any = None,
                           prompt: Any = None) -> ModelResponse:  # fmt: skip
        return ModelResponse(output=self._next(input), usage=Usage(), response_id="resp_1")

    async def stream_response(self, system_instructions: Any, input: Any, model_settings: Any,
                              tools: Any, output_schema: Any, handoffs: Any, tracing: Any, *,
                              previous_response_id: Any = None, conversation_id: Any = None,
                              prompt: Any = None
                              ) -> AsyncIterator[TResponseStreamEvent]:  # fmt: skip
        output = self._next(input)
        response = Response(
            id="resp_1", created_at=0, model="replay", object="response", output=output,
            tool_choice="auto", tools=[], parallel_tool_calls=False,
        )  # fmt: skip
        yield ResponseCreatedEvent(type="response.created", response=response, sequence_number=0)
        n = 1
        for index, item in enumerate(output):
            yield ResponseOutputItemAddedEvent(
                type="response.output_item.added", item=item, output_index=index,
                sequence_number=n,
            )  # fmt: skip
            yield ResponseOutputItemDoneEvent(
                type="response.output_item.done", item=item, output_index=index,
                sequence_number=n + 1,
            )  # fmt: skip
            n += 2
        yield ResponseCompletedEvent(
            type="response.completed", response=response, sequence_number=n
        )


async def run(method: str, agent: Agent[Any], given: Any, **kwargs: Any) -> Any:
    """Run *agent* with ``Runner.run``, ``run_sync`` (in a thread of its own loop) or
    ``run_streamed`` (consumed to the end)."""
    if method == "run":
        return await Runner.run(agent, given, **kwargs)
    if method == "run_sync":
        return await asyncio.to_thread(_run_sync, agent, given, kwargs)
    result = Runner.run_streamed(agent, given, **kwargs)
    async for _ in result.stream_events():
        pass
    return result


def _run_sync(agent: Agent[Any], given: Any, kwargs: dict[str, Any]) -> Any:
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        return Runner.run_sync(agent, given, **kwargs)
    finally:
        loop.close()
