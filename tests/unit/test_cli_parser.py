"""Every ``kenning`` command names its handler in its parser; none is looked up by name."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from kenning.cli.main import build_parser


def _leaves(
    parser: argparse.ArgumentParser, path: tuple[str, ...], handler: object
) -> Iterator[tuple[tuple[str, ...], object]]:
    handler = parser.get_default("handler") or handler
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, handler
    for action in subs:
        for name, sub in action.choices.items():
            yield from _leaves(sub, (*path, name), handler)


def test_every_command_has_a_handler() -> None:
    leaves = dict(_leaves(build_parser(), (), None))
    assert len(leaves) == 40  # 21 commands, keys with 3 actions, and 17 benches
    missing = [" ".join(path) for path, handler in leaves.items() if not callable(handler)]
    assert not missing
    # Distinct commands run distinct functions (keys' actions share one).
    handlers = {path: handler for path, handler in leaves.items() if path[0] != "keys"}
    assert len(set(handlers.values())) == len(handlers)
