"""cpp_extension.load()/load_inline() at run time: extra_cuda_cflags get their HIP form."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.port.helpers import fix_ids, project, run

KERNEL = "__global__ void k(float* x) { x[threadIdx.x] = 0; }\n"
MODULE = """\
import os
import torch
from torch.utils.cpp_extension import load

flags = [
    "-res-usage",
    f"-D_C_={os.environ.get('C', '64')}",
    "--use_fast_math",
    "-O3",
    "-Xptxas -O3",
    "--extra-device-vectorization",
]
ext = load(name="k", sources=["cuda/k.cu"], verbose=True, extra_cuda_cflags=flags)
"""


def _flags(text: str, hip: object) -> list[str]:
    """The flags list the module passes, evaluated with torch.version.hip = ``hip``."""
    tree = ast.parse(text)
    stmt = next(
        s
        for s in tree.body
        if isinstance(s, ast.Assign) and getattr(s.targets[0], "id", "") == "flags"
    )

    class _V:
        hip = None

    class _T:
        version = _V()

    _T.version.hip = hip  # type: ignore[assignment]
    env = {"torch": _T, "os": __import__("os")}
    return list(eval(compile(ast.Expression(stmt.value), "m", "eval"), env))  # noqa: S307


def test_load_flags_get_their_hip_form(tmp_path: Path) -> None:
    # sources named from the working directory, not beside the module: scan reports the call
    root = project(tmp_path, {"src/model.py": MODULE, "cuda/k.cu": KERNEL})
    report = run(root, apply=True)
    assert "load-hip-flags:src/model.py" in fix_ids(report, applied=True)
    text = (root / "src/model.py").read_text()
    cuda = _flags(MODULE, None)
    assert _flags(text, None) == cuda  # CUDA torch: the same flags
    assert _flags(text, "6.2") == ["-D_C_=64", "-ffast-math", "-O3"]  # hipcc's
    assert run(root).files == []  # idempotent
    fix = next(f for f in report.fixes if f.id == "load-hip-flags:src/model.py")
    # the call is judged in its sources (named from the root); the flags are the findings
    assert fix.safe and [(r.rule_id, r.line) for r in fix.findings] == [("GP211", 8), ("GP211", 10)]


def test_inline_list_and_load_inline(tmp_path: Path) -> None:
    src = (
        "from torch.utils import cpp_extension\n"
        "m = cpp_extension.load_inline(name='m', cpp_sources='',"
        " cuda_sources='__global__ void k(){}',"
        " extra_cuda_cflags=['-O2', '--expt-relaxed-constexpr'], with_cuda=True)\n"
    )
    root = project(tmp_path, {"m.py": src})
    report = run(root, apply=True)
    text = (root / "m.py").read_text()
    assert "(['-O2'] if torch.version.hip else ['-O2', '--expt-relaxed-constexpr'])" in text
    assert text.startswith("from torch.utils import cpp_extension\nimport torch")
    assert "load-hip-flags:m.py" in fix_ids(report, applied=True)


def test_load_flags_left_where_unclear_or_not_needed(tmp_path: Path) -> None:
    cases = {
        # assigned twice: which list reaches load() is not clear from the text
        "twice": MODULE.replace("ext = load", "flags = ['-O3']\next = load"),
        # hipcc takes every flag
        "clean": MODULE.replace('    "-res-usage",\n', "")
        .replace('    "--use_fast_math",\n', "")
        .replace('    "-Xptxas -O3",\n', "")
        .replace('    "--extra-device-vectorization",\n', ""),
        # the project already branches on ROCm
        "guarded": MODULE.replace("flags = [", "if torch.version.hip is None:\n  flags = [")
        .replace("\n    ", "\n      ")
        .replace("\n]", "\n  ]\nelse:\n  flags = ['-O3']"),
    }
    for name, text in cases.items():
        root = project(tmp_path / name, {"src/model.py": text, "cuda/k.cu": KERNEL})
        assert not any(i.startswith("load-hip-flags") for i in fix_ids(run(root))), name


def test_a_rewritten_file_keeps_its_utf8_bom(tmp_path: Path) -> None:
    # twenty-first re-run (cosmetic): --apply dropped the BOM of a file it rewrote
    root = project(tmp_path, {"cuda/k.cu": KERNEL})
    (root / "src").mkdir()
    (root / "src/model.py").write_bytes(b"\xef\xbb\xbf" + MODULE.encode())
    report = run(root, apply=True)
    assert "load-hip-flags:src/model.py" in fix_ids(report, applied=True)
    data = (root / "src/model.py").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and not data.startswith(b"\xef\xbb\xbf" * 2)
    assert b"torch.version.hip" in data
    assert run(root).files == []  # idempotent
