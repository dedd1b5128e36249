"""Views of a Comparison (Markdown, CSV, JSON, terminal) and of the run history.

The Markdown table has the shape of the side-by-side tables in the articles
gpuport started from (``| Workload | A | B | Δ |``), but with our own numbers
and an interval on every Δ, so a reader can tell a real difference from noise.
Run labels and case names are user text: they are escaped for Markdown and for
rich markup before they reach a table.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from gpuport.bench.history import RunSummary
from gpuport.bench.model import CompareRow, Comparison
from gpuport.render.text import clean_line, md

VERDICT_STYLE = {
    "faster": "bold green",
    "slower": "bold red",
    "same": "dim",
    "no significant change": "dim",
    "n/a": "yellow",
}
CSV_COLUMNS = (
    "workload",
    "case",
    "unit",
    "higher_is_better",
    "run",
    "run_id",
    "device",
    "baseline",
    "value",
    "ratio",
    "ci_low",
    "ci_high",
    "verdict",
    "notes",
)


def format_value(value: float | None, unit: str = "") -> str:
    """A headline value with about four significant digits and its unit; '-' when absent."""
    if value is None:
        return "-"
    if abs(value) >= 10_000:
        text = f"{value:,.0f}"
    elif abs(value) >= 100:
        text = f"{value:.1f}"
    elif abs(value) >= 10:
        text = f"{value:.2f}"
    elif abs(value) >= 1:
        text = f"{value:.3f}"
    else:
        text = f"{value:.4g}"
    return f"{text} {unit}".strip()


def _pct(ratio: float) -> str:
    return f"{(ratio - 1.0) * 100:+.1f}%"


def format_delta(row: CompareRow, i: int) -> str:
    """``+12.3% [+10.9%, +13.6%] faster`` for run ``i``; 'n/a' where there is no ratio."""
    ratio = row.ratios[i]
    if ratio is None:
        return "n/a"
    low, high = row.ci_low[i], row.ci_high[i]
    interval = f" [{_pct(low)}, {_pct(high)}]" if low is not None and high is not None else ""
    return f"{_pct(ratio)}{interval} {row.verdicts[i]}"


def _row_name(row: CompareRow) -> str:
    return f"{row.workload} / {row.case}" if row.case else row.workload


def _geomean_text(c: Comparison) -> list[str]:
    parts = []
    for i in range(1, len(c.runs)):
        g = c.geomean[i] if i < len(c.geomean) else None
        parts.append((c.runs[i], "n/a" if g is None or not math.isfinite(g) else _pct(g)))
    return [f"{name} {text}" for name, text in parts]


def family_lines(c: Comparison) -> list[str]:
    """One line per workload family: its geomean per run, how many cases were significant.

    The all-case geomean comes last and says what it mixes: with families that moved in
    opposite directions it describes none of them.
    """
    lines = []
    for fam in c.families:
        parts = []
        for i in range(1, len(c.runs)):
            g = fam.geomean[i] if i < len(fam.geomean) else None
            text = "n/a" if g is None or not math.isfinite(g) else _pct(g)
            sig = fam.significant[i] if i < len(fam.significant) else 0
            noisy = fam.unstable[i] if i < len(fam.unstable) else 0
            extra = f", {noisy} unstable" if noisy else ""
            who = f"{c.runs[i]} " if len(c.runs) > 2 else ""
            parts.append(f"{who}{text} ({sig} of {fam.cases} significant{extra})")
        lines.append(f"{fam.family} ({', '.join(fam.workloads)}): " + "; ".join(parts))
    if len(c.families) > 1:
        lines.append("all cases, mixing the families: " + ", ".join(_geomean_text(c)))
    elif not c.families:
        lines.append(", ".join(_geomean_text(c)))
    return lines


def _legend(c: Comparison) -> str:
    return (
        f"Δ: change against {c.runs[0]} (positive = better, also for latency), "
        f"{c.confidence:.0%} bootstrap interval; |Δ| < {c.noise_threshold:.0%} counts as same; "
        "an interval that includes 0 reads 'no significant change'."
    )


def compare_markdown(c: Comparison) -> str:
    """The side-by-side table, a geomean line, then the notes per case."""
    names = [md(n) for n in c.runs]
    delta_headers = ["Δ"] if len(names) == 2 else [f"Δ {n}" for n in names[1:]]
    header = ["Workload", *names, *delta_headers]
    align = ["---", *("---:" for _ in names), *("---" for _ in delta_headers)]
    lines = [
        f"# gpuport compare: {' vs '.join(names)}",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join(align) + "|",
    ]
    for row in c.rows:
        cells = [md(_row_name(row))]
        cells += [md(format_value(v, row.unit)) for v in row.values]
        cells += [format_delta(row, i) for i in range(1, len(c.runs))]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"**Geomean by workload family** against {names[0]}:", ""]
    lines += [f"* {md(line)}" for line in family_lines(c)]
    lines += ["", md(_legend(c))]
    notes = [f"* {md(note)}" for note in c.notes]
    notes += [f"* {md(_row_name(row))}: {md(note)}" for row in c.rows for note in row.notes]
    if notes:
        lines += ["", "## Notes", "", *notes]
    return "\n".join(lines) + "\n"


def _csv_number(x: float | None) -> str:
    return "" if x is None else repr(x)


def _csv_text(text: str) -> str:
    """A text cell from a result file: hidden characters made visible (a CSV is printed to
    terminals too), and a cell a spreadsheet would run as a formula (``=HYPERLINK(...)``,
    ``+cmd|...``, ``@SUM``, ``-1+1``) starts with ``'`` (OWASP's CSV-injection advice)."""
    out = clean_line(text)
    return f"'{out}" if out[:1] in ("=", "+", "-", "@", "\t", "\r") else out


def compare_csv(c: Comparison) -> str:
    """One row per case per run (baseline included), full-precision numbers, blanks for none."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in c.rows:
        for i, name in enumerate(c.runs):
            writer.writerow(
                [
                    _csv_text(row.workload),
                    _csv_text(row.case),
                    _csv_text(row.unit),
                    str(row.higher_is_better).lower(),
                    _csv_text(name),
                    _csv_text(c.run_ids[i] if i < len(c.run_ids) else ""),
                    _csv_text(c.devices[i] if i < len(c.devices) else ""),
                    "true" if i == 0 else "false",
                    _csv_number(row.values[i]),
                    _csv_number(row.ratios[i]),
                    _csv_number(row.ci_low[i]),
                    _csv_number(row.ci_high[i]),
                    _csv_text(row.verdicts[i]),
                    _csv_text("; ".join(row.notes)),
                ]
            )
    return buf.getvalue()


def compare_json(c: Comparison) -> str:
    return c.model_dump_json(indent=2) + "\n"


def _safe(text: str) -> str:
    """User text for rich markup: control characters made visible, brackets escaped."""
    return escape(clean_line(text))


def compare_terminal(c: Comparison, console: Console) -> None:
    """The comparison as a rich table, verdicts coloured, then geomean and notes."""
    table = Table(
        title=f"gpuport compare: baseline {_safe(c.runs[0])}",
        title_justify="left",
        caption=_safe(_legend(c)),
        caption_justify="left",
    )
    table.add_column("workload", overflow="fold")
    for name, device in zip(c.runs, c.devices, strict=False):
        header = _safe(name) if device in name else f"{_safe(name)}\n{_safe(device)}"
        table.add_column(header, justify="right", overflow="fold")
    for name in c.runs[1:]:
        header = f"Δ {name}" if len(c.runs) > 2 else "Δ"
        table.add_column(_safe(header), no_wrap=True, overflow="fold")
    for row in c.rows:
        cells: list[Text | str] = [Text(clean_line(_row_name(row)))]
        cells += [Text(clean_line(format_value(v, row.unit))) for v in row.values]
        cells += [
            Text(format_delta(row, i), style=VERDICT_STYLE.get(row.verdicts[i], ""))
            for i in range(1, len(c.runs))
        ]
        table.add_row(*cells)
    console.print(table)
    console.print(
        clean_line(f"geomean by workload family against {c.runs[0]}:"),
        markup=False,
        highlight=False,
    )
    for line in family_lines(c):
        console.print(clean_line(f"  {line}"), markup=False, highlight=False)
    for note in c.notes:
        console.print(clean_line(f"note: {note}"), markup=False, highlight=False)
    for row in c.rows:
        for note in row.notes:
            console.print(
                clean_line(f"note: {_row_name(row)}: {note}"), markup=False, highlight=False
            )


def history_terminal(summaries: Sequence[RunSummary], console: Console) -> None:
    """The stored runs, newest first, with what ``gpuport compare`` accepts as a reference."""
    if not summaries:
        console.print("no runs in the history yet (gpuport bench stores each run)")
        return
    table = Table(title="gpuport history (newest first)", title_justify="left")
    for col in ("id", "label", "device", "suite", "started", "ok / cases"):
        table.add_column(col, overflow="fold", justify="right" if col == "ok / cases" else "left")
    for s in summaries:
        table.add_row(
            Text(clean_line(s.id)),
            Text(clean_line(s.label or "-")),
            Text(clean_line(s.device)),
            Text(clean_line(s.suite)),
            Text(clean_line(s.started)),
            f"{s.n_ok} / {s.n_results}",
        )
    console.print(table)
