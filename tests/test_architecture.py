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


def _module_names(src: Path) -> dict[str, Path]:
    """``gpuport.bench.model`` -> its file, for every module and package under ``src``."""
    out: dict[str, Path] = {}
    for path in src.rglob("*.py"):
        parts = list(path.relative_to(src.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _import_graph(src: Path) -> dict[str, set[str]]:
    """Module -> the modules of ``src`` it imports when it runs: at the top and inside
    functions alike (``from pkg import mod`` names the module ``mod``). Imports under ``if
    TYPE_CHECKING:`` never run (types only) and an import of one's own enclosing package is
    loaded before the module anyway: neither closes a cycle."""
    modules = _module_names(src)

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        names: set[str] = set()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for stmt in node.body
            for inner in ast.walk(stmt)
        }
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, *([node.module] if node.module else [])])
                subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules]
                names.update(subs)
                if len(subs) < len(node.names):
                    names.add(base)
        targets = {known(n) for n in names}
        graph[name] = {t for t in targets if t and t != name and not name.startswith(t + ".")}
    return graph


def _cycles_inside_packages(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of two or more modules of one top-level subpackage
    (``gpuport.bench``, ``gpuport.validate``, ...), by Tarjan's algorithm."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def package_of(name: str) -> str:
        return ".".join(name.split(".")[:2])

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if package_of(w) != package_of(v):
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle_inside_a_package() -> None:
    """The developers' guide: no import cycles inside a package (bench's model imported its
    checker, which imported the model; validate's op replay and fp64 arbitration imported
    each other). A result model's load-time check is registered by its package instead."""
    graph = _import_graph(SRC)
    assert {"gpuport.bench.verify", "gpuport.bench.model"} <= set(graph)
    assert "gpuport.bench.model" in graph["gpuport.bench.verify"]
    cycles = _cycles_inside_packages(graph)
    assert not cycles, f"import cycles inside a package: {cycles}"


def test_the_cycle_check_sees_a_cycle(tmp_path: Path) -> None:
    """The check itself: a cycle through a function-level import and a relative import is
    found; importing one's own package, or a module for types only, is not a cycle."""
    pkg = tmp_path / "gpuport" / "core"
    pkg.mkdir(parents=True)
    (tmp_path / "gpuport" / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "__init__.py").write_text("from gpuport.core.a import A\n", encoding="utf-8")
    (pkg / "a.py").write_text("import gpuport.core\nfrom . import b\nA = 1\n", encoding="utf-8")
    (pkg / "b.py").write_text("def f():\n    from gpuport.core.a import A\n", encoding="utf-8")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nfrom gpuport.core import A\n"
        "if TYPE_CHECKING:\n    from gpuport.core.d import D\n",
        encoding="utf-8",
    )
    (pkg / "d.py").write_text("from gpuport.core import c\nD = 1\n", encoding="utf-8")
    cycles = _cycles_inside_packages(_import_graph(tmp_path / "gpuport"))
    assert cycles == [["gpuport.core.a", "gpuport.core.b"]]
