"""Each decision criterion on hand-made evidence: when it fires, what it says, how it leans."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.assess import criteria, criteria_figures, sources_evidence, sources_hipify
from gpuport.assess.config import Settings, load_settings
from gpuport.assess.criteria import Criterion
from gpuport.assess.facts import Facts
from gpuport.assess.model import (
    CompileOutcome,
    DoctorProblem,
    DoctorSection,
    HipifySection,
    ScanSection,
    TargetSummary,
    UnsupportedUse,
    ValidateSection,
    ValidateSummary,
)
from gpuport.assess.verdict import CRITERIA
from gpuport.bench.model import BenchRun
from gpuport.models import Location, Severity, load_result
from gpuport.scan.finding import Finding
from gpuport.scan.model import Effort
from tests.conftest import REPO

BENCH = REPO / "examples" / "bench"


def finding(rule: str, sev: str, path: str = "k.cu", line: int = 1, message: str = "") -> Finding:
    return Finding(
        rule_id=rule,
        title=f"title of {rule}",
        severity=Severity(sev),
        location=Location(path=path, line=line, snippet="code"),
        message=message or f"message of {rule}",
        fix=f"fix of {rule}",
    )


def facts(
    *found: Finding, settings: Settings | None = None, native_files: int = 0, **sections: object
) -> Facts:
    scan = ScanSection(
        root="proj",
        target=TargetSummary(name="gfx942", generation="CDNA3", wave_size=64, fp8="fnuz"),
        files_scanned=3,
        files_by_kind={"cuda/c++": native_files} if native_files else {},
        counts={},
        verdict="ready",
        verdict_reason="nothing found",
        findings=list(found),
        findings_total=len(found),
        duration_s=0.0,
    )
    effort = Effort(low_days=0, high_days=0, hours=0, basis=[], note="n")
    return Facts(
        settings=settings or Settings(root=Path()),
        scan=scan,
        scan_effort=effort,
        **sections,  # type: ignore[arg-type]
    )


# ------------------------------------------------------------------------- packages


def test_package_without_rocm_build_leans_cuda_with_its_replacement() -> None:
    msg = "tensorrt-llm: TensorRT-LLM is built on TensorRT and CUDA; there is no ROCm port."
    got = criteria.cuda_only_packages(
        facts(finding("GP101", "blocker", "requirements.txt", 4, msg))
    )
    (c,) = got
    assert c.title == "tensorrt-llm has no ROCm build"
    assert c.leans == "cuda" and c.severity is Severity.BLOCKER
    assert "Replace it with vllm or stay on CUDA" in c.recommendation
    assert "requirements.txt:4" in c.statement and "TensorRT-LLM" in c.statement
    assert c.evidence[0].anchor == "finding-1"


def test_replaceable_package_is_not_a_reason_to_stay() -> None:
    msg = "nvidia-ml-py: loads libnvidia-ml.so"
    (c,) = criteria.cuda_only_packages(facts(finding("GP101", "major", "requirements.txt", 2, msg)))
    assert c.leans == "neutral" and c.severity is Severity.MAJOR
    assert "amdsmi" in c.recommendation


def test_import_and_requirement_of_one_package_make_one_conclusion() -> None:
    req = finding("GP101", "blocker", "requirements.txt", 1, "tensorrt-llm: no ROCm port")
    imp = finding(
        "GP201", "blocker", "serve.py", 3, "`tensorrt_llm` comes from tensorrt-llm, which has no"
    )
    (c,) = criteria.cuda_only_packages(facts(req, imp))
    assert len(c.evidence) == 2


# --------------------------------------------------------------------------- native


def test_inline_ptx_is_named_with_its_place() -> None:
    hip = HipifySection(ran=True, files=1, replacements=3)
    (c,) = criteria.native_code(facts(finding("GP301", "blocker", "k.cu", 27), hipify=hip))
    assert "1 inline PTX site" in c.title
    assert "k.cu:27" in c.statement and "hipify translates 1 CUDA/C++ file" in c.statement
    assert c.severity is Severity.BLOCKER
    assert {e.kind for e in c.evidence} == {"finding", "hipify"}


def test_triton_inline_ptx_counts_as_inline_ptx() -> None:
    (c,) = criteria.native_code(facts(finding("GP212", "blocker", "kern.py", 9)))
    assert "inline PTX" in c.title


def test_clean_kernels_get_an_info_conclusion_and_no_code_none() -> None:
    (c,) = criteria.native_code(facts(hipify=HipifySection(ran=True, files=2, replacements=5)))
    assert c.severity is Severity.INFO and "translates with hipify" in c.title
    assert criteria.native_code(facts()) == []


def test_native_code_off_the_route_is_not_called_nothing_found() -> None:
    """Issue 29 follow-up: with native findings lowered to info because the ROCm route is not
    shown to build their code, the conclusion said "the scan found nothing in it"."""
    from dataclasses import replace

    from gpuport.scan.project.on_route import OFF_ROUTE

    off = finding("GP321", "info", "cuda/k.cu", 12, f"cuBLAS; {OFF_ROUTE} (route: README.md:3)")
    hip = HipifySection(ran=True, files=2, replacements=5)
    (c,) = criteria.native_code(replace(facts(off, hipify=hip), above_info=()))
    assert "nothing in it" not in c.statement
    assert "1 site in code it is not shown to build was not counted" in c.statement
    assert "cuda/k.cu:12" in c.statement
    plain = finding("GP321", "info", "cuda/k.cu", 12, "cuBLAS call under USE_ROCM")
    (c,) = criteria.native_code(replace(facts(plain, hipify=hip), above_info=()))
    assert "The scan found nothing in it that hipify cannot fix." in c.statement


def test_wave32_assumptions_are_counted_to_fix_first() -> None:
    found = [finding("GP303", "major", line=6), finding("GP304", "major", line=36)]
    (c,) = criteria.wave32_assumptions(facts(*found))
    assert c.title == "2 wave-32 assumptions to fix first"
    assert "64 lanes" in c.statement and "warpSize" in c.recommendation
    assert criteria.wave32_assumptions(facts(finding("GP301", "blocker"))) == []


def test_hipify_gaps_unsupported_and_compile() -> None:
    hip = HipifySection(
        ran=True,
        hip_version="6.4",
        unsupported=[UnsupportedUse(name="cudaFoo", path="a.cu", line=3, reason="none")],
        unsupported_counts={"cudaFoo": 1},
        compile=[CompileOutcome(path="a.cu", status="failed", error="a.cu:3: error: x")],
    )
    got = {c.id: c for c in criteria.hipify_gaps(facts(hipify=hip))}
    assert got["hipify-unsupported"].severity is Severity.MAJOR
    assert "cudaFoo x1" in got["hipify-unsupported"].statement
    assert got["hipify-compile"].severity is Severity.MAJOR
    unsure = HipifySection(
        ran=True, compile=[CompileOutcome(path="b.cu", status="inconclusive", error="needs x.h")]
    )
    (c,) = criteria.hipify_gaps(facts(hipify=unsure))
    assert c.severity is Severity.INFO and "inconclusive" in c.title


def test_a_missing_header_gets_the_same_word_as_hipify_check() -> None:
    """One classification for both commands: the field trial saw 'inconclusive' in assess
    and 'failed' in ``hipify --check`` for the same missing torch/extension.h."""
    from gpuport.hipify.check import classify

    error = "a.cu:1:10: fatal error: 'torch/extension.h' file not found"
    got = sources_hipify._outcome("a.cu", False, error)
    assert (got.status, got.error) == classify(error)
    assert got.status == "inconclusive" and "torch/extension.h" in (got.error or "")
    hip_header = "a.cu:1:10: fatal error: 'hip/hip_bf16.h' file not found"
    assert (
        sources_hipify._outcome("a.cu", False, hip_header).status
        == "failed"
        == classify(hip_header)[0]
    )
    other = sources_hipify._outcome("a.cu", False, "a.cu:6: error: invalid PTX")
    assert other.status == "failed" and other.error == "a.cu:6: error: invalid PTX"


def test_other_findings_are_grouped_by_area() -> None:
    got = criteria.other_findings(
        facts(
            finding("GP104", "blocker", "requirements.txt"),
            finding("GP216", "minor", "m.py"),
            finding("GP301", "blocker"),  # covered by native_code
        )
    )
    assert [c.id for c in got] == ["area-dependencies", "area-python-source"]
    assert got[0].title == "Dependencies: 1 item to change (1 blocker)"
    assert got[1].title == "Python source: 1 minor item to tidy"


def test_portable_stack_needs_no_kernels_and_no_blocking_dependency() -> None:
    (c,) = criteria.portable_stack(facts(finding("GP216", "minor", "m.py")))
    assert c.leans == "rocm"
    assert criteria.portable_stack(facts(native_files=1)) == []
    assert criteria.portable_stack(facts(finding("GP102", "major", "requirements.txt"))) == []


# --------------------------------------------------------------------------- figures


def _cost_facts(root: Path, flags: dict[str, object]) -> Facts:
    settings = load_settings(root, flags)
    return facts(settings=settings, cost=sources_evidence.run_cost(settings, []))


def test_memory_over_80_gb_favours_the_gpu_that_avoids_tensor_parallelism(tmp_path: Path) -> None:
    f = _cost_facts(
        tmp_path,
        # 28, not 32: with vLLM's reserve 32 sequences no longer fit one MI325X either
        {"model": "llama-3-70b", "gpus": "h100-sxm,mi300x,mi325x", "concurrency": 28},
    )
    (c,) = criteria_figures.memory_per_replica(f)
    assert c.leans == "rocm"
    # the threshold is the usable memory of the largest GPU that does not hold it (MI300X)
    mi300x = next(r for r in f.cost.reports[0].records if r.gpu == "mi300x")
    threshold = round(mi300x.usable_gb_per_gpu)
    assert threshold > 80
    assert c.title == f"Needs > {threshold} GB per replica: MI325X avoids tensor parallelism"
    assert "about 216" in c.statement and "28 sequences" in c.statement


def test_memory_does_not_decide_when_everything_fits(tmp_path: Path) -> None:
    (c,) = criteria_figures.memory_per_replica(_cost_facts(tmp_path, {"model": "llama-3-8b"}))
    assert c.leans == "neutral" and "fits on one GPU of every candidate" in c.title


def test_price_per_mtok_leans_to_the_cheaper_platform(tmp_path: Path) -> None:
    (cheap_amd,) = criteria_figures.price_per_mtok(_cost_facts(tmp_path, {"model": "llama-3-8b"}))
    assert cheap_amd.leans == "rocm" and "cheaper per million tokens" in cheap_amd.title
    dear = {"model": "llama-3-8b", "prices": ["mi300x=40"]}
    (cheap_nv,) = criteria_figures.price_per_mtok(_cost_facts(tmp_path, dear))
    assert cheap_nv.leans == "cuda" and cheap_nv.title.startswith("NVIDIA H100")
    one = {"model": "llama-3-8b", "gpus": "mi300x"}
    (single,) = criteria_figures.price_per_mtok(_cost_facts(tmp_path, one))
    assert single.leans == "neutral" and "only one vendor" in single.statement


def _run(path: Path, backend: str, name: str, tmp_path: Path) -> str:
    run = load_result(path, BenchRun)
    device = run.device.model_copy(update={"backend": backend, "name": name})
    out = tmp_path / f"{backend}.json"
    out.write_text(run.model_copy(update={"device": device, "label": name}).model_dump_json())
    return str(out)


def test_bench_ratio_orders_cuda_first_and_leans_by_speed(tmp_path: Path) -> None:
    slow = _run(BENCH / "cpu-1-thread.json", "rocm", "MI300X", tmp_path)
    fast = _run(BENCH / "cpu-2-threads.json", "cuda", "H100", tmp_path)
    runs, section = sources_evidence.load_bench([slow, fast], None)
    assert [r.device.backend for r in runs] == ["cuda", "rocm"]
    assert section.comparison is not None and section.comparison.runs[0] == "H100"
    (c,) = criteria_figures.bench_ratio(facts(bench=section))
    # the example runs hold gemm, resnet50 and transformer: two families, each named
    assert "By workload family: compute " in c.statement and "model " in c.statement
    g = section.comparison.geomean[1]
    assert g is not None and f"{g:.2f}x" in c.title
    assert c.leans == ("rocm" if g > 1.02 else "cuda" if g < 0.98 else "neutral")


def test_one_bench_run_gives_no_ratio(tmp_path: Path) -> None:
    _, section = sources_evidence.load_bench([str(BENCH / "cpu-1-thread.json")], None)
    (c,) = criteria_figures.bench_ratio(facts(bench=section))
    assert c.id == "bench-ratio" and "not a platform ratio" in c.statement
    assert criteria_figures.bench_ratio(facts()) == []


def _validate(**kw: object) -> ValidateSection:
    base: dict[str, object] = {
        "file": "parity.json",
        "model_ref": "m.py:build",
        "verdict": "wrong",
        "verdict_reason": "1 module wrong",
        "first_divergence": "layers.3.mlp",
        "counts": {"wrong": 1, "same": 10},
        "wrong": ["layers.3.mlp"],
        "machines": "A on H100 (cuda) vs B on MI300X (rocm)",
    }
    base.update(kw)
    return ValidateSection(reports=[ValidateSummary.model_validate(base)])


def test_wrong_numerics_say_do_not_move_traffic() -> None:
    (c,) = criteria_figures.numerics(facts(validate=_validate()))
    assert c.title == "Do not move traffic yet: module layers.3.mlp is wrong"
    assert c.severity is Severity.MAJOR and c.leans == "cuda"
    assert c.evidence[0].anchor == "validate-1"


def test_matching_and_missing_numerics() -> None:
    same = _validate(verdict="same", wrong=[], first_divergence=None, verdict_reason="all same")
    (c,) = criteria_figures.numerics(facts(validate=same))
    assert c.severity is Severity.INFO and "match" in c.title
    (missing,) = criteria_figures.numerics(facts())
    assert missing.id == "numerics-unchecked" and "validate capture" in missing.recommendation


def test_doctor_problems_are_a_note_about_this_machine() -> None:
    doctor = DoctorSection(
        status="problems",
        problems=[
            DoctorProblem(
                rule_id="GP612",
                title="not in render group",
                status="fail",
                fix="usermod -aG render $USER",
            )
        ],
    )
    (c,) = criteria_figures.machine_health(facts(doctor=doctor))
    assert c.severity is Severity.MINOR and "usermod" in c.recommendation
    assert criteria_figures.machine_health(facts()) == []


@pytest.mark.parametrize("criterion", CRITERIA, ids=lambda c: c.__name__)
def test_every_criterion_is_quiet_on_empty_evidence(criterion: Criterion) -> None:
    allowed = {"numerics-unchecked", "portable-stack"}
    assert all(c.id in allowed for c in criterion(facts()))


def test_price_comparison_names_the_shared_footing_and_how_sure(tmp_path: Path) -> None:
    """Issue 17: "MI300X 71% cheaper" compared 55 sequences with 156. Issue 26: both GPUs
    now serve users at the same latency target, each on its best deployment, and the
    conclusion says how sure the model is (its error on measurements held out of its fit)."""
    f = _cost_facts(tmp_path, {"model": "llama-3-8b"})
    (c,) = criteria_figures.price_per_mtok(f)
    h100, mi300x = sorted(f.cost.reports[0].records, key=lambda r: r.gpu)
    assert "at the same mean TPOT ≤ 50 ms" in c.title
    assert f"{h100.concurrency} sequences on {h100.gpus_needed} GPU" in c.title
    assert f"{mi300x.concurrency} sequences on {mi300x.gpus_needed} GPU" in c.title
    assert "How sure: on the 37 published measurements held out of its fit" in c.statement
    assert "within 1.5× for" in c.statement and "for 90 %" in c.statement
    assert "on vllm by the step model" in c.statement
    # A fixed concurrency is named as such.
    fixed = _cost_facts(tmp_path, {"model": "llama-3-8b", "concurrency": 32})
    (c32,) = criteria_figures.price_per_mtok(fixed)
    assert "at 32 sequences each" in c32.title
