"""The import structure of ``course`` and ``scheduler``: no cycles, ``scheduler`` independent of ``course``,
no module reading another module's private names, and the house's wings: each entered only through its
``__init__`` from outside it, and no arrow from a lower floor to a higher one. Inside a wing, importing a
private *module* (``course.bank._kinds``) is fine: its public names are the wing's internal API."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("course", "scheduler")

# The wings of `course`, each a package entered through its __init__ (`checkers` and `widgets` are the
# notebooks' own, at the root; `scheduler.postgres` is the classroom's store, `scheduler.service` the class
# service in front of it).
WINGS = (
    "course.bank",
    "course.checkers",
    "course.classroom",
    "course.progress",
    "course.publishing",
    "course.terminal",
    "course.widgets",
    "scheduler.postgres",
    "scheduler.service",
)
# The floors, lowest first: a module imports only from its own floor or those below (its own floor: within
# a wing, or the lesson maths among themselves). A new module is given its floor here.
FLOORS = (
    ("scheduler",),
    ("scheduler.postgres",),
    ("scheduler.service",),  # the class service and its client, over scheduler.postgres
    (  # what the lessons import: the maths, its checkers, the figures, the lesson list, the seed
        "course.attention",
        "course.block",
        "course.checkers",
        "course.diagrams",
        "course.efficient",
        "course.gpt",
        "course.grouped",
        "course.lessons",
        "course.log_space",
        "course.plots",
        "course.positions",
        "course.seeds",
        "course.seq2seq",
    ),
    ("course.bank",),
    ("course.progress",),
    ("course.classroom",),
    ("course.publishing",),
    ("course.widgets", "course.explorers"),
    ("course.terminal",),
    ("course", "course.__main__", "course.outlook"),  # the lazy front door, `python -m course`, a stand-in
)


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()
TREES = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in MODULES.items()}


def _runtime_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements that run; those under ``if TYPE_CHECKING:`` are left out."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            stack.extend(node.orelse)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        else:
            stack.extend(ast.iter_child_nodes(node))


def _imports(name: str, node: ast.Import | ast.ImportFrom) -> Iterator[tuple[str, str | None]]:
    """(module, name) for each of our modules that `node` (in module `name`) imports from; name None when
    the module itself is imported."""
    if isinstance(node, ast.Import):
        yield from ((alias.name, None) for alias in node.names if alias.name in MODULES)
        return
    base = node.module or ""
    if node.level:
        package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{base}".rstrip(".")
    if base not in MODULES:
        return
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        yield (submodule, None) if submodule in MODULES else (base, alias.name)


def _graph() -> dict[str, set[str]]:
    return {
        name: {
            module for node in _runtime_imports(tree) for module, _ in _imports(name, node) if module != name
        }
        for name, tree in TREES.items()
    }


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the modules along it, or None."""
    done: set[str] = set()
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done:
            return None
        path.append(module)
        for target in sorted(graph[module]):
            found = visit(target)
            if found:
                return found
        path.pop()
        done.add(module)
        return None

    for module in sorted(graph):
        found = visit(module)
        if found:
            return found
    return None


def test_there_are_modules_to_check() -> None:
    assert {"course", "course.bank", "scheduler", "scheduler._store"} <= MODULES.keys()


def test_scheduler_imports_nothing_from_course() -> None:
    graph = _graph()
    assert {
        m: sorted(graph[m])
        for m in graph
        if m.startswith("scheduler") and any(target.startswith("course") for target in graph[m])
    } == {}


def test_no_import_cycles() -> None:
    assert _cycle(_graph()) is None


def test_no_import_cycles_for_the_type_checker_either() -> None:
    """Imports under ``if TYPE_CHECKING:`` count too: a type two modules share lives in a third that both
    import (``course.checkers._result``'s CheckResult, for the engine and the listeners)."""
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for importer, module in _all_imports():
        graph[importer].add(module)
    assert _cycle(graph) is None


MAX_LINES = 600


def test_no_module_is_longer_than_600_lines() -> None:
    """A module that grows past this is split by concern (``_block`` and ``_layer_norm``)."""
    lines = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in MODULES.items()}
    assert {name: count for name, count in lines.items() if count > MAX_LINES} == {}


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_module_imports_another_modules_private_names() -> None:
    private = sorted(
        f"{name} imports {module}.{imported}"
        for name, tree in TREES.items()
        for node in _runtime_imports(tree)
        for module, imported in _imports(name, node)
        if imported is not None and imported.startswith("_") and not imported.startswith("__")
    )
    assert private == []


def _own_private_names(tree: ast.Module) -> set[str]:
    """Private names a module defines: functions, classes, attributes set on ``self`` or ``cls``."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return {name for name in names if name.startswith("_")}


def _package(module: str) -> str:
    return module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]


def test_no_module_reads_another_modules_private_attributes() -> None:
    """``x._name`` only where the module defines ``_name``; ``self._name`` also where its package does (a
    subclass may use its base class's hooks inside one package, never across packages)."""
    own = {name: _own_private_names(tree) for name, tree in TREES.items()}
    package_own: dict[str, set[str]] = {}
    for name, names in own.items():
        package_own.setdefault(_package(name), set()).update(names)
    found = []
    for name, tree in TREES.items():
        for node in ast.walk(tree):
            if (
                not isinstance(node, ast.Attribute)
                or not node.attr.startswith("_")
                or node.attr.startswith("__")
            ):
                continue
            on_self = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            allowed = package_own[_package(name)] if on_self else own[name]
            if node.attr not in allowed:
                found.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    assert found == []


def test_only_the_postgres_store_imports_psycopg() -> None:
    """psycopg is optional (the ``postgres`` extra): only the classroom store's modules import it, and nothing
    that ``import scheduler`` runs imports them."""
    importers = sorted(
        name
        for name, tree in TREES.items()
        for node in _runtime_imports(tree)
        if any(
            imported == "psycopg" or imported.startswith("psycopg.")
            for imported in (
                [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            )
        )
    )
    assert "scheduler.postgres._store" in importers
    assert [name for name in importers if not name.startswith("scheduler.postgres.")] == []
    graph = _graph()
    reached, stack = set(), ["scheduler"]
    while stack:
        module = stack.pop()
        if module not in reached:
            reached.add(module)
            stack.extend(graph[module])
    assert not ({"scheduler.postgres", *importers} & reached)


def _room(module: str) -> str:
    """The entry of `FLOORS` that `module` belongs to: the longest that is it or a package above it."""
    rooms = [room for floor in FLOORS for room in floor if module == room or module.startswith(room + ".")]
    assert rooms, f"{module} is on no floor: give it one in FLOORS"
    return max(rooms, key=len)


def _floor(module: str) -> int:
    room = _room(module)
    return next(level for level, floor in enumerate(FLOORS) if room in floor)


def _all_imports() -> Iterator[tuple[str, str]]:
    """(importer, imported module) for every import of one of our modules, type-checking ones included."""
    for name, tree in TREES.items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for module, _ in _imports(name, node):
                    if module != name:
                        yield name, module


def test_the_course_root_keeps_what_the_notebooks_import() -> None:
    root = sorted(name for name in MODULES if name.startswith("course.") and name.count(".") == 1)
    assert root == [
        "course.__main__",
        "course.attention",
        "course.bank",
        "course.block",
        "course.checkers",
        "course.classroom",
        "course.diagrams",
        "course.efficient",
        "course.explorers",
        "course.gpt",
        "course.grouped",
        "course.lessons",
        "course.log_space",
        "course.outlook",
        "course.plots",
        "course.positions",
        "course.progress",
        "course.publishing",
        "course.seeds",
        "course.seq2seq",
        "course.terminal",
        "course.widgets",
    ]
    assert all(MODULES[wing].name == "__init__.py" for wing in WINGS)


def test_every_module_has_a_floor() -> None:
    assert [
        name for name in MODULES if not any(name == r or name.startswith(r + ".") for f in FLOORS for r in f)
    ] == []


def test_a_wing_is_entered_only_through_its_init() -> None:
    """From outside a wing, only the wing itself is imported, never one of its modules."""
    inner = sorted(
        {
            f"{importer} imports {module}"
            for importer, module in _all_imports()
            for wing in WINGS
            if module.startswith(wing + ".") and not (importer == wing or importer.startswith(wing + "."))
        }
    )
    assert inner == []


def test_no_arrow_goes_up_a_floor() -> None:
    upward = sorted(
        f"{importer} (floor {_floor(importer)}) imports {module} (floor {_floor(module)})"
        for importer, module in _all_imports()
        if _floor(module) > _floor(importer)
    )
    assert upward == []


def test_the_floor_check_finds_an_arrow_up() -> None:
    assert _floor("course.bank._kinds") == _floor("course.bank") < _floor("course.progress._keeping")
    assert _room("course.widgets._quiz") == "course.widgets"


def test_the_bank_progress_classroom_and_terminal_load_no_ipywidgets_torch_or_matplotlib() -> None:
    """The renderer is the bank's, so the terminal and the Anki export never load the notebook's widgets."""
    code = (
        "import sys, course.bank, course.progress, course.classroom, course.terminal.cli; "
        "print(sorted(m for m in ('ipywidgets', 'torch', 'matplotlib', 'psycopg') if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert loaded.stdout == "[]\n"
