"""Adapters that plug kenning into agent frameworks, one module each, each behind its extra.

- :mod:`kenning.integrations.openai_agents`: an OpenAI Agents SDK ``Session``
  (``pip install 'kenning[openai-agents]'``).
- :mod:`kenning.integrations.langchain`: a LangChain chat message history and retriever
  (``kenning[langchain]``).
- :mod:`kenning.integrations.llamaindex`: a LlamaIndex memory block and memory
  (``kenning[llamaindex]``).

Each adapter takes a memory (:class:`kenning.Memory` on SQLite or PostgreSQL, or a
:class:`kenning.Client` of a served kenning) and never imports its framework until used.
Importing this package imports no framework.
"""
