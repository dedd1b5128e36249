"""Views of a ParityReport (terminal, Markdown) and of a capture summary.

The table leads with the worst rows (wrong, then different, then by how many times the
tolerance they would need), always including the first divergence, so a person sees where to
look without scrolling through every module. Module paths, configurations and file names come
from the user's model and files: they are cleaned of control characters and escaped for rich
markup and Markdown before they reach a table.
"""

from __future__ import annotations

from rich import box
from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from gpuport.render.text import clean, clean_line, md
from gpuport.validate.model import (
    CaptureSummary,
    Metrics,
    OpDivergence,
    ParityReport,
    Row,
    Side,
    Status,
    Verdict,
    budget_left_out,
)

STATUS_STYLE = {
    Status.WRONG: "bold red",
    Status.DIFFERENT: "yellow",
    Status.EQUIVALENT: "cyan",
    Status.SAME: "green",
    Status.NOT_CHECKED: "dim",
}
VERDICT_STYLE = {
    Verdict.WRONG: "bold white on red",
    Verdict.DIFFERENT: "bold black on yellow",
    Verdict.EQUIVALENT: "bold black on cyan",
    Verdict.SAME: "bold white on green",
    Verdict.NOTHING: "bold white on grey37",
}
TOP_N = 15
# table columns left out first when the terminal is too narrow (indexes into the numeric ones:
# max ULP, SQNR dB, local, fp64 B/A, cosine, max abs, × tol)
_DROP_ORDER = [1, 3, 5, 6, 2, 0, 4]


def fmt(x: float | None, digits: int = 3) -> str:
    """Compact scientific-ish number; '-' when absent."""
    if x is None:
        return "-"
    if x == 0:
        return "0"
    return f"{x:.{digits}g}"


def _need(row: Row) -> float:
    """How many times its atol this row would need (orders rows within one status)."""
    m = row.judged
    if m is None or row.tolerance is None:
        return 0.0
    atol = row.tolerance.atol or 1e-30
    return m.min_atol / atol


def worst(report: ParityReport, top: int) -> list[Row]:
    """The ``top`` worst rows, the first divergence always among them, in a stable order."""
    rows = sorted(report.rows, key=lambda r: (-r.status.rank, -_need(r), r.order, r.index))
    chosen = rows[: max(top, 0)]
    first = next(
        (
            r
            for r in report.rows
            if r.order == report.first_divergence_order and r.path == report.first_divergence
        ),
        None,
    )
    if first is not None and first not in chosen:
        chosen = [first, *chosen[: max(top - 1, 0)]]
    return chosen


def _side(side: Side) -> str:
    fp, st = side.env, side.settings
    gpu = fp.gpu_name or ("CPU" if st.backend == "cpu" else st.backend)
    arch = f" {fp.gpu_arch}" if fp.gpu_arch else ""
    return f"{gpu}{arch}, {st.device}, torch {st.torch}" + (f", {side.file}" if side.file else "")


def _metric_cells(m: Metrics | None) -> list[str]:
    if m is None:
        return ["-", "-", "-", "-"]
    if m.max_ulp is None:
        ulp = "-"
    else:
        ulp = f"{m.max_ulp:,}" if m.max_ulp < 100_000 else f"{m.max_ulp:.3g}"
    sqnr = "exact" if m.sqnr_db is None else f"{m.sqnr_db:.1f}"
    cosine = "-" if m.cosine is None else f"{m.cosine:.6f}"
    return [fmt(m.max_abs), ulp, cosine, sqnr]


def _tol_cell(row: Row) -> str:
    t = row.tolerance
    if t is None:
        return "-"
    k = f" K={t.k}" if t.k else ""
    return f"{fmt(t.atol, 2)}/{fmt(t.rtol, 2)}{k}"


def _arb_cell(row: Row) -> str:
    a = row.arbitration
    if a is None:
        return "-"
    ratio = "inf" if a.ratio is None else f"{a.ratio:.3g}"
    return f"{ratio}/{a.multiplier:g}"


def terminal(report: ParityReport, console: Console, *, top: int = TOP_N) -> None:
    """Header panel, warnings, then the worst rows."""
    counts = "  ".join(f"[{STATUS_STYLE[s]}]{s.value} {report.counts.get(s, 0)}[/]" for s in Status)
    first = escape(clean_line(report.first_divergence)) if report.first_divergence else "none"
    mode = f"{report.mode}; grafted {'on' if report.grafted else 'off'}; "
    mode += f"reference {report.reference}"
    if report.precision:
        mode += f"; precision {report.precision}"
    lines = [
        Text.from_markup(f"A  {escape(clean(_side(report.a)))}"),
        Text.from_markup(f"B  {escape(clean(_side(report.b)))}"),
        Text.from_markup(
            f"[{VERDICT_STYLE[report.verdict]}] {report.verdict.value.upper()} [/]  "
            f"{escape(clean(report.verdict_reason))}"
        ),
        Text.from_markup(f"first divergence: [bold]{first}[/]   ({escape(mode)})"),
        Text.from_markup(f"{counts}   {report.bytes_compared / 1e6:.1f} MB compared"),
    ]
    console.print(Panel(Group(*lines), title=f"gpuport validate {report.mode}", title_align="left"))
    for w in report.settings_warnings:
        console.print(Text("settings differ: " + clean(w), style="yellow"))
    for w in report.warnings:
        console.print(Text("warning: " + clean(w), style="yellow"))
    rows = worst(report, top)
    if not rows:
        return
    table = Table(
        title=f"Worst {len(rows)} of {len(report.rows)} compared tensors",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        padding=(0, 1),
    )
    body = [
        [
            str(r.order),
            clean_line(r.label),
            clean_line(r.op),
            *_metric_cells(r.metrics),
            _times_tol(r),
            fmt(r.local.max_abs) if r.local else "-",
            _arb_cell(r),
        ]
        for r in rows
    ]
    numeric = ("max abs", "max ULP", "cosine", "SQNR dB", "× tol", "local", "fp64 B/A")
    # a column with nothing in it (local and fp64 without grafting or arbitration) is left out
    keep = [i for i in range(len(numeric)) if any(cells[3 + i] != "-" for cells in body)]
    label_width = min(max((len(cells[1]) for cells in body), default=6), 24)
    op_width = min(max((len(cells[2]) for cells in body), default=2), 12)

    def width(i: int) -> int:  # neither a number nor its header wraps
        return max(len(numeric[i]), *(len(cells[3 + i]) for cells in body)) + 2

    order_width = max(len(cells[0]) for cells in body)
    fixed = (order_width + 2) + (label_width + 2) + (op_width + 2) + 12

    def total() -> int:  # cell padding, plus one separator between two columns
        return fixed + sum(width(i) for i in keep) + 3 + len(keep)

    dropped: list[str] = []
    while keep and total() > console.width:
        last = min(keep, key=_DROP_ORDER.index)  # the least important column goes first
        keep.remove(last)
        dropped.append(numeric[last])
    table.add_column("#", justify="right", no_wrap=True)
    # the module is what the table is for: it keeps its label's width (up to 24 characters;
    # longer paths fold onto more lines); numeric columns are left out first, never truncated
    table.add_column("module", overflow="fold", min_width=label_width, ratio=1)
    table.add_column("op", overflow="ellipsis", max_width=12, no_wrap=True)
    table.add_column("status", no_wrap=True, min_width=10)
    for i in keep:
        table.add_column(numeric[i], justify="right", no_wrap=True)
    for r, cells in zip(rows, body, strict=True):
        table.add_row(
            cells[0],
            Text(cells[1]),
            Text(cells[2]),
            Text(r.status.value, style=STATUS_STYLE[r.status]),
            *(cells[3 + i] for i in keep),
        )
    console.print(table)
    console.print(
        "[dim]× tol: the atol this tensor would need, as a multiple of its tolerance's atol; "
        "local: max abs on A's recorded inputs; fp64 B/A: err_B / err_A against float64 / "
        "the multiplier allowed[/]"
    )
    if dropped:
        console.print(
            f"[dim]left out at this width: {', '.join(sorted(dropped))} "
            "(see --format markdown or json)[/]"
        )
    for r in rows:
        if r.status is not Status.SAME:
            line = Text(f"{r.order} ", style="dim")
            line.append(clean_line(r.label), style="bold")
            line.append(f" {r.status.value}: ", style=STATUS_STYLE[r.status])
            line.append(clean(r.reason))
            console.print(line)
            if r.first_op is not None:
                console.print(Text("    " + clean(op_line(r.first_op)), style="dim"))


def op_line(op: OpDivergence) -> str:
    """One line on the first diverging op of a call (op-level replay)."""
    ins = ", ".join(f"{d}{list(s)}" for d, s in zip(op.dtypes, op.shapes, strict=False))
    backend = ""
    if op.backend_a or op.backend_b:
        backend = f"; SDPA backend A {op.backend_a or '?'}, B {op.backend_b or '?'}"
    return (
        f"op #{op.index} {op.op} at {op.call_site}: inputs {ins} → {op.out_dtype}{backend}; "
        f"error vs float64 {op.err_b:.3g}, a correct {op.nominal_dtype} computation "
        f"{op.err_ref:.3g} ({op.ops_checked} op(s) checked)"
    )


def _times_tol(row: Row) -> str:
    m = row.judged
    if m is None or row.tolerance is None or not row.tolerance.atol:
        return "-"
    need = m.min_atol / row.tolerance.atol
    return "0" if need == 0 else f"{need:.3g}"


def markdown(report: ParityReport, *, top: int = TOP_N) -> str:
    """The same content for a pull-request comment or a wiki page."""
    lines = [
        f"# gpuport validate {report.mode}: **{report.verdict.value}**",
        "",
        md(report.verdict_reason),
        "",
        f"* A: {md(_side(report.a))}",
        f"* B: {md(_side(report.b))}",
        f"* first divergence: {md(report.first_divergence or 'none')}",
        f"* grafted: {'yes' if report.grafted else 'no'}; reference: {report.reference}"
        + (f"; precision: {report.precision}" if report.precision else ""),
        "* counts: " + ", ".join(f"{s.value} {report.counts.get(s, 0)}" for s in Status),
    ]
    notes = [f"settings differ: {w}" for w in report.settings_warnings] + report.warnings
    if notes:
        lines += ["", "## Warnings", "", *(f"* {md(w)}" for w in notes)]
    rows = worst(report, top)
    if rows:
        lines += [
            "",
            f"## Worst {len(rows)} of {len(report.rows)} compared tensors",
            "",
            "| # | module | op | status | max abs | max ULP | cosine | SQNR dB | atol/rtol "
            "| min atol | local max abs | fp64 B/A | why |",
            "|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
        ]
        for r in rows:
            m = r.judged
            cells = [
                str(r.order),
                md(r.label),
                md(r.op),
                r.status.value,
                *_metric_cells(r.metrics),
                _tol_cell(r),
                fmt(m.min_atol) if m else "-",
                fmt(r.local.max_abs) if r.local else "-",
                md(_arb_cell(r)),
                md(r.reason),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    ops = [r for r in report.rows if r.first_op is not None]
    if ops:
        lines += ["", "## First diverging op inside a module (op-level replay)", ""]
        lines += [f"* {md(r.label)}: {md(op_line(r.first_op))}" for r in ops if r.first_op]
    tols = sorted({r.tolerance.provenance for r in rows if r.tolerance})
    if tols:
        lines += ["", "## Tolerances used", "", *(f"* {md(t)}" for t in tols)]
    return "\n".join(lines) + "\n"


def capture_terminal(summary: CaptureSummary, console: Console) -> None:
    """What a capture stored, and what it left out (never silently)."""
    console.print(
        f"captured {summary.calls} module call(s), {summary.tensors} tensor(s), "
        f"{summary.stored_bytes / 1e6:.1f} MB in {summary.seconds:.2f} s → "
        f"{escape(clean(summary.path))}",
        highlight=False,
        soft_wrap=True,
    )
    budget = budget_left_out(summary.left_out)
    if budget:
        shown = ", ".join(budget[:5])
        more = f" and {len(budget) - 5} more" if len(budget) > 5 else ""
        console.print(
            Text(
                f"left out by --max-bytes: {len(budget)} call(s): {clean(shown)}{more}",
                style="yellow",
            )
        )
    for entry in [e for e in summary.left_out if e not in budget]:
        console.print(Text(clean(entry), style="yellow"))
