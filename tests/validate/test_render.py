"""Renderers: user-controlled text (module paths) is escaped; the worst rows come first."""

from __future__ import annotations

import io

from rich.console import Console

from gpuport.models import EnvFingerprint
from gpuport.render import validate_render
from gpuport.validate.model import (
    Arbitration,
    Metrics,
    NumericSettings,
    ParityReport,
    Row,
    Side,
    Status,
    Tolerance,
    Verdict,
)


def _report(path: str) -> ParityReport:
    settings = NumericSettings(device="cpu", backend="cpu", torch="2", dtype_default="float32")
    side = Side(name="A", env=EnvFingerprint.collect(), settings=settings)
    metrics = Metrics(numel=4, max_abs=0.5, mean_abs=0.1, max_rel=0.5, mismatched=2, min_atol=0.5)
    tol = Tolerance(atol=1e-5, rtol=1e-6, op_class="elementwise", provenance="x")
    rows = [
        Row(
            order=i,
            path=f"m{i}",
            op="Linear",
            dtype="float32",
            shape=[4],
            numel=4,
            metrics=metrics,
            tolerance=tol,
            status=Status.SAME,
        )
        for i in range(30)
    ]
    rows.append(
        Row(
            order=30,
            path=path,
            op="Evil",
            dtype="float32",
            shape=[4],
            numel=4,
            metrics=metrics,
            tolerance=tol,
            status=Status.WRONG,
            reason="bad",
        )
    )
    return ParityReport(
        mode="check",
        a=side,
        b=side.model_copy(update={"name": "B"}),
        rows=rows,
        first_divergence=path,
        first_divergence_order=30,
        counts={Status.SAME: 30, Status.WRONG: 1},
        verdict=Verdict.WRONG,
        verdict_reason="1 wrong",
    )


def test_markdown_escapes_module_paths() -> None:
    report = _report("layers.0|<img src=x>[link](http://e)\x1b[31m")
    text = validate_render.markdown(report, top=5)
    assert "<img" not in text and "\x1b" not in text and "[link](" not in text
    assert "\\|" in text
    assert text.count("\n| ") == 1 + 5  # header + 5 rows (the wrong one first)
    assert "| 30 |" in text.split("\n|---")[1].split("\n")[1]


def test_terminal_has_no_raw_control_characters() -> None:
    report = _report("x\x1b]8;;http://evil\x07y")
    buf = io.StringIO()
    validate_render.terminal(report, Console(file=buf, width=200, force_terminal=False), top=3)
    out = buf.getvalue()
    assert "\x1b]8" not in out and "\\x1b" in out
    assert "WRONG" in out


def test_module_column_is_never_dropped_at_80_columns() -> None:
    base = _report("layers.11.mlp.down_proj")
    full = Metrics(
        numel=4,
        max_abs=0.5,
        mean_abs=0.1,
        max_rel=0.5,
        max_ulp=123_456,
        cosine=0.999123,
        sqnr_db=41.5,
        mismatched=2,
        min_atol=0.5,
    )
    arb = Arbitration(
        err_a=1e-7, err_b=3e-5, ratio=300.0, multiplier=2.0, floor=0.0, b_source="local",
        provenance="x",
    )  # fmt: skip
    rows = [
        r.model_copy(update={"metrics": full, "local": full, "arbitration": arb}) for r in base.rows
    ]
    report = base.model_copy(update={"rows": rows})
    buf = io.StringIO()
    validate_render.terminal(report, Console(file=buf, width=80, force_terminal=False), top=4)
    out = buf.getvalue()
    table = out[out.index("Worst") :].split("× tol:")[0]
    assert "layers.11.mlp.down_proj" in table  # the first divergence, whole
    assert all(f" m{i} " in table for i in range(3))  # and the other rows' modules
    assert all(len(line) <= 80 for line in out.splitlines())
    assert "max abs" in table and "× tol" in table  # the key numbers stay, unclipped...
    assert "left out at this width" in out  # ...and what did not fit is named


def test_capture_summary_separates_the_budget_from_what_was_not_traced() -> None:
    from gpuport.validate.model import CaptureSummary

    settings = NumericSettings(device="cpu", backend="cpu", torch="2", dtype_default="float32")
    summary = CaptureSummary(
        path="a.gpv",
        model_ref="m.py:build",
        device="cpu",
        calls=3,
        tensors=3,
        stored_bytes=10,
        left_out=[
            "head",
            "blocks.0.attn.out_proj: not traced (never called as a module; its parent may use "
            "its weights directly, and is checked with them)",
        ],
        seconds=0.1,
        settings=settings,
    )
    buf = io.StringIO()
    validate_render.capture_terminal(summary, Console(file=buf, width=200))
    text = buf.getvalue()
    assert "left out by --max-bytes: 1 call(s): head" in text
    assert "blocks.0.attn.out_proj: not traced (never called as a module" in text
