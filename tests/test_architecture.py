"""The rules of the house (docs/architecture.md), checked against the code as it stands.

Each test reads the shipped code (never the tests or benchmarks) and names every
place that breaks its rule, so a new module cannot quietly undo the layout.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("oloproof_core", "oloproof", "evalsite", "runs", "metrics")
ENGINE = "oloproof_core"
ENGINE_SURFACES = frozenset(
    {
        "oloproof_core",
        *(
            f"oloproof_core.{name}"
            for name in (
                "judging.evaluators",
                "stats",
                "results.compare",
                "gates",
                "models",
                "optimize",
                "labels",
            )
        ),
    }
)
"""What code outside the engine may import from: the engine and its curated subpackages."""

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 50

WRITERS: dict[str, frozenset[str]] = {
    **dict.fromkeys(
        ("System", "Release", "Run", "CaseResult", "Gate"), frozenset({"runs.writers.recording"})
    ),
    **dict.fromkeys(("Dataset", "DatasetCase"), frozenset({"runs.writers.dataset_recording"})),
    "RunChunk": frozenset({"runs.workers.chunks"}),
    **dict.fromkeys(
        (
            "Optimization",
            "OptimizationCandidate",
            "OptimizationEvaluation",
            "OptimizationReflection",
        ),
        frozenset({"runs.writers.optimization_records"}),
    ),
    "Approval": frozenset({"runs.services"}),
    "ApprovalRevocation": frozenset({"runs.services"}),
    "ApiToken": frozenset({"runs.writers.tokens"}),
    **dict.fromkeys(
        ("CaseAnnotation", "CaseAnnotationChange"), frozenset({"runs.writers.annotations"})
    ),
    "Label": frozenset({"runs.writers.labels"}),
    "CaseTranscript": frozenset({"runs.writers.transcripts"}),
    "Change": frozenset({"runs.writers.audit"}),
    **dict.fromkeys(("RunKeeping", "RunTag"), frozenset({"runs.writers.run_keeping"})),
    **dict.fromkeys(("Project", "Membership", "CodeRoot"), frozenset({"runs.writers.projects"})),
    **dict.fromkeys(
        ("CachedVerdict", "CaseVerdict", "Evaluator", "MetricEstimate"),
        frozenset({"metrics.services"}),
    ),
}
"""Each table's one writing module."""
WRITE_METHODS = frozenset(
    {
        "create",
        "bulk_create",
        "update",
        "update_or_create",
        "get_or_create",
        "delete",
        "bulk_update",
    }
)


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    tree: ast.Module

    @property
    def lines(self) -> int:
        return len(self.path.read_text(encoding="utf-8").splitlines())


def shipped_modules() -> Iterator[Module]:
    paths = [ROOT / "skynet.py"]
    for package in PACKAGES:
        paths += sorted((ROOT / package).rglob("*.py"))
    for path in paths:
        relative = path.relative_to(ROOT)
        if "migrations" in relative.parts:
            continue
        name = ".".join(relative.with_suffix("").parts).removesuffix(".__init__")
        yield Module(name, path, ast.parse(path.read_text(encoding="utf-8")))


def _imports(module: Module) -> Iterator[tuple[int, str, list[str]]]:
    """(line, imported module, names) for every import, lazy ones included."""
    for node in ast.walk(module.tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module, [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []


def _package(name: str) -> str:
    return name.split(".")[0]


def test_the_import_layers_and_the_engines_independence_hold() -> None:
    """Layers and forbidden imports as declared in pyproject.toml ([tool.importlinter])."""
    linter = Path(sys.executable).with_name("lint-imports")
    checked = subprocess.run(
        [str(linter), "--no-cache", "--config", str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_no_module_imports_itself_through_others() -> None:
    """No import circle, counting every import: lazy ones and those for type checking
    alone, which tie a data class to its readers as firmly as any other."""
    graph = grimp.build_graph(*PACKAGES, exclude_type_checking_imports=False, cache_dir=None)
    cycles = [cycle for cycle in _cycles(graph) if len(cycle) > 1]
    assert not cycles, "import cycles (type-checking and lazy imports included):\n" + "\n".join(
        " -> ".join(cycle) for cycle in cycles
    )


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of the module graph (Tarjan), as sorted name lists."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
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
                    found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_code_outside_the_engine_imports_only_its_curated_surfaces() -> None:
    offences = [
        f"{module.path.relative_to(ROOT)}:{line}: imports {imported}"
        for module in shipped_modules()
        if _package(module.name) != ENGINE
        for line, imported, _ in _imports(module)
        if _package(imported) == ENGINE and imported not in ENGINE_SURFACES
    ]
    assert not offences, "\n".join(offences)


def test_no_private_name_crosses_a_package() -> None:
    offences = []
    for module in shipped_modules():
        for line, imported, names in _imports(module):
            if _package(imported) not in (*PACKAGES, "skynet"):
                continue
            if _package(imported) == _package(module.name):
                continue
            private = [name for name in names if name.startswith("_") and name != "__version__"]
            private_module = any(part.startswith("_") for part in imported.split("."))
            if private or private_module:
                offences.append(
                    f"{module.path.relative_to(ROOT)}:{line}: {imported} {private or ''}"
                )
    assert not offences, "\n".join(offences)


def test_every_curated_surface_lists_what_it_exports() -> None:
    import importlib

    for name in sorted(ENGINE_SURFACES):
        surface = importlib.import_module(name)
        exported = getattr(surface, "__all__", None)
        assert exported, f"{name} has no __all__"
        missing = [item for item in exported if not hasattr(surface, item)]
        assert not missing, f"{name}.__all__ names what it does not define: {missing}"


def test_no_lazy_export_shares_its_name_with_a_module() -> None:
    """A surface's names load on first use; a module of the same name, once imported,
    would take the name's place (`oloproof_core.system` the module, not the decorator)."""
    import importlib
    import pkgutil

    for name in sorted({*ENGINE_SURFACES, "oloproof"}):
        surface = importlib.import_module(name)
        modules = {info.name for info in pkgutil.iter_modules(getattr(surface, "__path__", []))}
        clashes = sorted(modules & set(getattr(surface, "__all__", ())))
        assert not clashes, f"{name} exports names that are also its modules: {clashes}"


def test_modules_and_functions_stay_small() -> None:
    offences = []
    for module in shipped_modules():
        if module.lines > MAX_MODULE_LINES:
            offences.append(f"{module.path.relative_to(ROOT)}: {module.lines} lines")
        for node in ast.walk(module.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    offences.append(
                        f"{module.path.relative_to(ROOT)}:{node.lineno}: {node.name}() "
                        f"is {length} lines"
                    )
    assert not offences, (
        f"modules over {MAX_MODULE_LINES} lines or functions over {MAX_FUNCTION_LINES}:\n"
        + "\n".join(offences)
    )


def test_each_table_has_one_writing_module() -> None:
    offences = []
    for module in shipped_modules():
        for node in ast.walk(module.tree):
            model = _written_model(node)
            if model is not None and module.name not in WRITERS[model]:
                offences.append(
                    f"{module.path.relative_to(ROOT)}:{node.lineno}: writes {model} "
                    f"(its writer is {', '.join(sorted(WRITERS[model]))})"
                )
    assert not offences, "\n".join(offences)


def _written_model(node: ast.AST) -> str | None:
    """`Model` when `node` is a call like `Model.objects.filter(...).update(...)`."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    if node.func.attr not in WRITE_METHODS:
        return None
    receiver: ast.AST = node.func.value
    while True:
        if isinstance(receiver, ast.Call):
            receiver = receiver.func
        elif isinstance(receiver, ast.Attribute):
            if receiver.attr == "objects" and isinstance(receiver.value, ast.Name):
                name = receiver.value.id
                return name if name in WRITERS else None
            receiver = receiver.value
        else:
            return None


def test_the_public_package_asks_the_database_nothing_itself() -> None:
    """`oloproof/` wires faces to the platform: a question for the database is a selector's
    or a service's, so the public package holds no ORM query (`X.objects`, `get_user_model`)."""
    offences = [
        f"{module.path.relative_to(ROOT)}:{line}: {what}"
        for module in shipped_modules()
        if _package(module.name) == "oloproof"
        for line, what in _orm_uses(module.tree)
    ]
    assert not offences, "the public package queries the database itself:\n" + "\n".join(offences)


def _orm_uses(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "objects":
            yield node.lineno, "a model manager (.objects)"
        elif isinstance(node, ast.Name | ast.alias) and "get_user_model" in (
            node.id if isinstance(node, ast.Name) else node.name
        ):
            yield node.lineno, "get_user_model"


def test_the_checks_themselves_see_a_cycle_and_a_write() -> None:
    """The two hand-written detectors, on planted input: a rule that cannot fail proves nothing."""
    graph = grimp.ImportGraph()
    for first, second in (("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")):
        graph.add_import(importer=first, imported=second)
    assert [cycle for cycle in _cycles(graph) if len(cycle) > 1] == [["a", "b", "c"]]
    tree = ast.parse("Run.objects.filter(pk=1).update(status='x')\nRun.objects.filter(pk=1)\n")
    assert [_written_model(node) for node in ast.walk(tree) if _written_model(node)] == ["Run"]
    planted = ast.parse("from django.contrib.auth import get_user_model\nUser.objects.exists()\n")
    assert [line for line, _ in _orm_uses(planted)] == [1, 2]
