"""No module opens files itself: every read and write goes through ``gpuport.fileio``.

An AST walk over ``src/gpuport`` flags ``open(...)``, ``os.open``, ``Path.open``,
``read_text``/``read_bytes``/``write_text``/``write_bytes`` and ``shutil.copy*``
outside ``fileio``. The few remaining calls are listed below, each with why it is safe:
none reads a file of the project being scanned or a path a user named.
"""

from __future__ import annotations

import ast
from pathlib import Path

import gpuport

SRC = Path(gpuport.__file__).parent
_METHODS = {"open", "read_text", "read_bytes", "write_text", "write_bytes"}
_SHUTIL = {"copy", "copy2", "copyfile", "copyfileobj", "copytree", "move"}

#: (module, enclosing function, call) -> why it is allowed.
ALLOWED: dict[tuple[str, str, str], str] = {
    ("platform.py", "cpu_name", "read_text"): "/proc/cpuinfo: a machine file, not input",
    ("platform.py", "_driver_version", "read_text"): "/sys/module/amdgpu/version",
    ("doctor/context.py", "read_small", "os.open"): "probes read /sys and /proc (or a test's "
    "fake root): regular files only, bounded, never out of a fake root",
    ("doctor/probes_system.py", "_secure_boot", "read_bytes"): "an EFI variable under /sys",
    ("doctor/elf.py", "needed_libraries", "open"): "the ELF header of an installed library",
    ("bench/workloads/collectives_worker.py", "main", "read_text"): "gpuport's own spec file "
    "in its own temporary folder",
    ("bench/workloads/collectives_worker.py", "main", "write_text"): "the worker's result, "
    "in gpuport's own temporary folder",
    ("bench/workloads/collectives.py", "_tail", "open"): "a rank's log in gpuport's temp folder",
    ("bench/workloads/collectives.py", "launch_workers", "write_text"): "the spec, same folder",
    ("bench/workloads/collectives.py", "launch_workers", "open"): "a rank's log, same folder",
    ("bench/workloads/collectives.py", "launch_workers", "read_text"): "rank 0's result, same",
    ("knowledge/api_map.py", "load_api_map", "read_bytes"): "the API map bundled with gpuport",
    ("bench/workloads/membw.py", "cpu_cache_bytes", "read_text"): "/sys CPU cache sizes, "
    "a machine file",
    ("cli/common.py", "_gone", "os.open"): "os.open of /dev/null, put over a closed stdout",
    ("startup.py", "passwd_home", "open"): "/etc/passwd, bounded, before anything else may be "
    "imported (the file layer is not loaded yet; an NSS module would come from LD_LIBRARY_PATH)",
    ("scan/project/build_cmake_model.py", "make_uses", "open"): "a branch stack's open() method, "
    "not a file",
}


def _calls(tree: ast.AST) -> list[tuple[str, str, int]]:
    """(enclosing function, call name, line) of every file-opening call in ``tree``."""
    found: list[tuple[str, str, int]] = []

    def visit(node: ast.AST, func: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = func
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = child.name
            if isinstance(child, ast.Call):
                f = child.func
                if isinstance(f, ast.Name) and f.id == "open":
                    found.append((name, "open", child.lineno))
                elif isinstance(f, ast.Attribute):
                    base = f.value.id if isinstance(f.value, ast.Name) else ""
                    ours = base in {"fileio", "safetensors", "os"}
                    if f.attr in _METHODS and not ours:
                        found.append((name, f.attr, child.lineno))
                    if f.attr == "open" and base == "os":
                        found.append((name, "os.open", child.lineno))
                    if base == "shutil" and f.attr in _SHUTIL:
                        found.append((name, f"shutil.{f.attr}", child.lineno))
            visit(child, name)

    visit(tree, "<module>")
    return found


def test_no_module_opens_files_outside_fileio() -> None:
    offenders: list[str] = []
    used: set[tuple[str, str, str]] = set()
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel == "fileio.py":
            continue
        for func, call, line in _calls(ast.parse(path.read_text(encoding="utf-8"))):
            key = (rel, func, call)
            if key in ALLOWED:
                used.add(key)
            else:
                offenders.append(f"{rel}:{line} {func}: {call}(...)")
    assert not offenders, "open files through gpuport.fileio:\n" + "\n".join(offenders)
    stale = sorted(set(ALLOWED) - used)
    assert not stale, f"allow-list entries that no longer match anything: {stale}"


def test_the_check_catches_a_direct_read() -> None:
    """The detector itself: a plain ``Path.read_text`` in a function is reported."""
    tree = ast.parse("def f(p):\n    return p.read_text()\n\nopen('x')\n")
    assert _calls(tree) == [("f", "read_text", 2), ("<module>", "open", 4)]
