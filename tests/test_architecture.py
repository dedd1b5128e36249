"""docs/ARCHITECTURE.md stays true: the paths it names exist, every package is described,
the layer rules hold, and nothing in the repository needs a folder outside the checkout."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "gpuport"
DOC = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
CORES = ("scan", "hipify", "bench", "validate", "cost", "doctor", "knowledge")
FORBIDDEN_IN_CORES = ("gpuport.cli", "gpuport.render", "rich", "typer")


def test_every_path_the_document_names_exists() -> None:
    named = set(re.findall(r"`((?:src|tests|tools|docs|examples|benchmarks)/[^`\s]+)`", DOC))
    assert len(named) > 10
    missing = [p for p in sorted(named) if not list(REPO.glob(p.rstrip("/")))]
    assert not missing, f"ARCHITECTURE.md names paths that do not exist: {missing}"


def test_every_package_is_described() -> None:
    packages = sorted(
        str(p.parent.relative_to(REPO)) for p in SRC.rglob("__init__.py") if p.parent != SRC
    )
    undocumented = [p for p in packages if f"{p}/" not in DOC and f"`{p}`" not in DOC]
    assert not undocumented, f"packages missing from docs/ARCHITECTURE.md: {undocumented}"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
    return out


def test_cores_never_import_cli_or_rendering() -> None:
    bad = []
    for core in CORES:
        for path in (SRC / core).rglob("*.py"):
            for name in _imports(path):
                if any(name == f or name.startswith(f + ".") for f in FORBIDDEN_IN_CORES):
                    bad.append(f"{path.relative_to(REPO)} imports {name}")
    assert not bad, bad


def test_nothing_refers_outside_the_checkout() -> None:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    if listed.returncode == 0:
        files = [REPO / n for n in listed.stdout.splitlines()]
    else:  # an isolated copy without .git (.ci/run)
        files = [p for p in REPO.rglob("*") if ".venv" not in p.parts and "build" not in p.parts]
    this = Path(__file__).resolve()
    offenders = []
    for path in files:
        if not path.is_file() or path.resolve() == this or path.suffix in {".whl", ".gz"}:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if any(f"{up}/shared" in text for up in ("..", "/work")):  # the reference folders
            offenders.append(str(path.relative_to(REPO)))
    assert not offenders, f"files that need a folder outside the checkout: {offenders}"


MAX_MODULE_LINES = 600


def test_no_module_over_600_lines() -> None:
    """The developers' guide: no module over 600 lines; split along a seam instead."""
    modules = sorted(SRC.rglob("*.py"))
    assert len(modules) > 50
    sizes = {p: len(p.read_text(encoding="utf-8").splitlines()) for p in modules}
    over = [f"{p.relative_to(REPO)} ({n} lines)" for p, n in sizes.items() if n > MAX_MODULE_LINES]
    assert not over, f"modules over {MAX_MODULE_LINES} lines: {over}"


def test_the_project_model_imports_no_rule_family() -> None:
    """scan/project/ (issue 24): the project model is read before the rules and never depends
    on a rule family; the families (scan/rules/<family>/) may import the model."""
    families = [p.name for p in (SRC / "scan" / "rules").iterdir() if (p / "__init__.py").exists()]
    assert "native" in families
    bad = []
    for path in (SRC / "scan" / "project").rglob("*.py"):
        for name in _imports(path):
            if any(name.startswith(f"gpuport.scan.rules.{f}") for f in families):
                bad.append(f"{path.relative_to(REPO)} imports {name}")
            if name in ("gpuport.scan.engine", "gpuport.scan.verdict"):
                bad.append(f"{path.relative_to(REPO)} imports {name} (above the model)")
    assert not bad, bad
