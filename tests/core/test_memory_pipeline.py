"""core/memory/ reads in the order its data flows: no module imports a later step, directly or through
another core module, so a setting can be followed down the package without turning back."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "core.memory"
# settings → training setup → count (the lesson's, the detailed one, per stack) → phases → allocator →
# verdict → timeline → first_oom → fit (the longest sequence) → view, with `budget` (the terms every step
# fills) first and the H200 `reference` just before the view.
ORDER = (
    "budget",
    "settings",
    "finetune",
    "qlora",
    "sharding",
    "tensor_split",
    "setup",
    "model_state",
    "count",
    "lesson",
    "detailed",
    "hf_stack",
    "fused_stack",
    "tensor_parallel",
    "adapted",
    "phases",
    "allocator",
    "verdict",
    "timeline",
    "first_oom",
    "fit",
    "reference",
    "graded",
    "view",
)


def _module_path(module: str) -> Path:
    path = ROOT / Path(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def imported_modules(module: str) -> set[str]:
    """The `core` modules `module` imports anywhere in its code (a name from a package counts as the
    package, a submodule imported from a package as the submodule)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(_module_path(module).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == "core"}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "core":
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if _module_path(submodule).exists() else node.module)
    return found


def step_of(module: str) -> str | None:
    """The pipeline step a module is, or None outside the package (the package itself is `budget`,
    whose names it re-exports)."""
    if module == PACKAGE:
        return "budget"
    prefix = f"{PACKAGE}."
    return module.removeprefix(prefix) if module.startswith(prefix) else None


def later_steps_reached(step: str, imports: Callable[[str], set[str]] = imported_modules) -> list[list[str]]:
    """Import paths from `step` to a later step, directly or through core modules outside the package."""
    rank = ORDER.index(step)
    paths: list[list[str]] = []
    seen: set[str] = set()
    todo = [[f"{PACKAGE}.{step}", target] for target in imports(f"{PACKAGE}.{step}")]
    while todo:
        path = todo.pop()
        reached = step_of(path[-1])
        if reached is not None:
            if ORDER.index(reached) > rank:
                paths.append(path)
            continue  # each step's own imports are checked on its own
        if path[-1] in seen:
            continue
        seen.add(path[-1])
        todo += [[*path, target] for target in imports(path[-1])]
    return paths


def test_every_module_of_the_package_has_a_place_in_the_pipeline() -> None:
    modules = {p.stem for p in (ROOT / "core" / "memory").glob("*.py") if p.stem != "__init__"}
    assert modules == set(ORDER)


def test_the_package_re_exports_the_budget_terms_only() -> None:
    assert imported_modules(PACKAGE) == {f"{PACKAGE}.budget"}


@pytest.mark.parametrize("step", ORDER)
def test_no_step_imports_a_later_one(step: str) -> None:
    assert later_steps_reached(step) == [], f"{step} reaches a later step"


def test_the_check_finds_a_step_reaching_down_through_another_module() -> None:
    graph = {
        "core.memory.setup": {"core.memory.settings", "core.models"},
        "core.models": {"core.units", "core.report"},
        "core.units": set(),
        "core.report": {"core.memory.view", "core.models"},
    }
    assert later_steps_reached("setup", graph.__getitem__) == [
        ["core.memory.setup", "core.models", "core.report", "core.memory.view"]
    ]
    graph["core.report"] = {"core.memory.budget"}
    assert later_steps_reached("setup", graph.__getitem__) == []


def test_a_package_import_counts_as_the_module_it_names() -> None:
    assert "core.memory.budget" in imported_modules("core.memory.detailed")
    assert "core.memory.settings" in imported_modules("core.memory.setup")
