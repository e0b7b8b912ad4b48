"""No import circle among the modules of plugins/mqjournal (issue #30).

A circle means two modules can only be understood, tested and changed together, and its import order decides which
half sees the other half-initialised. The graph is read from the sources with `ast`, so every import counts: at
module level, inside a function (a late import that only dodges a circle is still the circle) and under
TYPE_CHECKING (the types of one module still depend on the other).
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "plugins" / "mqjournal"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(tree: ast.Module, module: str, is_package: bool) -> Iterator[tuple[str, int]]:
    """Each dotted name an import statement of `module` names, with its line: `from a import b` names a.b and a."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                # A relative import counts from the package: the module's own for __init__, its parent otherwise.
                anchor = module.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, node.module] if node.module else anchor)
            else:
                base = node.module or ""
            yield base, node.lineno
            for alias in node.names:
                yield f"{base}.{alias.name}", node.lineno


def import_graph() -> dict[str, dict[str, int]]:
    """mqjournal module -> the mqjournal modules it imports, each with the line of its first import."""
    paths = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}
    graph: dict[str, dict[str, int]] = {module: {} for module in paths}
    for module, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name, line in imported_names(tree, module, path.name == "__init__.py"):
            # `import a.b.c` and `from a.b import name` depend on the longest prefix that is a module of ours.
            parts = name.split(".")
            while parts and ".".join(parts) not in paths:
                parts.pop()
            target = ".".join(parts)
            if target and target != module:
                graph[module].setdefault(target, line)
    return graph


def strongly_connected(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the components of more than one module, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(graph[successor])))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    return sorted(components)


def shortest_circle(graph: dict[str, dict[str, int]], component: list[str]) -> str:
    """One circle through the component's first module, as `a (line 3) -> b (line 9) -> a`, for the message."""
    start, members = component[0], set(component)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for successor in graph[node]:
            if successor == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                path.reverse()
                steps = [f"{a} (line {graph[a][b]})" for a, b in zip(path, [*path[1:], start], strict=True)]
                return " -> ".join([*steps, start])
            if successor in members and successor not in came_from:
                came_from[successor] = node
                queue.append(successor)
    raise AssertionError(f"no circle through {start}")  # a component of two or more always has one


def test_the_graph_is_read_from_the_sources():
    graph = import_graph()
    assert {"mqjournal.names", "mqjournal.policy", "mqjournal.snapshot"} <= set(graph["mqjournal.rules"])
    assert "mqjournal.sparkplan.schema" in graph["mqjournal.sparkplan.checks"]


def test_a_circle_is_found_and_named():
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3, "d": 4}, "d": {}}
    assert strongly_connected(graph) == [["a", "b", "c"]]
    assert shortest_circle(graph, ["a", "b", "c"]) == "a (line 1) -> b (line 2) -> c (line 3) -> a"


def test_no_import_circle_among_mqjournal_modules():
    graph = import_graph()
    circles = [f"{', '.join(c)}: {shortest_circle(graph, c)}" for c in strongly_connected(graph)]
    assert not circles, "import circles among mqjournal modules:\n" + "\n".join(circles)
