"""The effort model (issue 27): components with a regime and a range, constructs counted per
file, kernel families costed as integration when an AMD library covers them."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.models import GpuportError, Location, Severity
from gpuport.scan import ScanOptions, scan_path
from gpuport.scan.effort import EffortContext, estimate
from gpuport.scan.effort.constructs import collect, family_folder
from gpuport.scan.effort.model import BRING_UP, PER_FIX, PER_KERNEL_FILE
from gpuport.scan.finding import Finding
from gpuport.scan.rules import RULES, load_all

load_all()


def finding(rule: str, path: str, message: str = "", line: int = 1) -> Finding:
    r = RULES[rule]
    return Finding(
        rule_id=rule,
        title=r.title,
        severity=r.severity,
        location=Location(path=path, line=line),
        message=message or r.title,
        fix="",
    )


def cutlass(path: str) -> Finding:
    return finding(
        "GP315",
        path,
        "this file uses CUTLASS (`<cutlass/gemm.h>`), which has no ROCm build; the AMD route "
        "is Composable Kernel (CK) or hipBLASLt",
    )


def kinds(effort: object) -> dict[str, object]:
    return {c.name: c for c in effort.components}  # type: ignore[attr-defined]


def test_a_construct_counts_once_per_file_however_often_it_occurs() -> None:
    one_file = [finding("GP305", "k/a.cu", line=i) for i in range(1, 21)]
    two_files = [finding("GP305", "k/a.cu"), finding("GP304", "k/b.cu")]
    a = estimate(one_file, RULES)
    b = estimate(two_files, RULES)
    native_a = next(c for c in a.components if c.kind == "native")
    native_b = next(c for c in b.components if c.kind == "native")
    assert native_a.regime == "hipify"
    assert (native_a.low_days, native_a.high_days) == PER_FIX  # twenty sites, one job
    assert (native_b.low_days, native_b.high_days) == (2 * PER_FIX[0], 2 * PER_FIX[1])
    assert native_b.constructs == ["warp-32 assumptions in 2 files"]


def test_libraries_hipify_maps_are_the_build_regime_and_cost_little() -> None:
    found = [
        finding(
            "GP316", f"k/{i}.cu", "this file uses cuBLAS (`<cublas_v2.h>`); on ROCm use hipBLAS"
        )
        for i in range(5)
    ]
    native = next(c for c in estimate(found, RULES).components if c.kind == "native")
    assert native.regime == "build"
    assert native.high_days <= 0.25  # one library, five files: one mapping
    assert "cuBLAS" in native.basis


def test_a_cutlass_attention_folder_is_integration_with_its_amd_library() -> None:
    found = [cutlass(f"csrc/flash_attn/src/flash_fwd_hdim{d}.cu") for d in (64, 128, 256)]
    comp = next(c for c in estimate(found, RULES).components if c.kind == "kernel family")
    assert comp.family == "attention" and comp.regime == "integration"
    assert (comp.low_days, comp.high_days) == (5, 40)
    assert comp.amd_equivalent is not None and "composable_kernel" in comp.amd_equivalent
    assert "3 files in csrc/flash_attn/" in comp.basis


def test_a_family_no_amd_library_covers_is_re_implemented_and_sized_by_its_files() -> None:
    small = estimate([cutlass("csrc/hadamard/h.cu")], RULES)
    big = estimate([cutlass(f"csrc/hadamard/h{i}.cu") for i in range(30)], RULES)
    (s,) = [c for c in small.components if c.kind == "kernel family"]
    (b,) = [c for c in big.components if c.kind == "kernel family"]
    assert s.regime == b.regime == "re-implement" and s.amd_equivalent is None
    assert (s.low_days, s.high_days) == PER_KERNEL_FILE  # one file is not a whole library
    assert (b.low_days, b.high_days) == (50, 300)  # the whole-family range caps it


def test_families_of_one_kind_merge_and_unmatched_folders_stay_apart() -> None:
    found = [
        cutlass("csrc/flash_attn/src/a.cu"),
        cutlass("hopper/flash_fwd.cu"),
        cutlass("hopper/instantiations/x.cu"),
        cutlass("csrc/hadamard/h.cu"),
        cutlass("csrc/transpose/t.cu"),
    ]
    fams = [c for c in estimate(found, RULES).components if c.kind == "kernel family"]
    attention = [c for c in fams if c.family == "attention"]
    other = [c for c in fams if c.family == "other kernels"]
    assert len(attention) == 1 and "csrc/flash_attn/" in attention[0].name
    assert "hopper/" in attention[0].name and "hopper/instantiations" not in attention[0].name
    assert {c.path for c in other} == {"csrc/hadamard", "csrc/transpose"}


def test_the_folders_above_a_family_do_not_name_it() -> None:
    """``transformer_engine/common/transpose`` is not an inference engine."""
    (comp,) = [
        c
        for c in estimate([cutlass("transformer_engine/common/transpose/t.cu")], RULES).components
        if c.kind == "kernel family"
    ]
    assert comp.family == "other kernels"


def test_a_lone_tensor_core_ptx_file_is_a_fix_and_two_make_a_family() -> None:
    mma = "inline PTX (`mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0}`) does not compile"
    lone = estimate([finding("GP301", "ops/quant/a.cu", mma)], RULES)
    assert [c.kind for c in lone.components] == ["bring-up", "native"]
    assert "tensor-core PTX (MFMA builtins) in 1 file" in lone.components[1].constructs
    pair = estimate(
        [finding("GP301", "ops/quant/a.cu", mma), finding("GP301", "ops/quant/b.cu", mma)], RULES
    )
    (fam,) = [c for c in pair.components if c.kind == "kernel family"]
    assert fam.family == "quantized GEMM" and fam.constructs == ["tensor-core PTX"]


def test_a_family_file_s_other_constructs_are_part_of_the_family() -> None:
    found = [cutlass("csrc/attn/a.cu"), finding("GP305", "csrc/attn/a.cu")]
    assert [c.kind for c in estimate(found, RULES).components] == ["bring-up", "kernel family"]
    assert collect(found).native == {}


def test_an_nvidia_only_component_beside_a_route_is_dropped() -> None:
    ctx = EffortContext(replace_or_drop=[("hopper", "hopper/setup.py builds CUDA only")])
    (fam,) = [
        c
        for c in estimate([cutlass("hopper/flash_fwd.cu")], RULES, ctx).components
        if c.kind == "kernel family"
    ]
    assert fam.regime == "drop" and fam.high_days <= 2
    assert any(i.rule_id == "component" for i in estimate([], RULES, ctx).basis)


def test_total_is_the_sum_of_components_with_a_calendar_note() -> None:
    found = [
        cutlass("csrc/flash_attn/a.cu"),
        finding("GP305", "csrc/ops/r.cu"),
        finding("GP402", "setup.py", line=3),
        finding("GP402", "setup.py", line=9),
        finding("GP201", "pkg/m.py", "`tensorrt_llm` comes from tensorrt-llm"),
    ]
    effort = estimate(found, RULES, EffortContext(device_files=2))
    assert [c.kind for c in effort.components] == [
        "bring-up",
        "native",
        "kernel family",
        "python",
        "build",
    ]
    assert effort.low_days == round(sum(c.low_days for c in effort.components), 1)
    assert effort.high_days == round(sum(c.high_days for c in effort.components), 1)
    build = kinds(effort)["build"]
    assert build.basis.startswith("0.5 h")  # nvcc flags in one file: one job
    assert "2-10x engineer time" in effort.calendar
    assert effort.components[0].low_days == BRING_UP[0]


def test_nothing_to_port_has_no_components() -> None:
    effort = estimate([finding("GP305", "k/a.cu").__class__(**{
        **finding("GP305", "k/a.cu").__dict__, "severity": Severity.INFO})], RULES)  # fmt: skip
    assert effort.components == [] and effort.low_days == effort.high_days == 0
    assert effort.calendar == ""
    assert [c.kind for c in estimate([], RULES, EffortContext(device_files=3)).components] == [
        "bring-up"
    ]


@pytest.mark.parametrize(
    ("path", "folder"),
    [
        ("csrc/flash_attn/src/flash_fwd.cu", "csrc/flash_attn"),
        ("src/ft/kernels/decoder_attn/x.cu", "src/ft/kernels/decoder_attn"),
        ("transformer_engine/common/gemm/g.cu", "transformer_engine/common/gemm"),
        ("transformer_engine/common/t.cu", "transformer_engine/common"),
        ("awq_ext/quantization/gemm.cu", "awq_ext/quantization"),
        ("hopper/flash.cu", "hopper"),
        ("k.cu", ""),
    ],
)
def test_family_folder(path: str, folder: str) -> None:
    assert family_folder(path) == folder


def test_scan_end_to_end_reports_components(tmp_path: Path) -> None:
    (tmp_path / "csrc" / "attention").mkdir(parents=True)
    (tmp_path / "csrc" / "attention" / "fmha.cu").write_text(
        "#include <cutlass/gemm/device/gemm.h>\n__global__ void k() {}\n"
    )
    (tmp_path / "csrc" / "reduce.cu").write_text(
        "__global__ void r(float* x) {\n"
        "  float v = x[threadIdx.x];\n"
        "  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);\n"
        "  x[threadIdx.x] = v;\n}\n"
    )
    report = scan_path(tmp_path, ScanOptions(jobs=1))
    comps = {c.kind: c for c in report.effort.components}
    assert set(comps) >= {"bring-up", "native", "kernel family"}
    assert "2 CUDA source files" in comps["bring-up"].basis
    assert comps["kernel family"].family == "attention"
    assert comps["native"].regime == "hipify"
    assert report.effort.low_days == round(sum(c.low_days for c in comps.values()), 1)


def test_kernel_families_knowledge_is_sourced_and_overridable(tmp_path: Path) -> None:
    from gpuport.knowledge.kernel_families import OTHER, classify, load_families

    families = load_families()
    assert families[-1].name == OTHER
    assert all(f.sources and f.checked for f in families)
    assert classify(["fused_moe/x.cu"], [], families).name == "mixture of experts"
    assert classify(["ep/x.cu"], ["NVSHMEM"], families).name == "expert-parallel communication"
    (tmp_path / "kernel_families.toml").write_text(
        'schema_version = 1\n[[family]]\nname = "attention"\nmatch = ["attention"]\n'
        "reimplement_days = [100, 200]\nintegration_days = [1, 2]\n"
        'equivalents = ["my lib"]\nsources = ["https://example.org/x"]\nchecked = 2026-11-27\n'
    )
    mine = load_families(tmp_path)
    att = next(f for f in mine if f.name == "attention")
    assert att.integration_days == (1, 2) and att.equivalents == ["my lib"]
    (tmp_path / "kernel_families.toml").write_text(
        'schema_version = 1\n[[family]]\nname = "x"\nmatch = []\n'
        "reimplement_days = [5, 1]\nintegration_days = [1, 2]\nequivalents = []\n"
        'sources = ["https://example.org/x"]\nchecked = 2026-11-27\n'
    )
    load_families.cache_clear()
    with pytest.raises(GpuportError, match="reimplement_days"):
        load_families(tmp_path)
