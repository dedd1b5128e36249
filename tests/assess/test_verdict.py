"""Readiness (the scan's verdict, only ever lifted) and the effort estimate with its basis."""

from __future__ import annotations

from gpuport.assess import verdict
from gpuport.assess.model import (
    CompileOutcome,
    HipifySection,
    Readiness,
    UnsupportedUse,
    ValidateSection,
    ValidateSummary,
)
from gpuport.scan.model import Effort, EffortComponent, EffortItem
from tests.assess.test_criteria import facts

UNSUPPORTED = HipifySection(
    ran=True,
    unsupported=[
        UnsupportedUse(name="cudaGraphFoo", path="a.cu", line=1, reason="r"),
        UnsupportedUse(name="cudaGraphFoo", path="a.cu", line=9, reason="r"),
    ],
    unsupported_counts={"cudaGraphFoo": 2},
)
WRONG = ValidateSection(
    reports=[
        ValidateSummary(
            file="p.json",
            model_ref=None,
            verdict="wrong",
            verdict_reason="r",
            first_divergence="head",
            counts={},
            wrong=["head"],
        )
    ]
)


def test_readiness_follows_the_scan() -> None:
    for scan_verdict, expected in (
        ("ready", Readiness.READY),
        ("minor work", Readiness.MINOR_WORK),
        ("major work", Readiness.MAJOR_WORK),
        ("blocked", Readiness.BLOCKED),
    ):
        f = facts()
        f = type(f)(**{**f.__dict__, "scan": f.scan.model_copy(update={"verdict": scan_verdict})})
        assert verdict.readiness(f)[0] is expected


def test_untranslatable_apis_lift_ready_to_major_work() -> None:
    level, reasons = verdict.readiness(facts(hipify=UNSUPPORTED))
    assert level is Readiness.MAJOR_WORK
    assert reasons[0] == "2 uses of CUDA APIs HIP lacks"


def test_compile_failure_and_wrong_numerics_lift_too() -> None:
    failed = HipifySection(ran=True, compile=[CompileOutcome(path="a.cu", status="failed")])
    assert verdict.readiness(facts(hipify=failed))[0] is Readiness.MAJOR_WORK
    level, reasons = verdict.readiness(facts(validate=WRONG))
    assert level is Readiness.MAJOR_WORK and "head computes wrong numbers" in reasons[0]
    unsure = HipifySection(ran=True, compile=[CompileOutcome(path="a.cu", status="inconclusive")])
    assert verdict.readiness(facts(hipify=unsure))[0] is Readiness.READY


def test_lifts_never_lower_a_blocked_project() -> None:
    f = facts(hipify=UNSUPPORTED)
    f = type(f)(**{**f.__dict__, "scan": f.scan.model_copy(update={"verdict": "blocked"})})
    level, reasons = verdict.readiness(f)
    assert level is Readiness.BLOCKED
    assert reasons[0] == "nothing found" and "HIP lacks" in reasons[1]


def test_effort_groups_by_area_and_adds_untranslatable_apis() -> None:
    basis = [
        EffortItem(rule_id="GP301", title="Inline PTX", count=2, hours_each=2.0, hours=4.0),
        EffortItem(rule_id="GP304", title="& 31", count=2, hours_each=0.5, hours=1.0),
        EffortItem(rule_id="GP101", title="no ROCm build", count=1, hours_each=6.0, hours=6.0),
    ]
    f = facts(hipify=UNSUPPORTED)
    native = EffortComponent(
        name="native code", kind="native", regime="hipify", low_days=1.5, high_days=9,
        basis="3 construct-files",
    )  # fmt: skip
    scan_effort = Effort(
        low_days=1.5, high_days=9, hours=11, basis=basis, note="scan note", components=[native]
    )
    f = type(f)(**{**f.__dict__, "scan_effort": scan_effort})
    work = verdict.effort(f)
    by_area = {c.area: c for c in work.classes}
    assert set(by_area) == {"cuda-c++", "wave64", "dependencies", "hipify"}
    assert by_area["hipify"].hours == 2 * verdict.UNSUPPORTED_API_HOURS
    assert by_area["hipify"].basis == [
        "cudaGraphFoo CUDA API with no HIP equivalent: 2 x 3 h = 6 h"
    ]
    assert by_area["cuda-c++"].basis[0].startswith("GP301 Inline PTX assembly: 2 x 2 h = 4 h")
    assert work.hours == 17.0
    # the range is the components': the scan's, plus hipify's untranslatable APIs as one more
    assert [c.name for c in work.components] == ["native code", "hipify: untranslatable CUDA APIs"]
    api = work.components[1]
    assert (api.low_days, api.high_days) == (round(6 / 6 * 0.7, 2), round(6 / 6 * 1.6, 2))
    assert work.low_days == round(1.5 + 0.7, 1) and work.high_days == round(9 + 1.6, 1)
    assert "engineer time" in work.calendar
    assert [c.hours for c in work.classes] == sorted((c.hours for c in work.classes), reverse=True)
    assert "scan note" in work.note and "counted once" in work.note


def test_decision_sentences() -> None:
    f = facts()
    work = verdict.effort(f)
    assert verdict.decision(Readiness.READY, work, []).startswith("Ready for ROCm")
    assert verdict.decision(Readiness.MAJOR_WORK, work, []).startswith("Portable with real work")
    blocked = verdict.decision(Readiness.BLOCKED, work, [])
    assert blocked.startswith("Not runnable on ROCm yet, but nothing forces CUDA")


def test_a_blocked_decision_still_says_the_numbers_are_wrong() -> None:
    """Issue 17: with a validate report saying *wrong*, a BLOCKED project's decision
    dropped the numerics warning; it now leads with it at every level."""
    f = facts(validate=WRONG)
    work = verdict.effort(f)
    for level in (Readiness.BLOCKED, Readiness.MINOR_WORK, Readiness.READY, Readiness.MAJOR_WORK):
        text = verdict.decision(level, work, [], f)
        assert "Do not move traffic: module head computes wrong numbers" in text, level
        assert text.count("wrong numbers") == 1
    assert "wrong numbers" not in verdict.decision(Readiness.BLOCKED, work, [], facts())
