"""The verdict engine on the three fixture projects: the right verdict, the right explanation."""

from __future__ import annotations

import pytest

from gpuport.assess import Assessment, Readiness, assess, load_settings
from gpuport.models import Severity
from tests.assess.conftest import BLOCKED, MINOR, PORTABLE


@pytest.fixture(scope="module")
def portable() -> Assessment:
    return assess(load_settings(PORTABLE))


@pytest.fixture(scope="module")
def minor() -> Assessment:
    return assess(load_settings(MINOR))


@pytest.fixture(scope="module")
def blocked() -> Assessment:
    return assess(load_settings(BLOCKED))


def _ids(a: Assessment) -> list[str]:
    return [c.id for c in a.conclusions]


def test_portable_is_ready_and_says_why(portable: Assessment) -> None:
    assert portable.verdict is Readiness.READY
    assert portable.scan.findings == []
    assert portable.effort.hours == 0
    assert portable.decision.startswith("Ready for ROCm")
    stack = next(c for c in portable.conclusions if c.id == "portable-stack")
    assert stack.leans == "rocm"
    assert "no custom kernels" in stack.title
    assert not portable.hipify.ran and "no CUDA/C++" in portable.hipify.reason


def test_portable_memory_and_price_criteria_use_its_declared_model(portable: Assessment) -> None:
    memory = next(c for c in portable.conclusions if c.id == "memory-llama-3-70b")
    assert memory.leans == "rocm"
    mi300x = next(
        r for rep in portable.cost.reports for r in rep.records if r.gpu == "mi300x"
    )  # the largest GPU that does not hold it: its usable memory is the threshold
    assert memory.title.startswith(f"Needs > {round(mi300x.usable_gb_per_gpu)} GB per replica")
    assert "MI325X avoids tensor parallelism" in memory.title
    assert "H100" in memory.statement and "TP 4" in memory.statement
    assert {e.kind for e in memory.evidence} == {"cost"}
    price = next(c for c in portable.conclusions if c.id == "price-llama-3-70b")
    assert "cheaper per million tokens" in price.title
    assert all(e.anchor.startswith("cost-llama-3-70b-") for e in price.evidence)


def test_minor_has_only_minor_work_and_names_the_items(minor: Assessment) -> None:
    assert minor.verdict is Readiness.MINOR_WORK
    assert {f.severity for f in minor.scan.findings} == {Severity.MINOR}
    reason = minor.verdict_reason
    assert "2 minor items" in reason and "Python source" in reason
    area = next(c for c in minor.conclusions if c.id == "area-python-source")
    assert "cudnn.benchmark" in area.statement and "CUDA graph" in area.statement
    assert area.severity is Severity.MINOR
    # a day or two: bring-up and validation on ROCm, and the two Python changes
    assert [c.kind for c in minor.effort.components] == ["bring-up", "python"]
    assert 0 < minor.effort.low_days <= minor.effort.high_days < 3
    assert minor.decision.startswith("Close to ready")


def test_blocked_names_tensorrt_llm_and_inline_ptx(blocked: Assessment) -> None:
    assert blocked.verdict is Readiness.BLOCKED
    reason = blocked.verdict_reason.lower()
    # the route's own install fails on tensorrt-llm; csrc/rsqrt.cu is built by nothing the
    # route runs (no build file, no loader), so its inline PTX is listed as info (issue 24,
    # eighth round: not shown to be built by the ROCm route)
    assert "tensorrt-llm" in reason
    trt = next(c for c in blocked.conclusions if c.id == "no-rocm-package-tensorrt-llm")
    assert trt.severity is Severity.BLOCKER and trt.leans == "cuda"
    assert "TensorRT-LLM" in trt.statement and "no ROCm port" in trt.statement
    assert trt.recommendation.startswith("Replace it with vllm or stay on CUDA")
    assert {e.ref for e in trt.evidence} == {"GP101", "GP201"}  # requirement and import
    assert any(c.id == "native-code" for c in blocked.conclusions)
    assert blocked.decision.startswith("Choose CUDA for now: tensorrt-llm has no ROCm build")


def test_blocked_without_a_model_says_how_to_declare_one(blocked: Assessment) -> None:
    assert blocked.cost.status == "no-model"
    assert blocked.cost.message.startswith("no model declared; pass --model")


def test_every_evidence_anchor_points_into_the_report(blocked: Assessment) -> None:
    n = len(blocked.scan.findings)
    for c in blocked.conclusions:
        for e in c.evidence:
            if e.kind == "finding" and e.anchor.startswith("finding-"):
                index = int(e.anchor.removeprefix("finding-"))
                assert 1 <= index <= n
                assert blocked.scan.findings[index - 1].rule_id == e.ref


def test_conclusions_are_worst_first(blocked: Assessment, portable: Assessment) -> None:
    for a in (blocked, portable):
        ranks = [c.severity.rank for c in a.conclusions]
        assert ranks == sorted(ranks, reverse=True)


def test_settings_echo_their_origin(portable: Assessment, minor: Assessment) -> None:
    model = portable.setting("model")
    assert model is not None and model.origin == "pyproject.toml"
    target = minor.setting("targets")
    assert target is not None and target.origin == "gpuport.toml" and target.value == ["gfx942"]
    assert portable.setting("doctor") is not None


def test_a_model_named_in_the_code_is_detected_and_marked() -> None:
    from tests.conftest import EXAMPLE

    a = assess(load_settings(EXAMPLE))
    model = a.setting("model")
    assert model is not None and model.origin == "detected"
    assert model.value == ["llama-3-8b"] and "service/app.py" in model.detail
    assert a.cost.status == "ok"
