"""Adapters that plug kenning into agent frameworks, each behind its optional extra:
:mod:`kenning.integrations.langgraph` (``pip install 'kenning[langgraph]'``).

The floor just under the edges: an adapter uses kenning's API and the framework's own
interfaces; only the benchmarks (``kenning bench langgraph``) import it
(``docs/integrations.md``).
"""
