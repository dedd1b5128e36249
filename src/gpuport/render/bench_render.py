"""Terminal and Markdown views of a :class:`BenchRun` (JSON is the model itself)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from gpuport.bench.model import BenchResult, BenchRun, CaseStatus
from gpuport.render.text import clean, clean_line, fmt_number, md

# Secondary metrics worth a column of their own; the rest stay in the JSON.
_SHOWN_METRICS = (
    "backend",
    "model_source",
    "mfu",
    "tflops",
    "per_token_latency_ms",
    "ttft_ms",
    "algbw_gbs",
    "world",
)


fmt_value = fmt_number


def _time_unit(seconds: float) -> tuple[float, str]:
    if seconds >= 1:
        return 1.0, "s"
    if seconds >= 1e-3:
        return 1e3, "ms"
    return 1e6, "µs"


def fmt_time(seconds: float) -> str:
    factor, unit = _time_unit(seconds)
    return f"{seconds * factor:.4g} {unit}"


def fmt_range(lo: float, hi: float, like: float) -> str:
    """p10–p90 in the unit of the median, so the two ends read at a glance."""
    factor, unit = _time_unit(like)
    return f"{lo * factor:.4g}–{hi * factor:.4g} {unit}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}%"


def _notes(r: BenchResult) -> str:
    if r.status is not CaseStatus.OK:
        return f"{r.status.value}: {r.reason or ''}"
    parts = []
    for key in _SHOWN_METRICS:
        if key in r.metrics:
            val = r.metrics[key]
            if key == "mfu" and isinstance(val, float):
                parts.append(f"MFU {val * 100:.1f}%")
            elif isinstance(val, float):
                parts.append(f"{key} {fmt_value(val)}")
            else:
                parts.append(f"{key} {val}")
    t = r.time
    if t is not None and t.bimodal:
        modes = " | ".join(
            f"{fmt_time(m)} ×{c}" for m, c in zip(t.modes, t.mode_counts, strict=False)
        )
        parts.append(f"bimodal: {modes}")
    if t is not None and t.outliers:
        parts.append(f"{t.outliers} outlier{'s' if t.outliers > 1 else ''}")
    if r.unstable:
        parts.append("unstable")
    return ", ".join(parts)


def _spread(r: BenchResult) -> str:
    """The dispersion shown: robust CV (IQR-based) where the run recorded it."""
    if r.time is None:
        return ""
    return f"{r.time.spread * 100:.1f}%"


def _iqr(r: BenchResult) -> str:
    t = r.time
    if t is None:
        return ""
    if t.q1 is None or t.q3 is None:
        return fmt_range(t.p10, t.p90, t.median) + " (p10–p90)"
    return fmt_range(t.q1, t.q3, t.median)


def _by_workload(results: Iterable[BenchResult]) -> dict[str, list[BenchResult]]:
    out: dict[str, list[BenchResult]] = {}
    for r in results:
        out.setdefault(r.workload, []).append(r)
    return out


def header_lines(run: BenchRun) -> list[str]:
    d = run.device
    lines = [
        f"{d.name} · {d.backend}"
        + (f" · {d.arch}" if d.arch else "")
        + (f" · {d.runtime}" if d.runtime else "")
        + (f" · torch {d.torch}" if d.torch else ""),
        f"suite {run.suite} · {len(run.results)} cases · {run.duration_s:.1f} s · run {run.id[:8]}"
        + (f" · label {run.label}" if run.label else ""),
    ]
    if d.spec_key:
        lines.append(f"catalog entry: {d.spec_key} (percentages are of its dense peaks)")
    elif d.backend != "cpu":
        lines.append("GPU not in the catalog: no % of peak (add it with --knowledge DIR)")
    if run.settings:
        lines.append("settings: " + ", ".join(f"{k}={v}" for k, v in sorted(run.settings.items())))
    return lines


def render_terminal(run: BenchRun, console: Console) -> None:
    for line in header_lines(run):
        console.print(escape(clean_line(line)), highlight=False)
    with_peaks = any(r.peak is not None or r.achievable is not None for r in run.results)
    columns = ["case", "value", "median", "IQR", "robust CV"]
    if with_peaks:
        columns += ["% peak", "% achieved"]
    columns.append("notes")
    for workload, results in _by_workload(run.results).items():
        table = Table(title=workload, title_justify="left", show_edge=False)
        for col in columns:
            table.add_column(col, justify="left" if col in ("case", "notes") else "right")
        for r in results:
            if r.time is None:
                cells = [escape(clean_line(r.case)), r.status.value, "", "", ""]
                cells += ["", ""] if with_peaks else []
                table.add_row(*cells, escape(clean(r.reason or "")), style="dim")
                continue
            cells = [
                escape(clean_line(r.case)),
                f"{fmt_value(r.value)} {r.unit}",
                fmt_time(r.time.median),
                _iqr(r),
                _spread(r),
            ]
            if with_peaks:
                cells += [_pct(r.peak_pct), _pct(r.achievable_pct)]
            table.add_row(*cells, escape(clean(_notes(r))), style="yellow" if r.unstable else None)
        console.print(table)
    skipped = sum(r.status is CaseStatus.SKIPPED for r in run.results)
    failed = sum(r.status is CaseStatus.FAILED for r in run.results)
    unstable = sum(r.unstable for r in run.results)
    if skipped or failed or unstable:
        console.print(
            f"{skipped} skipped, {failed} failed, {unstable} unstable (robust CV = "
            "IQR/1.349/median > 5%, or two modes: rerun on an idle machine, or lock clocks)",
            highlight=False,
        )


def render_markdown(run: BenchRun) -> str:
    out = [f"# gpuport bench: {md(run.display_name)}", ""]
    out += [f"* {md(line)}" for line in header_lines(run)]
    for workload, results in _by_workload(run.results).items():
        out += ["", f"## {md(workload)}", ""]
        out.append("| Case | Value | Median | IQR | robust CV | % peak | % achieved | Notes |")
        out.append("|---|---:|---:|---:|---:|---:|---:|---|")
        for r in results:
            if r.time is None:
                out.append(f"| {md(r.case)} | - | - | - | - | - | - | {md(_notes(r))} |")
                continue
            out.append(
                f"| {md(r.case)} | {fmt_value(r.value)} {md(r.unit)} | {fmt_time(r.time.median)} "
                f"| {_iqr(r)} | {_spread(r)} "
                f"| {_pct(r.peak_pct)} | {_pct(r.achievable_pct)} | {md(_notes(r))} |"
            )
    return "\n".join(out) + "\n"
