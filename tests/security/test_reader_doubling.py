"""Issue 23, item 4: every reader of project or result files takes linear time.

The readers and their inputs are those of ``benchmarks/reader_doubling.py`` (which times each
form at 50, 100, 200 and 400 KB; figures in docs/PERFORMANCE.md). Here one form per reader,
its worst, is timed at n and 2n bytes, best of three: doubling the input may at most about
double the time (2.5x, as the issue's bound), with a little additive slack so timings of a
few milliseconds do not flake; a machine busy with other work is allowed three tries, a
quadratic reader fails all of them. Also: the benchmark covers every kind of file scan reads.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from gpuport.scan.rules.base import FileKind

REPO = Path(__file__).resolve().parents[2]
N = 16_000  # bytes; 2n is timed too


def _bench(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


PATHOLOGICAL = _bench("pathological_inputs")
DOUBLING = _bench("reader_doubling")

#: The form of each reader the suite times: the one that was (or came nearest to) quadratic.
FORM = {
    "scan-requirements": "options",
    "scan-pyproject": "extras",
    "scan-setup-py": "doubling",
    "scan-setup-cfg": "requires",
    "scan-conda": "flow",
    "scan-dockerfile": "heredoc",
    "scan-compose": "services",
    "scan-python": "flags",
    "scan-cuda": "launch",
    "scan-cmake": "sets",
    "scan-makefile": "comment",
    "scan-readme": "installs",
    "scan-ci-workflow": "runs-on",
    "scan-gitignore": "stars",
    "scan-git-index": "deep-path",
    "hipify-translate": "raw-string",
    "hipify-makefile": "spaces",
    "hipify-cmake": "sources",
    "hipify-check-compile-db": "entries",
    "hipify-check-makefile": "flags",
    "hipify-check-cmake": "defs",
    "assess-gpuport-toml": "string",
    "assess-tool-table": "headers",
    "result-bench-json": "samples",
    "result-validate-json": "rows",
    "result-gpv-header": "left-out",
    "result-doctor-snapshot": "dmesg",
    "knowledge-packages": "entries",
    "knowledge-gpus": "comments",
    "model-config": "many-keys",
}

#: The kind of file each scan reader's project is made of; GPU binaries are listed, not read.
KINDS = {
    "scan-requirements": FileKind.REQUIREMENTS,
    "scan-pyproject": FileKind.PYPROJECT,
    "scan-setup-py": FileKind.SETUP_PY,
    "scan-setup-cfg": FileKind.SETUP_CFG,
    "scan-conda": FileKind.CONDA_ENV,
    "scan-dockerfile": FileKind.DOCKERFILE,
    "scan-compose": FileKind.COMPOSE,
    "scan-python": FileKind.PYTHON,
    "scan-cuda": FileKind.NATIVE,
    "scan-cmake": FileKind.CMAKE,
    "scan-makefile": FileKind.MAKEFILE,
}


def test_every_reader_is_timed_and_every_scanned_kind_has_a_reader() -> None:
    names = [r.name for r in DOUBLING.READERS]
    assert len(names) == len(set(names))
    assert set(FORM) == set(names)
    for reader in DOUBLING.READERS:
        assert FORM[reader.name] in {f.name for f in reader.forms}, reader.name
    assert set(KINDS.values()) == set(FileKind) - {FileKind.GPU_BINARY}


@pytest.mark.parametrize("name", sorted(FORM))
def test_reader_takes_linear_time(name: str) -> None:
    reader = next(r for r in DOUBLING.READERS if r.name == name)
    form = next(f for f in reader.forms if f.name == FORM[name])
    run = DOUBLING.runner(reader, form)
    run(1000)  # warm: knowledge, API map, compiled patterns
    reference = PATHOLOGICAL.REFERENCE_CALIBRATION_S
    for _attempt in range(3):
        scale = max(1.0, min(PATHOLOGICAL.calibrate() for _ in range(3)) / reference)
        t1 = t2 = float("inf")
        for _ in range(3):
            t1 = min(t1, run(N))
            t2 = min(t2, run(2 * N))
        if t2 <= 2.5 * t1 + 0.02 * scale:
            return
    raise AssertionError(f"{name}/{form.name}: {t1:.3f} s at {N} B, {t2:.3f} s at {2 * N} B")
