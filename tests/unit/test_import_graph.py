"""The package's structure: no import cycles, layers that import only downwards, suites that never import
renderers, and a docstring at the top of every module saying its one job.

Every `import` / `from ... import` anywhere in a module counts (also inside functions: a lazy import is still a
dependency), except those under `if TYPE_CHECKING:`; so does a string constant that names a module of the package
(`importlib.import_module` over a registry such as suites.BUILTIN_MODULES or cli.EXTENSIONS).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import ssdlab

PACKAGE = Path(ssdlab.__file__).parent


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            skip.update(id(n) for n in ast.walk(node))
    return skip


def _targets(module: str, node: ast.AST) -> Iterator[str]:
    """The package modules an import node loads (a `from pkg import name` names the submodule when there is one)."""
    if isinstance(node, ast.Import):
        yield from (a.name for a in node.names)
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            pkg = module.split(".")
            if MODULES[module].name != "__init__.py":
                pkg = pkg[:-1]
            pkg = pkg[: len(pkg) - (node.level - 1)]
            base = ".".join([*pkg, base] if base else pkg)
        for a in node.names:
            sub = f"{base}.{a.name}"
            yield sub if sub in MODULES else base
    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in MODULES:
        yield node.value


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_nodes(tree)
        deps = {t for n in ast.walk(tree) if id(n) not in skip for t in _targets(module, n)}
        graph[module] = {d for d in deps if d in MODULES and d != module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[v] = min(low[v], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_graph_sees_lazy_imports() -> None:
    graph = import_graph()
    assert "ssdlab.sim.target" in graph["ssdlab.run.target"]  # imported inside parse_target
    assert "ssdlab.report.pts" in graph["ssdlab.report.html"]  # named in SECTION_MODULES, loaded by importlib
    assert "ssdlab.commands.histlog" in graph["ssdlab.cli"]  # cli.EXTENSIONS


def test_no_import_cycles() -> None:
    found = cycles(import_graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_suites_never_import_renderers() -> None:
    graph = import_graph()
    bad = {m: sorted(d for d in deps if d.startswith("ssdlab.report"))
           for m, deps in graph.items() if m.startswith("ssdlab.suites")}
    assert not {m: d for m, d in bad.items() if d}


# The layers of the package, lowest first (ARCHITECTURE.md): a module imports modules of its own layer or of
# lower ones only. Every module belongs to exactly one layer (the longest name below that prefixes it).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("ssdlab", "ssdlab.errors", "ssdlab.units", "ssdlab.system"),  # foundation: errors, units, host facts
    ("ssdlab.results",),  # the result model and its store: what every other part reads or writes
    ("ssdlab.metrics",),  # the metric vocabulary: names, units, directions, read from a measurement
    ("ssdlab.analysis",),  # pure statistics over results (steady state, anomalies, significance)
    ("ssdlab.trace",),  # block traces read, characterized, fitted and mapped (pure numpy; replayed by fio/, sim/)
    ("ssdlab.fio",),  # the fio boundary, its executor included
    ("ssdlab.targets",),  # what a run writes to: kinds, hazards, purge, drive health, host groups
    ("ssdlab.sim",),  # the simulated SSD: a target kind and its executor
    ("ssdlab.suites",),  # plans (pure)
    ("ssdlab.safety",),  # the write gate
    ("ssdlab.run",),  # request -> setup -> orchestrate: the run loop, ETAs, progress
    ("ssdlab.compare",),  # several stored runs matched, gates
    ("ssdlab.report",),  # renderers of stored runs
    ("ssdlab.commands",),  # extra subcommands
    ("ssdlab.serve",),  # `ssdlab serve`: the browser view of the catalog and of runs in progress (its own command)
    ("ssdlab.cli", "ssdlab.__main__"),  # the command line and its error boundary
)


def layer_of(module: str) -> int:
    """The index of the layer a module belongs to (-1: none)."""
    best, found = -1, -1
    for i, names in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > best:
                best, found = len(name), i
    return found


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph between the layers' packages (a module stands for the layer entry it belongs to)."""
    def entry(module: str) -> str:
        return max((n for names in LAYERS for n in names if module == n or module.startswith(n + ".")), key=len)

    out: dict[str, set[str]] = {}
    for m, deps in graph.items():
        out.setdefault(entry(m), set()).update(entry(d) for d in deps if entry(d) != entry(m))
    return out


def test_every_module_has_a_layer() -> None:
    assert not [m for m in MODULES if layer_of(m) < 0], "modules outside every layer: add them to LAYERS"


def test_packages_import_only_their_own_layer_or_lower_ones() -> None:
    graph = import_graph()
    upward = sorted(f"{m} -> {d}" for m, deps in graph.items() for d in deps if layer_of(d) > layer_of(m))
    assert not upward, "upward imports: " + "; ".join(upward)


def test_no_import_cycles_between_packages() -> None:
    found = cycles(package_graph(import_graph()))
    assert not found, "package cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_layer_check_sees_an_upward_import() -> None:
    assert layer_of("ssdlab.results.model") < layer_of("ssdlab.fio.parse") < layer_of("ssdlab.report.html")
    assert cycles(package_graph({"ssdlab.fio.job": {"ssdlab.results.model"},
                                 "ssdlab.results.model": {"ssdlab.fio.job"}})) == [["ssdlab.fio", "ssdlab.results"]]


def test_every_module_opens_with_a_docstring_saying_its_job() -> None:
    missing = sorted(m for m, path in MODULES.items()
                     if len((ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "").strip()) < 20)
    assert not missing, "modules without a docstring saying their one job: " + ", ".join(missing)


def test_hosts_and_hostgroup_depend_one_way() -> None:
    """targets/hosts.py (the group) uses targets/hostgroup.py (its executor); the executor names what it needs of
    a group as a Protocol and never imports hosts.py, not even for type checking (issue 31)."""
    tree = ast.parse(MODULES["ssdlab.targets.hostgroup"].read_text(encoding="utf-8"))
    named = {t for n in ast.walk(tree) for t in _targets("ssdlab.targets.hostgroup", n)}
    assert "ssdlab.targets.hosts" not in named
    assert "ssdlab.targets.hostgroup" in import_graph()["ssdlab.targets.hosts"]
