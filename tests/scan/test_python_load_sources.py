"""GP211 on ``cpp_extension.load()``: sources named from the project's root count as named
(their kernels are judged in their own files), and nvcc-only flags passed through a name are
reported at the flag, once per list."""

from __future__ import annotations

from pathlib import Path

from gpuport.scan import ScanOptions, scan_path

KERNEL = "__global__ void k(float* x) { x[threadIdx.x] = 0; }\n"
MODULE = """\
from torch.utils.cpp_extension import load

flags = [
    "-O3",
    "--use_fast_math",
]
a = load(name="a", sources=["{src}"], extra_cuda_cflags=flags)
b = load(name="b", sources=["{src}"], extra_cuda_cflags=flags)
"""


def _gp211(tmp_path: Path, src: str, files: dict[str, str]) -> list[tuple[int, bool, str]]:
    for rel, text in {"pkg/ops.py": MODULE.format(src=src), **files}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    found = scan_path(tmp_path, ScanOptions(jobs=1)).findings
    return sorted(
        (f.location.line, f.guarded, f.severity.value) for f in found if f.rule_id == "GP211"
    )


def test_sources_named_from_the_root_are_judged_in_their_own_files(tmp_path: Path) -> None:
    got = _gp211(tmp_path, "csrc/k.cu", {"csrc/k.cu": KERNEL})
    calls = [g for g in got if g[0] in (7, 8)]
    assert [(line, guarded) for line, guarded, _ in calls] == [(7, True), (8, True)]
    # the flag, in the list both calls share, is reported once, where it is written
    assert [(line, guarded) for line, guarded, _ in got if line == 5] == [(5, False)]


def test_a_missing_source_keeps_the_call_a_finding(tmp_path: Path) -> None:
    got = _gp211(tmp_path, "csrc/k.cu", {})  # the kernel is not in the project
    assert [(line, guarded) for line, guarded, _ in got if line in (7, 8)] == [
        (7, False),
        (8, False),
    ]


def test_a_source_above_the_root_is_not_named(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text(KERNEL)
    root = tmp_path / "proj"
    got = _gp211(root, "../k.cu", {})
    assert all(not guarded for line, guarded, _ in got if line in (7, 8))
