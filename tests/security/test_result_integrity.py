"""Issue 14 item 5: bench and validate result files check themselves when loaded.

Each edited file of the review's class 4 is a case here: a headline ``value`` x10 with the
samples untouched (compare showed "+900% faster"), samples NaN/zero/negative/empty,
``time.n = -5``, a duplicated result, a validate report saying ``wrong`` with no rows or
with its counts zeroed. A file gpuport wrote carries a content digest; an edit is "edited
after the run" and refused unless ``--accept-edited``; a file without a digest (older
gpuport) loads with a warning; inconsistencies are refused either way.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from gpuport.bench.model import BenchResult, BenchRun, CaseStatus, DeviceInfo
from gpuport.bench.timing import summarize
from gpuport.integrity import ResultFileWarning, accepting_edited, digest_of
from gpuport.models import EnvFingerprint, GpuportError, load_result
from gpuport.validate.model import NumericSettings, ParityReport, Row, Side, Status, Verdict
from tests.conftest import run_subprocess


def _run(label: str, seconds: float) -> BenchRun:
    samples = [seconds * (1 + 0.001 * ((i % 7) - 3)) for i in range(50)]
    stats = summarize(samples)
    result = BenchResult(
        workload="gemm", case="bf16", unit="TFLOPS", value=2e12 / stats.median / 1e12,
        time=stats, samples=samples, work_per_iter=2e12, peak=1000.0,
        peak_pct=round(100 * 2e12 / stats.median / 1e12 / 1000.0, 2),
    )  # fmt: skip
    skipped = BenchResult(workload="gemm", case="fp8", status=CaseStatus.SKIPPED, reason="no")
    return BenchRun(
        id=label * 8, label=label, suite="quick", env=EnvFingerprint.collect(),
        device=DeviceInfo(backend="cuda", name=f"GPU {label}"), started="2026-11-25T00:00:00",
        duration_s=1.0, results=[result, skipped],
    )  # fmt: skip


def _write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data))
    return path


def _data(run: BenchRun | ParityReport) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(run.model_dump_json())
    return data


def _load(path: Path, model: type = BenchRun) -> Any:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = load_result(path, model)
    return loaded, [str(w.message) for w in caught if issubclass(w.category, ResultFileWarning)]


# -- the digest ------------------------------------------------------------------------------


def test_a_file_gpuport_wrote_carries_a_digest_that_verifies(tmp_path: Path) -> None:
    run = _run("a", 2e-3)
    data = _data(run)
    assert data["digest"] == digest_of(data) and data["digest"].startswith("sha256:")
    path = tmp_path / "a.json"
    path.write_text(run.model_dump_json(indent=2))  # formatting is not content
    loaded, warned = _load(path)
    assert loaded.id == run.id and warned == []


def test_value_times_ten_is_edited_after_the_run_and_refused(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(_run("a", 2e-3).model_dump_json())
    data = _data(_run("b", 2e-3))
    data["results"][0]["value"] *= 10
    _write(b, data)
    res = run_subprocess("compare", str(a), str(b), "--format", "csv")
    assert res.code == 2 and res.out == ""
    assert res.err.count("\n") == 1 and "edited after the run" in res.err
    assert "--accept-edited" in res.err
    # --accept-edited does not make the figure true: value no longer follows from the samples
    res = run_subprocess("compare", str(a), str(b), "--format", "csv", "--accept-edited")
    assert res.code == 2 and "is not work/median" in res.err and "+900" not in res.out


def test_accept_edited_uses_a_consistent_edit_and_says_so(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(_run("a", 2e-3).model_dump_json())
    data = _data(_run("b", 2e-3))
    data["label"] = "renamed by hand"
    _write(b, data)
    refused = run_subprocess("compare", str(a), str(b), "--format", "csv")
    assert refused.code == 2 and "edited after the run" in refused.err
    res = run_subprocess("compare", str(a), str(b), "--format", "csv", "--accept-edited")
    assert res.code == 0, res.err
    assert "renamed by hand" in res.out
    assert "warning" in res.err and "edited after the run" in res.err


def test_added_field_is_an_edit(tmp_path: Path) -> None:
    data = _data(_run("a", 2e-3))
    data["note"] = "added"
    with pytest.raises(GpuportError, match="edited after the run"):
        load_result(_write(tmp_path / "a.json", data), BenchRun)
    with accepting_edited(True):
        loaded, warned = _load(tmp_path / "a.json")
    assert loaded.id == "a" * 8 and any("edited after the run" in w for w in warned)


def test_a_file_without_digest_loads_with_a_warning(tmp_path: Path) -> None:
    data = _data(_run("a", 2e-3))
    del data["digest"]
    loaded, warned = _load(_write(tmp_path / "old.json", data))
    assert loaded.id == "a" * 8
    assert len(warned) == 1 and "no content digest" in warned[0]


# -- consistency, recomputed from the raw samples (with or without a digest) --------------------


def _edit(key: str, value: Any) -> dict[str, Any]:
    data = _data(_run("a", 2e-3))
    del data["digest"]  # an old-style file: only the consistency checks stand in the way
    result = data["results"][0]
    if key.startswith("time."):
        result["time"][key[5:]] = value
    else:
        result[key] = value
    return data


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("value", 1e6, "is not work/median"),
        ("value", -1.0, "not a positive figure"),
        ("value", 0.0, "not a positive figure"),
        ("samples", [float("nan")] * 50, "is not a time"),
        ("samples", [0.0] * 50, "is not a time"),
        ("samples", [-2e-3] * 50, "is not a time"),
        ("samples", [float("inf")] * 50, "is not a time"),
        ("samples", [], "no samples"),
        ("samples", [1e-3] * 50, "time.median"),
        ("time.n", -5, "time.n is -5"),
        ("time.median", 2e-4, "time.median"),
        ("peak_pct", 99.0, "peak_pct"),
        ("work_per_iter", 2e13, "is not work/median"),
    ],
)
def test_inconsistent_figures_are_refused(
    tmp_path: Path, key: str, value: Any, message: str
) -> None:
    path = _write(tmp_path / "bad.json", _edit(key, value))
    with pytest.raises(GpuportError, match=message) as err:
        _load(path)
    assert "\n" not in str(err.value) and "not a consistent" in str(err.value)


def test_duplicated_result_and_negative_duration_are_refused(tmp_path: Path) -> None:
    data = _data(_run("a", 2e-3))
    del data["digest"]
    data["results"].append(data["results"][0])
    with pytest.raises(GpuportError, match="appears twice"):
        _load(_write(tmp_path / "dup.json", data))
    data["results"].pop()
    data["duration_s"] = -3
    with pytest.raises(GpuportError, match="not a duration"):
        _load(_write(tmp_path / "dur.json", data))


def test_all_nan_samples_through_compare_are_one_line_exit_2(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(_run("a", 2e-3).model_dump_json())
    _write(b, _edit("samples", [float("nan")] * 50))
    res = run_subprocess("compare", str(a), str(b))
    assert res.code == 2 and "same" not in res.out
    assert [line for line in res.err.splitlines() if "error" in line] == [
        line for line in res.err.splitlines() if line.startswith("gpuport: error:")
    ]
    assert "is not a time" in res.err and "Traceback" not in res.err


# -- validate reports ---------------------------------------------------------------------------


def _report(status: Status | None) -> ParityReport:
    env = EnvFingerprint.collect()
    settings = NumericSettings(device="cpu", backend="cpu", torch="2", dtype_default="float32")
    rows = []
    if status is not None:
        rows = [
            Row(order=0, path="layers.0", op="Linear", dtype="float32", shape=[4], numel=4,
                status=status),
        ]  # fmt: skip
    wrong = status is Status.WRONG
    return ParityReport(
        mode="check",
        a=Side(name="A", env=env, settings=settings),
        b=Side(name="B", env=env, settings=settings),
        rows=rows,
        first_divergence="layers.0" if wrong else None,
        counts={status: 1} if status else {},
        verdict=Verdict.WRONG if wrong else (Verdict.SAME if status else Verdict.NOTHING),
        verdict_reason="x",
    )


def test_a_real_report_loads_and_edits_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(_report(Status.WRONG).model_dump_json())
    loaded, warned = _load(path, ParityReport)
    assert loaded.verdict is Verdict.WRONG and warned == []
    data = _data(_report(Status.WRONG))
    data["verdict"] = "same"
    with pytest.raises(GpuportError, match="edited after the run"):
        load_result(_write(path, data), ParityReport)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(verdict="wrong"), "verdict 'wrong', but the rows give"),  # no rows
        (lambda d: d.update(counts={"wrong": 1}, verdict="wrong"), "counts say 1 wrong"),
        (lambda d: d.update(counts={"wrong": -1}), "negative count"),
    ],
)
def test_a_wrong_verdict_needs_rows_that_say_so(tmp_path: Path, edit: Any, message: str) -> None:
    data = _data(_report(None))
    del data["digest"]
    edit(data)
    with pytest.raises(GpuportError, match=message):
        _load(_write(tmp_path / "r.json", data), ParityReport)


def test_zeroed_counts_are_refused(tmp_path: Path) -> None:
    data = _data(_report(Status.WRONG))
    del data["digest"]
    data["counts"] = {}
    with pytest.raises(GpuportError, match="counts say 0 wrong, the rows give 1"):
        _load(_write(tmp_path / "r.json", data), ParityReport)


def test_assess_refuses_an_edited_validate_report_in_one_line(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "requirements.txt").write_text("numpy\n")
    data = _data(_report(Status.WRONG))
    data["rows"] = []  # "wrong" with no rows, digest kept: both checks refuse it
    report = _write(tmp_path / "r.json", data)
    res = run_subprocess("assess", str(project), "--validate", str(report), "--no-progress")
    assert res.code == 2 and "edited after the run" in res.err
    assert len(res.err.strip().splitlines()) == 1
    res = run_subprocess(
        "assess", str(project), "--validate", str(report), "--no-progress", "--accept-edited"
    )
    assert res.code == 2 and "counts say 1 wrong, the rows give 0" in res.err


def _forged(status: Status, **row: Any) -> dict[str, Any]:
    """A report whose one row says ``status``, with counts, verdict and digest recomputed to
    match it: what a forger who knows the format writes."""
    from gpuport.validate.report import finish

    env = EnvFingerprint.collect()
    settings = NumericSettings(device="cpu", backend="cpu", torch="2", dtype_default="float32")
    base = {"order": 0, "path": "layers.0", "op": "Linear", "dtype": "float32", "shape": [4]}
    rows = [Row(**base, numel=4, status=status, **row)]
    report = finish(mode="check", rows=rows, a=Side(name="A", env=env, settings=settings),
                    b=Side(name="B", env=env, settings=settings), model_ref=None, grafted=True,
                    reference="fp64", settings_warnings=[], warnings=[], left_out=[],
                    bytes_compared=0, seconds=0.0)  # fmt: skip
    data = json.loads(report.model_dump_json())
    data.pop("digest", None)
    data["digest"] = digest_of(data)
    return data


TOL = {"atol": 1e-5, "rtol": 1e-3, "op_class": "matmul", "provenance": "test"}
BEYOND = {"numel": 4, "max_abs": 0.5, "mean_abs": 0.2, "max_rel": 0.4, "mismatched": 3,
          "min_atol": 0.49}  # fmt: skip
WITHIN = {"numel": 4, "max_abs": 0.0, "mean_abs": 0.0, "max_rel": 0.0}
WRONG_ARB = {"err_a": 1e-6, "err_b": 1e-3, "ratio": 1e3, "multiplier": 3.0, "floor": 0.0,
             "b_source": "local", "provenance": "test"}  # fmt: skip


@pytest.mark.parametrize(
    ("status", "row", "message"),
    [
        (Status.SAME, {"metrics": BEYOND, "local": BEYOND}, "beyond tolerance"),
        (Status.DIFFERENT, {"metrics": WITHIN, "local": WITHIN}, "every metric is within"),
        (Status.EQUIVALENT, {"local": BEYOND, "arbitration": WRONG_ARB}, "arbitration says B"),
        (Status.SAME, {}, "'same' with no metrics"),
        (Status.NOT_CHECKED, {"metrics": WITHIN}, "'not checked' but the row has metrics"),
        (Status.SAME, {"metrics": {**BEYOND, "mismatched": 0}}, "yet 0 mismatched"),
        (Status.DIFFERENT, {"local": {**BEYOND, "min_atol": 0.0}}, "min_atol is below it"),
        (Status.DIFFERENT, {"local": {**BEYOND, "mismatched": 9}}, "mismatched is 9 of 4"),
    ],
)
def test_a_forged_row_status_is_refused_even_with_a_recomputed_digest(
    tmp_path: Path, status: Status, row: dict[str, Any], message: str
) -> None:
    """Issue 23 item 7: row statuses are re-derived from their metrics, tolerance and float64
    arbitration; a forger who recomputes counts, verdict and digest is still refused."""
    data = _forged(status, tolerance=TOL, **row)
    with pytest.raises(GpuportError, match=message):
        _load(_write(tmp_path / "r.json", data), ParityReport)


def test_an_honest_row_loads(tmp_path: Path) -> None:
    data = _forged(Status.DIFFERENT, tolerance=TOL, metrics=BEYOND, local=BEYOND)
    loaded, _ = _load(_write(tmp_path / "r.json", data), ParityReport)
    assert loaded.rows[0].status is Status.DIFFERENT
    wrong = _forged(Status.WRONG, tolerance=TOL, local=BEYOND, arbitration=WRONG_ARB)
    assert _load(_write(tmp_path / "w.json", wrong), ParityReport)[0].verdict is Verdict.WRONG


def test_rowcheck_knows_the_model_row_by_the_tracer_name() -> None:
    from gpuport.validate import rowcheck, trace

    assert rowcheck.ROOT == trace.ROOT


def test_compare_csv_of_a_forged_run_has_no_formula_and_no_escape(tmp_path: Path) -> None:
    """Red-team re-run 11: a forger who recomputes the digest put `=HYPERLINK(...)`, `+cmd|`
    and `@SUM` cells and raw OSC 52 / C1 / CR-LF into `compare --format csv` (a spreadsheet
    runs the first, a terminal the second). Text cells are made visible and start with `'`."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(_run("a", 2e-3).model_dump_json())
    evil = "\x1b]52;c;cHduZWQ=\x07\x9b31m\u202e\r\nFORGED"
    data = _data(_run("b", 2e-3))
    data["label"] = '=HYPERLINK("http://evil","x")' + evil
    data["device"]["name"] = '+cmd|"/c calc"!A1' + evil
    for r in data["results"]:
        r["unit"] = "@SUM(1)" + evil
    data["digest"] = digest_of(data)
    _write(b, data)
    res = run_subprocess("compare", str(a), str(b), "--format", "csv")
    assert res.code == 0, res.err
    assert not any(c in res.out for c in ("\x1b", "\x07", "\x9b", "\u202e", "\r"))
    import csv
    import io

    rows = list(csv.reader(io.StringIO(res.out)))
    assert all(len(r) == len(rows[0]) for r in rows)  # no row split by a forged newline
    cells = [cell for r in rows[1:] for cell in r]
    assert not any(cell[:1] in ("=", "+", "@") for cell in cells)
    assert any(cell.startswith("'=HYPERLINK") for cell in cells)
    assert any(cell.startswith("'+cmd") for cell in cells)
