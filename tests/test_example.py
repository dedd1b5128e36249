"""`gpuport scan examples/llm-service` finds each planted hazard at the right line.

Lines are located by their text, not by number, so the example can be edited; the
test fails if a hazard is missed, lands on another line, or if anything in the
ROCm-guarded branch is reported above info.
"""

from __future__ import annotations

import pytest

from gpuport.models import Severity
from gpuport.scan import ScanReport, scan_path
from tests.conftest import EXAMPLE

# (file, text on the line, rule, severity)
PLANTED = [
    (
        "requirements.txt",
        "--extra-index-url https://download.pytorch.org/whl/cu121",
        "GP104",
        "blocker",
    ),
    ("requirements.txt", "torch==2.3.1+cu121", "GP105", "blocker"),
    ("requirements.txt", "torch==2.3.1+cu121", "GP102", "info"),  # one construct: GP105
    ("requirements.txt", "flash-attn==2.6.3", "GP102", "minor"),  # an install step
    ("requirements.txt", "bitsandbytes==0.43.1", "GP107", "major"),
    ("requirements.txt", "xformers==0.0.27", "GP102", "minor"),
    ("requirements.txt", "nvidia-ml-py>=12.535", "GP101", "major"),
    # the define is never used in its file: it decides nothing (issue 24, fourteenth sample)
    ("csrc/fused_rmsnorm.cu", "#define WARP_SIZE 32", "GP303", "info"),
    ("csrc/fused_rmsnorm.cu", "for (int offset = 16; offset > 0; offset >>= 1)", "GP305", "major"),
    ("csrc/fused_rmsnorm.cu", "v += __shfl_xor_sync(0xffffffff, v, offset);", "GP302", "blocker"),
    ("csrc/fused_rmsnorm.cu", 'asm("rsqrt.approx.f32 %0, %1;"', "GP301", "blocker"),
    ("csrc/fused_rmsnorm.cu", "__shared__ float warp_sums[32];", "GP306", "minor"),
    ("csrc/fused_rmsnorm.cu", "const int lane = threadIdx.x & 31;", "GP304", "major"),
    ("csrc/fused_rmsnorm.cu", "const int warp = threadIdx.x >> 5;", "GP304", "major"),
    ("csrc/fused_rmsnorm.cu", "unsigned mask = __ballot_sync(0xffffffff, 1);", "GP307", "info"),
    ("csrc/fused_rmsnorm.cu", "return __popc(mask);", "GP307", "major"),
    ("setup.py", '"--use_fast_math",', "GP402", "major"),
    ("setup.py", '"-gencode", "arch=compute_80,code=sm_80",', "GP403", "info"),  # GP402's
    ("setup.py", "CUDAExtension(", "GP404", "minor"),  # advice
    ("service/gpu_info.py", "import pynvml", "GP203", "major"),
    ("service/gpu_info.py", "pynvml.nvmlInit()", "GP203", "major"),
    ("service/gpu_info.py", 'os.environ["CUDA_VISIBLE_DEVICES"]', "GP218", "info"),
    ("service/model.py", "if major == 9:  # Hopper", "GP205", "major"),
    ("service/model.py", "torch.backends.cudnn.benchmark = True", "GP216", "minor"),
    ("service/model.py", 'torch.compile(model, mode="reduce-overhead")', "GP215", "minor"),
    ("service/model.py", "return torch.float8_e4m3fn", "GP208", "minor"),  # storage, no GEMM
    ("deploy/Dockerfile", "FROM nvidia/cuda:", "GP501", "blocker"),
    ("deploy/Dockerfile", "ENV NVIDIA_VISIBLE_DEVICES=all", "GP502", "major"),
    ("deploy/docker-compose.yml", "- driver: nvidia", "GP502", "major"),
]

# The ROCm-aware branches: (file, first line text, last line text) of each region.
GUARDED = [
    ("csrc/fused_rmsnorm.cu", "#ifdef USE_ROCM", "#endif"),
    ("service/gpu_info.py", "if torch.version.hip:", "for i, u, t in (line.split"),
]


@pytest.fixture(scope="module")
def report() -> ScanReport:
    return scan_path(EXAMPLE)


def _line_of(path: str, text: str, start: int = 1) -> int:
    lines = (EXAMPLE / path).read_text().splitlines()
    for no in range(start, len(lines) + 1):
        if text in lines[no - 1]:
            return no
    raise AssertionError(f"{text!r} not in {path}")


@pytest.mark.parametrize(("path", "text", "rule", "severity"), PLANTED)
def test_planted_hazard_found_at_its_line(
    report: ScanReport, path: str, text: str, rule: str, severity: str
) -> None:
    line = _line_of(path, text)
    hits = [
        f
        for f in report.findings
        if f.location.path == path and f.location.line == line and f.rule_id == rule
    ]
    assert hits, f"{rule} not reported at {path}:{line}"
    assert hits[0].severity == Severity(severity)


@pytest.mark.parametrize(("path", "first", "last"), GUARDED)
def test_nothing_in_a_guarded_branch_is_above_info(
    report: ScanReport, path: str, first: str, last: str
) -> None:
    start = _line_of(path, first)
    end = _line_of(path, last, start)
    inside = [
        f
        for f in report.findings
        if f.location.path == path and start <= (f.location.line or 0) <= end
    ]
    assert inside, "the guarded branch holds a hazard that must be seen, lowered"
    assert all(f.severity is Severity.INFO and f.guarded for f in inside), inside


def test_verdict_and_effort_basis(report: ScanReport) -> None:
    assert report.verdict.value == "blocked"
    assert report.counts[Severity.BLOCKER] == sum(
        1 for f in report.findings if f.severity is Severity.BLOCKER
    )
    assert report.effort.hours == pytest.approx(sum(i.hours for i in report.effort.basis))
    assert report.effort.low_days < report.effort.high_days
    comps = report.effort.components
    assert report.effort.low_days == round(sum(c.low_days for c in comps), 1)
    assert report.effort.high_days == round(sum(c.high_days for c in comps), 1)
    assert comps[0].kind == "bring-up" and all(c.basis for c in comps)
    assert {i.rule_id for i in report.effort.basis} == {
        f.rule_id for f in report.findings if f.severity is not Severity.INFO
    }


def test_rdna_target_drops_wave64_findings() -> None:
    rdna = scan_path(EXAMPLE, _opts("gfx1100"))
    cdna = scan_path(EXAMPLE, _opts("gfx942"))
    wave64 = {"GP303", "GP304", "GP305", "GP306", "GP307"}
    assert wave64 & {f.rule_id for f in cdna.findings}
    assert not wave64 & {f.rule_id for f in rdna.findings}


def _opts(target: str):  # type: ignore[no-untyped-def]
    from gpuport.scan import ScanOptions

    return ScanOptions(target=target)
