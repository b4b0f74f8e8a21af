"""The layers of docs/architecture.md hold in the code: the one import-linter contract names
every top-level unit, the units' imports form no cycle, and the rules a layers contract cannot
state (a floor may import anything below it) hold too: the HTTP client and the agent tools
reach no store."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Set
from pathlib import Path

import grimp
import pytest

import kenning

SRC = Path(kenning.__file__).parent
PYPROJECT = SRC.parents[1] / "pyproject.toml"


def _floors() -> list[list[str]]:
    config = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]
    [contract] = config["contracts"]
    assert contract["type"] == "layers" and contract["containers"] == ["kenning"]
    return [[unit.strip() for unit in floor.split("|")] for floor in contract["layers"]]


def _units() -> set[str]:
    """Every top-level module and package of src/kenning (the root's __init__ aside)."""
    modules = {p.stem for p in SRC.glob("*.py") if p.stem != "__init__"}
    packages = {p.name for p in SRC.iterdir() if (p / "__init__.py").is_file()}
    return modules | packages


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("kenning", cache_dir=None)


def _unit_edges(graph: grimp.ImportGraph) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for module in graph.modules:
        importer = module.split(".")[1] if "." in module else None
        for imported in graph.find_modules_directly_imported_by(module):
            target = imported.split(".")[1] if "." in imported else None
            if importer and target and importer != target:
                edges.setdefault(importer, set()).add(target)
    return edges


def _cycles(edges: Mapping[str, Set[str]]) -> list[set[str]]:
    """Strongly connected components of more than one unit (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(unit: str) -> None:
        index[unit] = low[unit] = len(index)
        stack.append(unit)
        for target in edges.get(unit, ()):
            if target not in index:
                visit(target)
                low[unit] = min(low[unit], low[target])
            elif target in stack:
                low[unit] = min(low[unit], index[target])
        if low[unit] == index[unit]:
            component = set()
            while True:
                member = stack.pop()
                component.add(member)
                if member == unit:
                    break
            if len(component) > 1:
                found.append(component)

    for unit in sorted(edges):
        if unit not in index:
            visit(unit)
    return found


def test_the_layers_contract_names_every_unit_once() -> None:
    named = [unit for floor in _floors() for unit in floor]
    assert len(named) == len(set(named))
    assert set(named) == _units()


def test_no_units_import_each_other_in_a_cycle(graph: grimp.ImportGraph) -> None:
    edges = _unit_edges(graph)
    assert edges["context"] >= {"compaction"}, "the graph is read (context uses compaction)"
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [{"a", "b"}], "the check finds one"
    assert _cycles(edges) == []


def test_every_import_between_units_looks_down(graph: grimp.ImportGraph) -> None:
    floor_of = {unit: n for n, floor in enumerate(reversed(_floors())) for unit in floor}
    upward = [
        (importer, target)
        for importer, targets in _unit_edges(graph).items()
        for target in targets
        if floor_of[target] >= floor_of[importer]
    ]
    assert upward == []


@pytest.mark.parametrize(
    ("unit", "below"),
    [
        # The client talks HTTP only: no store, no embedding model in a client process.
        ("kenning.client", "kenning.store"),
        ("kenning.client", "kenning.embed"),
        # Agent tools work on any memory, embedded or served, through its public calls.
        ("kenning.tools", "kenning.store"),
    ],
)
def test_what_a_unit_must_not_reach_below_it(
    graph: grimp.ImportGraph, unit: str, below: str
) -> None:
    assert graph.chain_exists(importer="kenning.memory", imported=below, as_packages=True)
    assert not graph.chain_exists(importer=unit, imported=below, as_packages=True)
