"""The Python package is layered: the library below, the CLI (``raidlab.commands``, ``raidlab.cli``) on top.

The import graph is read from the source with ``ast`` (every ``import`` anywhere in a module, top
level or not), so a cycle dodged by an import inside a function still counts. Checked:

- nothing outside the CLI imports the CLI, directly or through other modules;
- the graph of raidlab's own modules has no cycle;
- no module imports inside a function, except the optional heavy dependencies (a user without
  them still imports raidlab and gets an error only from the call that needs them);
- ``import raidlab``, ``raidlab.run``, ``raidlab.outputs``, ``raidlab.sim``, the planner,
  sweeps and reports load neither the CLI nor click, and the lazily importing package still
  lists and gives the names it always had.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set, Tuple

import pytest

try:
    import tomllib
except ImportError:  # Python < 3.11: the tomli backport raidlab depends on there
    import tomli as tomllib

REPO_ROOT = Path(__file__).resolve().parents[1]
SOURCE_ROOT = REPO_ROOT / "python"
PACKAGE = "raidlab"

#: The command-line layer: modules here may import the library; the library never imports them.
CLI_MODULES = ("raidlab.commands", "raidlab.cli", "raidlab.__main__")

#: Third-party modules a function may import when called, each with the optional extra of
#: pyproject.toml ([project.optional-dependencies]) that brings it (numpy arrives with pandas).
#: Everything else is imported at the top of its module.
OPTIONAL_HEAVY = {"pandas": "pandas", "pyarrow": "pyarrow", "ray": "ray", "matplotlib": "matplotlib", "numpy": "pandas"}

#: Imports allowed to break the layering while they are being removed, each with who removes it
#: (a test below fails while an entry names an import that is gone). Keys: (importing module,
#: imported module). Empty: the layering holds everywhere.
KNOWN_OFFENDERS: Dict[Tuple[str, str], str] = {}

def module_files() -> Dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    modules = {}
    for path in sorted((SOURCE_ROOT / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SOURCE_ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


MODULES = module_files()
#: The Rust extension: a module that imports nothing of the package, so it adds no edge.
EXTENSIONS = {"raidlab._core"}


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _absolute(importer: str, node: ast.ImportFrom) -> str:
    """The module a ``from ... import`` names, with a relative import resolved against the importer."""
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    if not _is_package(importer):
        base.pop()
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imported_names(importer: str, node: ast.stmt) -> List[str]:
    """The dotted names one import statement loads (``from pkg import sub`` loads ``pkg.sub``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = _absolute(importer, node)
    names = []
    for alias in node.names:
        candidate = f"{base}.{alias.name}"
        names.append(candidate if candidate in MODULES or candidate in EXTENSIONS else base)
    return names


def _ancestors(name: str) -> List[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def targets(importer: str, name: str) -> Set[str]:
    """raidlab modules whose code runs when ``importer`` imports ``name``.

    Importing ``a.b.c`` first runs the packages ``a`` and ``a.b``. The importer's own packages
    have already run (or are running) before the importer itself, so they add no edge."""
    own = set(_ancestors(importer))
    found = {name} if name in MODULES else set()
    found |= {parent for parent in _ancestors(name) if parent in MODULES and parent not in own}
    found.discard(importer)
    return found


def offender_keys(importer: str, name: str) -> Set[str]:
    """What a KNOWN_OFFENDERS key names for one import: the raidlab modules it runs, or the
    top-level name of a module from outside raidlab (``click``)."""
    if name == PACKAGE or name.startswith(PACKAGE + "."):
        return targets(importer, name)
    return {name.split(".")[0]}


def _statements(tree: ast.AST, in_function: bool = False) -> Iterator[Tuple[ast.stmt, bool]]:
    """Every import statement of a module, and whether it sits inside a function."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, in_function
        inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        yield from _statements(child, inner)


def scan() -> Tuple[Dict[str, Set[str]], List[Tuple[str, int, str]]]:
    """The import graph (every edge, wherever its import sits) and the imports inside functions."""
    graph: Dict[str, Set[str]] = {name: set() for name in MODULES}
    late: List[Tuple[str, int, str]] = []
    for importer, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node, in_function in _statements(tree):
            for name in imported_names(importer, node):
                found = targets(importer, name)
                graph[importer] |= {t for t in found if (importer, t) not in KNOWN_OFFENDERS}
                if in_function:
                    late.append((importer, node.lineno, name))
    return graph, late


GRAPH, LATE_IMPORTS = scan()


def _is_cli(name: str) -> bool:
    return any(name == cli or name.startswith(cli + ".") for cli in CLI_MODULES)


def path_to(start: str, goal, graph: Dict[str, Set[str]]) -> Optional[List[str]]:
    """The shortest import chain from ``start`` to a module ``goal(name)`` accepts, if any."""
    previous = {start: ""}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph[node]):
                if goal(nxt):
                    chain = [node]
                    while chain[-1] != start:
                        chain.append(previous[chain[-1]])
                    return chain[::-1] + [nxt]
                if nxt not in previous:
                    previous[nxt] = node
                    following.append(nxt)
        frontier = following
    return None


def find_cycle(graph: Dict[str, Set[str]]) -> Optional[List[str]]:
    """One cycle of the graph as module names (first = last), or None when it is acyclic."""
    for start in sorted(graph):
        chain = path_to(start, lambda name: name == start, graph)
        if chain:
            return chain
    return None


def test_the_library_never_imports_the_cli():
    offenders = []
    for name in sorted(MODULES):
        if _is_cli(name):
            continue
        chain = path_to(name, _is_cli, GRAPH)
        if chain:
            offenders.append(" -> ".join(chain))
    assert not offenders, "library modules reach the CLI:\n" + "\n".join(offenders)


def test_the_import_graph_has_no_cycle():
    cycle = find_cycle(GRAPH)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def _optional(importer: str, name: str) -> bool:
    return name.split(".")[0] in OPTIONAL_HEAVY


def test_modules_import_at_the_top_except_optional_dependencies():
    late = [
        f"{importer} line {line}: {name}"
        for importer, line, name in LATE_IMPORTS
        if not _optional(importer, name)
        and not any((importer, key) in KNOWN_OFFENDERS for key in offender_keys(importer, name))
    ]
    assert not late, "imports inside functions:\n" + "\n".join(late)


#: Modules that import by name at run time: the package itself, whose names load on first use.
IMPORTS_BY_NAME = {"raidlab"}


def _imports_by_name(tree: ast.AST) -> List[int]:
    """Lines calling ``importlib.import_module`` or ``__import__`` (an import the graph cannot see)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if (isinstance(func, ast.Attribute) and func.attr == "import_module") or \
                    (isinstance(func, ast.Name) and func.id in ("__import__", "import_module")):
                lines.append(node.lineno)
    return lines


def test_no_module_imports_another_by_name():
    found = [f"{name} line {line}" for name, path in sorted(MODULES.items()) if name not in IMPORTS_BY_NAME
             for line in _imports_by_name(ast.parse(path.read_text(encoding="utf-8")))]
    assert not found, "imports by name (importlib), which dodge the checks above:\n" + "\n".join(found)


def test_optional_heavy_modules_are_optional_extras():
    extras = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    declared = " ".join(sum(extras["project"]["optional-dependencies"].values(), []))
    required = " ".join(extras["project"]["dependencies"])
    for module, distribution in OPTIONAL_HEAVY.items():
        assert distribution in declared, f"{module} is imported late but {distribution} is no optional extra"
        assert distribution not in required, f"{distribution} is a required dependency; import {module} at the top"


def test_known_offenders_are_still_there():
    """An offender its owner has fixed (the import is gone, or now at the top of a library module
    and not of the CLI) comes out of KNOWN_OFFENDERS, so the table only shrinks and hides no edge."""
    offending = set()
    for importer, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node, in_function in _statements(tree):
            for name in imported_names(importer, node):
                for key in offender_keys(importer, name):
                    if (in_function and not _optional(importer, name)) or (not _is_cli(importer) and _is_cli(key)):
                        offending.add((importer, key))
    gone = sorted(set(KNOWN_OFFENDERS) - offending)
    assert not gone, f"fixed (no longer a late or library-to-CLI import), remove from KNOWN_OFFENDERS: {gone}"


@pytest.mark.parametrize("module", ["raidlab", "raidlab.run", "raidlab.outputs", "raidlab.sim", "raidlab.notes",
                                    "raidlab.planner", "raidlab.sweep", "raidlab.report.html"])
def test_importing_the_library_loads_neither_the_cli_nor_click(module):
    code = f"import json, sys, {module}; print(json.dumps(sorted(sys.modules)))"
    # the fresh interpreter imports the raidlab this test process imports (an install or a checkout)
    where = str(Path(importlib.util.find_spec(PACKAGE).origin).parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [where, os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    loaded = json.loads(done.stdout)
    assert "click" not in loaded, f"import {module} loads click"
    assert not [name for name in loaded if _is_cli(name)], f"import {module} loads the CLI"


def test_the_scan_sees_parent_packages_and_relative_imports():
    """The graph builder itself: a submodule import runs its packages; ``from . import x`` resolves."""
    assert targets("raidlab.sim", "raidlab.report.table") == {"raidlab.report.table", "raidlab.report"}
    assert targets("raidlab.report.table", "raidlab.report.steady") == {"raidlab.report.steady"}
    node = ast.parse("from . import steady").body[0]
    assert imported_names("raidlab.report.table", node) == ["raidlab.report.steady"]
    node = ast.parse("from .. import errors").body[0]
    assert imported_names("raidlab.report.table", node) == ["raidlab.errors"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


#: What ``dir(raidlab)`` listed (public names) when ``import raidlab`` imported every module eagerly.
PUBLIC_NAMES = [
    "Array", "ArrayError", "ConfigError", "DEFAULT_CHUNK_KIB", "DEFAULT_MEMBER_KIB", "DataLossError",
    "DeviceError", "LayoutError", "MAX_DEVICES", "RaidlabError", "RequestError", "SimResult", "WorkloadError",
    "array", "commands", "controllers", "drives", "errors", "hosts", "inputs", "layout", "load_sweep",
    "outputs", "planner", "rebuild", "reliability", "report", "run", "schema", "sim", "simulate", "stacked",
    "sweep", "units", "workload",
]


def test_the_lazy_package_keeps_its_names():
    """``import raidlab`` loads names on first use, yet lists and gives the same ones; ``raidlab.sweep``
    stays the function even once the package of the same name is loaded."""
    code = (
        "import json, types, raidlab\n"
        "names = sorted(n for n in dir(raidlab) if not n.startswith('_'))\n"
        "kinds = {n: type(getattr(raidlab, n)).__name__ for n in names}\n"
        "import raidlab.sweep.store\n"
        "print(json.dumps([names, kinds, callable(raidlab.sweep), raidlab.__version__]))\n"
    )
    where = str(Path(importlib.util.find_spec(PACKAGE).origin).parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [where, os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    names, kinds, sweep_callable, version = json.loads(done.stdout)
    assert names == PUBLIC_NAMES
    assert kinds["sweep"] == kinds["simulate"] == kinds["load_sweep"] == "function"
    assert kinds["planner"] == kinds["reliability"] == kinds["commands"] == "module"
    assert kinds["Array"] == kinds["ConfigError"] == "type" and sweep_callable and version
