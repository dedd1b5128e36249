"""The four false-positive classes of the issue-13 precision review, each as a class:
an FP8 header with no FP8 value, 32-lane math under a named 32-thread tile, a CI image,
and an nvcc probe that falls back."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.models import Severity
from gpuport.scan import ScanOptions, scan_path
from gpuport.scan.finding import Finding
from gpuport.scan.project.scopes import Scope, scope_of
from gpuport.scan.verdict import judged


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _hits(root: Path, rule: str) -> dict[tuple[str, int], Finding]:
    report = scan_path(root, ScanOptions(jobs=1))
    return {(f.location.path, f.location.line): f for f in report.findings if f.rule_id == rule}


def test_fp8_header_without_fp8_values_is_minor(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "sgd.cu": "#include <cuda_fp8.h>\n__global__ void k(float* w) { w[0] = 1.f; }\n",
            "cast.cu": (
                "#include <cuda_fp8.h>\n"
                "__global__ void k(__nv_fp8_e4m3* o, float x) { o[0] = __nv_fp8_e4m3(x); }\n"
            ),
        },
    )
    hits = _hits(root, "GP320")
    assert hits[("sgd.cu", 1)].severity is Severity.MINOR
    assert "uses no FP8 type" in hits[("sgd.cu", 1)].message
    # a file that computes with FP8 keeps the FP8 severity, at the include and at the type
    assert hits[("cast.cu", 1)].severity is Severity.MAJOR
    assert hits[("cast.cu", 2)].severity is Severity.MAJOR


TILED = """\
#include <cooperative_groups.h>
#include "context.h"
namespace cg = cooperative_groups;
__global__ void softmax(float* v)
{
    cg::thread_block b = cg::this_thread_block();
    cg::thread_block_tile<WARP_SIZE> g = cg::tiled_partition<WARP_SIZE>(b);
    int wid = threadIdx.x >> 5;
    int lane = threadIdx.x & 0x1f;
    v[wid * WARP_SIZE + lane] = g.shfl_xor(v[lane], 1);
}
"""


def test_lane_math_under_a_tile_sized_by_a_header_macro_is_info(tmp_path: Path) -> None:
    root = _write(tmp_path, {"context.h": "#define WARP_SIZE 32\n", "softmax.cu": TILED})
    hits = _hits(root, "GP304")
    assert {hits[("softmax.cu", n)].severity for n in (8, 9)} == {Severity.INFO}
    assert "WARP_SIZE = 32" in hits[("softmax.cu", 8)].message


def test_a_macro_that_is_64_on_rocm_is_no_32_thread_tile(tmp_path: Path) -> None:
    header = (
        "#ifdef __HIP_PLATFORM_AMD__\n#define WARP_SIZE 64\n#else\n#define WARP_SIZE 32\n#endif\n"
    )
    root = _write(tmp_path, {"context.h": header, "softmax.cu": TILED})
    hits = _hits(root, "GP304")
    assert hits[("softmax.cu", 8)].severity is Severity.MAJOR
    assert hits[("softmax.cu", 9)].severity is Severity.MAJOR


#: The rules package: each family's annotated fixtures sit in ``<family>/fixtures/``.
FIXTURES = Path(__file__).resolve().parents[2] / "src" / "gpuport" / "scan" / "rules"


def test_a_ci_image_is_tooling_and_the_user_image_beside_it_is_core() -> None:
    root = FIXTURES / "containers" / "fixtures" / "ci_image"
    report = scan_path(root, ScanOptions(jobs=1))
    scopes = {(f.location.path, f.rule_id): f.scope for f in report.findings}
    assert scopes[("docker/Dockerfile.ci.dev", "GP101")] == "tooling"
    assert scopes[("docker/Dockerfile.ci.dev", "GP501")] == "tooling"
    assert scopes[("docker/Dockerfile", "GP101")] == "core"
    # the verdict and effort come from the user-facing image alone
    assert {f.location.path for f in judged(report.findings, report.scope)} == {"docker/Dockerfile"}


@pytest.mark.parametrize(
    ("path", "scope"),
    [
        ("docker/Dockerfile.ci.dev", Scope.TOOLING),
        ("docker/Dockerfile.ci.lts", Scope.TOOLING),
        ("Dockerfile.linting", Scope.TOOLING),
        ("ci.Dockerfile", Scope.TOOLING),
        ("docker-compose.ci.yml", Scope.TOOLING),
        ("docker/Dockerfile.test", Scope.TEST),
        ("docker/Dockerfile", Scope.CORE),
        ("Dockerfile.dev", Scope.CORE),  # may be what users build: not demoted by name alone
        ("Dockerfile_amd", Scope.CORE),
        ("src/circuit.py", Scope.CORE),  # "ci" only as a word of a container file's name
        ("docker/cicada.Dockerfile", Scope.CORE),
    ],
)
def test_container_files_named_for_ci(path: str, scope: Scope) -> None:
    assert scope_of(path) is scope


# -- GP303: a `#define WARP_SIZE 32` used only as a 32-thread tile's size -------------------

TILE_KERNEL = """\
#include <cooperative_groups.h>
#include "layers.h"
namespace cg = cooperative_groups;
__global__ void norm(float* v)
{
    cg::thread_block b = cg::this_thread_block();
    cg::thread_block_tile<WARP_SIZE> g = cg::tiled_partition<WARP_SIZE>(b);
    float sum = v[threadIdx.x];
    for (int i = 1; i < WARP_SIZE; i <<= 1) sum += g.shfl_xor(sum, i);
    v[threadIdx.x] = sum;
}
"""
RAW_KERNEL = """\
#include "layers.h"
__global__ void mma(float* v)
{
    int lane = threadIdx.x % WARP_SIZE;
    v[lane] = 0.f;
}
"""


def test_a_warp_size_define_used_only_as_tile_size_is_info(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "include/layers.h": '#include "context.h"\n',
            "include/context.h": "#define WARP_SIZE 32\n",
            "kernels/norm.cu": TILE_KERNEL,
        },
    )
    hit = _hits(root, "GP303")[("include/context.h", 1)]
    assert hit.severity is Severity.INFO
    assert "32-thread tiles" in hit.message


def test_a_warp_size_define_with_one_raw_lane_use_stays_major(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "include/layers.h": '#include "context.h"\n',
            "include/context.h": "#define WARP_SIZE 32\n",
            "kernels/norm.cu": TILE_KERNEL,
            "kernels/mma.cu": RAW_KERNEL,  # through layers.h: an includer of an includer
        },
    )
    assert _hits(root, "GP303")[("include/context.h", 1)].severity is Severity.MAJOR


def test_an_unused_warp_size_define_stays_major(tmp_path: Path) -> None:
    root = _write(tmp_path, {"include/context.h": "#define WARP_SIZE 32\n"})
    assert _hits(root, "GP303")[("include/context.h", 1)].severity is Severity.MAJOR


def test_an_fp8_dtype_in_a_fake_kernel_is_storage() -> None:
    root = FIXTURES / "python" / "fixtures"
    report = scan_path(root / "gp2_fp8_fake_kernel.py", ScanOptions(jobs=1))
    sev = {f.location.line: f.severity for f in report.findings if f.rule_id == "GP208"}
    assert sev[11] is Severity.BLOCKER and sev[12] is Severity.BLOCKER  # the real kernel
    assert sev[19] is Severity.MINOR  # its fake twin allocates, never computes
