"""Adapters that plug kenning into agent frameworks, one module each, each behind its extra.

- :mod:`kenning.integrations.langgraph`: a LangGraph ``BaseStore``
  (``pip install 'kenning[langgraph]'``).
- :mod:`kenning.integrations.openai_agents`: an OpenAI Agents SDK ``Session``
  (``kenning[openai-agents]``).
- :mod:`kenning.integrations.langchain`: a LangChain chat message history and retriever
  (``kenning[langchain]``).
- :mod:`kenning.integrations.llamaindex`: a LlamaIndex memory, memory block and pins block
  (``kenning[llamaindex]``).

The floor just under the edges: an adapter uses kenning's API and the framework's own
interfaces; only the benchmarks (``kenning bench langgraph``) import it. Importing this package
imports no framework (``docs/integrations.md``).
"""
