"""The scan report as a person reads it in a terminal (rich)."""

from __future__ import annotations

import re
import textwrap
from collections import Counter, defaultdict

from rich.console import Console, RenderableType
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from gpuport.models import Severity
from gpuport.render import effort_view
from gpuport.render.finding_groups import RuleGroup, by_scope, counts_text, group
from gpuport.render.text import clean, clean_line
from gpuport.scan.finding import Finding
from gpuport.scan.model import ScanReport, Verdict
from gpuport.scan.rules import RULES
from gpuport.scan.verdict import judged, top_blockers

SEV_STYLE = {
    Severity.BLOCKER: "bold red",
    Severity.MAJOR: "yellow",
    Severity.MINOR: "cyan",
    Severity.INFO: "dim",
}
VERDICT_STYLE = {
    Verdict.BLOCKED: "bold white on red",
    Verdict.MAJOR_WORK: "bold black on yellow",
    Verdict.MINOR_WORK: "bold black on cyan",
    Verdict.READY: "bold white on green",
}


def _header(
    report: ScanReport, console: Console, trimmed: set[str], *, verbose: bool = False
) -> None:
    """The verdict in two lines (issue 29: at most three lines per finding on a 500-file
    project): where and for what target; then the verdict, the effort's total and the
    reason, cut to one line (``trimmed`` gets the reason; --verbose: the reason whole and the
    effort by component); the route line only when the reason does not name the route. The
    judged counts head the findings below."""
    files = f"{report.files_scanned} files"
    if report.skipped:
        files += f" ({len(report.skipped)} skipped)"
    if report.not_built:
        files += f", {len(report.not_built)} not built on ROCm"
    console.print(Text(_where(report, files, console.width, verbose), style="bold"))
    total = f"{report.effort.low_days:g}–{report.effort.high_days:g} engineer-days"
    label = f"[{VERDICT_STYLE[report.verdict]}] {report.verdict.value.upper()} [/] "
    if verbose:
        console.print(Text.from_markup(label + escape(clean(report.verdict_reason))))
        effort_view.print_headline(console, report.effort.components, total)
    else:  # one line: the verdict, the effort's total, the reason cut to what fits
        head = Text.from_markup(label + f"{total} · ")
        reason = clean_line(short_reason(report.verdict_reason))
        room = console.width - head.cell_len
        if len(reason) > room:
            trimmed.add(report.verdict_reason)
            reason = trim(reason, max(room, 24))
        head.append(reason)
        console.print(head)
    if any(r.counts for r in report.routes):
        text = route_summary(report, counted=True)
        if verbose or not _reason_names_routes(report):
            console.print(Text(clean_line("ROCm route: " + text), style="green"))
    elif report.routes:
        console.print(
            Text(
                clean_line("ROCm route evidence, not counted: " + route_summary(report)),
                style="yellow",
            )
        )


def _where(report: ScanReport, files: str, width: int, verbose: bool) -> str:
    """The project line: its path, target and files; by default in one line of ``width``
    (the project's folder name for its path, then the target's name alone, when the whole
    does not fit)."""
    t = report.target
    name = clean_line(report.root)
    short = name.rstrip("/").rsplit("/", 1)[-1] or name
    detail = f"target {t.name} ({t.generation}, wave{t.wave_size}, fp8 {t.fp8})"
    tries = [f"{name} · {detail} · {files}"]
    if not verbose:
        tries += [f"{short} · {detail} · {files}", f"{short} · {t.name} · {files}"]
    return next((x for x in tries if len(x) <= width), tries[-1])


def short_reason(reason: str) -> str:
    """The verdict's reason with its list of route evidence cut to the first piece and a
    count: ``has a ROCm route (.github/workflows/build.yaml +2 more)`` (``--verbose`` and
    every other format: all of them)."""
    head = "ROCm route ("
    start = reason.find(head)
    end = reason.find(")", start) if start >= 0 else -1
    if end < 0:
        return reason
    start += len(head)
    items = reason[start:end].split(", ")
    extra = 0
    last, sep, count = items[-1].rpartition(" and ")
    if sep and count.endswith(" more") and count[: -len(" more")].isdigit():
        items[-1], extra = last, int(count[: -len(" more")])
    more = len(items) - 1 + extra
    if more <= 0:
        return reason
    return f"{reason[:start]}{items[0]} +{more} more{reason[end:]}"


def _reason_names_routes(report: ScanReport) -> bool:
    """Whether the verdict's reason already names every piece of route evidence that counts
    and there is none that does not (then a route line would say it twice)."""
    counted = [r for r in report.routes if r.counts]
    return len(counted) == len(report.routes) and all(
        r.path in report.verdict_reason for r in counted
    )


def _judged_heading(scope: str, findings: list[Finding]) -> Text:
    """``Core code (judged): blocker 0 · major 0 · minor 1 · info 6``: the counts the verdict
    and ``--fail-on`` rest on, at the head of the findings they count."""
    where = "Core code" if scope == "core" else f"{scope.capitalize()} code"
    head = Text(f"{where} (judged): ", style="bold underline")
    for i, s in enumerate(Severity):
        if i:
            head.append(" · ")
        n = sum(1 for f in findings if f.severity is s)
        head.append(f"{s.value} {n}", style=SEV_STYLE[s] if n else "dim")
    return head


def route_summary(report: ScanReport, limit: int = 6, *, counted: bool = False) -> str:
    """The route evidence on one line: ``docker Dockerfile_amd:43, ci .github/...``; evidence
    that does not count says why (issue 24). ``counted``: only the evidence that counts, and
    how many other pieces there are (--verbose lists them with why)."""
    routes = [r for r in report.routes if r.counts] if counted else report.routes
    items = [
        f"{r.kind} {r.path}"
        + (f":{r.line}" if r.line else "")
        + ("" if r.counts else f" (not counted: {r.why})")
        for r in routes[:limit]
    ]
    more = len(routes) - limit
    text = ", ".join(items) + (f" and {more} more" if more > 0 else "")
    left = len(report.routes) - len(routes)
    if left:
        text += f"; {left} more not counted (--verbose says why)"
    return text


def message_lead(message: str) -> str:
    """What a message is about, before its explanation: ``torchvision`` of ``torchvision:
    torchvision has ROCm builds ...``; the whole message when it has no such lead."""
    lead = message.split(": ", 1)[0]
    return lead if len(lead) < len(message) else message


#: Lines of messages and places one rule prints in the terminal before it sums up the rest
#: (a 400 KB kernel of 8,000 differently named masks printed 16,000 lines; --verbose: all)
LINES_PER_RULE = 60


def group_lines(
    g: RuleGroup,
    *,
    indent: int = 2,
    shown: set[str] | None = None,
    limit: int | None = LINES_PER_RULE,
    room: int | None = None,
    trimmed: set[str] | None = None,
) -> list[RenderableType]:
    """One rule's findings as a block that wraps to any width: a head line (rule, severity,
    title, how many), then each distinct message once with its places indented under it
    (one line per folder; a message of one place starts with it), then the fix once. A
    message or fix already printed (``shown``, updated here) is not printed again: the block
    says so in one line. Past ``limit`` lines of messages and places, one line says how many
    messages and findings of the rule are not printed and where they are (``None``: no
    limit). ``room``: the columns a block has (the default report; ``None``: everything
    whole): a message takes one line (a rule of one finding prints it on its head line,
    without the rule's title, and the two take two lines), a fix one (a longer one its
    command or first sentence or clause); what is cut ends in " …" and is added to
    ``trimmed`` (a fix as ``fix:`` and the fix; --verbose prints them whole)."""
    shown = set() if shown is None else shown
    head = Text(g.rule_id, style="bold")
    head.append("  ")
    head.append(g.severity.value, style=SEV_STYLE[g.severity])
    fold = room is not None and g.count == 1
    if not fold:
        head.append("  " + clean_line(g.title))
    if g.count > 1:
        head.append(f"  ×{g.count}", style="bold")
    out: list[RenderableType] = [] if fold else [Padding(head, (0, 0, 0, indent))]
    pad = (0, 0, 0, indent + 2)
    places = (0, 0, 0, indent + 4)
    left = limit if limit is not None else -1  # lines still to print (-1: no limit)
    cut_messages = cut_places = 0
    for x in g.fixes:
        said = True  # whether every message printed says the fix
        if left == 0:
            cut_messages += len(x.messages)
            continue
        for m in x.messages:
            if left == 0:
                cut_messages += 1
                continue
            folders = m.by_folder()
            if left > 0:  # the message's line, then as many of its places as fit
                keep = max(1, left - 1)
                cut_places += max(0, len(folders) - keep)
                folders = folders[:keep]
                left = max(0, left - 1 - len(folders))
            line = head.append("  ") if fold else Text()
            if len(folders) == 1 and len(m.places) == 1:  # one file: it leads the line
                line.append(clean_line(folders[0]) + "  ", style="cyan")
                folders = []
            if m.message in shown:
                line.append("(message as above)", style="dim")
            else:
                shown.add(m.message)
                text = m.message
                if room is not None:  # folded: the head line and the message in two lines
                    width, lines = room - (0 if fold else 2), 2 if fold else 1
                    text = fit(line.plain, text, width, lines)
                    if text != m.message and x.fix in m.message:  # cut: the fix on its line
                        text = fit(line.plain, m.message.replace(x.fix, ""), width, lines)
                        text = text.rstrip(" :;,")
                    if text != m.message and trimmed is not None:
                        trimmed.add(m.message)
                said = said and x.fix in text
                line.append(clean(text))
            out.append(Padding(line, (0, 0, 0, indent) if fold else pad))
            for item in folders:  # places: indented under their message
                out.append(Padding(Text(clean_line(item), style="cyan"), places))
        if said and all(x.fix in m.message for m in x.messages):
            continue  # the message already says it
        fix = Text("fix: ", style="bold")
        if x.fix in shown:
            fix.append("as above", style="dim")
        else:
            shown.add(x.fix)
            text = x.fix if room is None else cut_fix(x.fix, room - 2 - len("fix: "))
            if text != x.fix and trimmed is not None:
                trimmed.add("fix: " + x.fix)
            fix.append(clean(text))
        out.append(Padding(fix, pad))
    if cut_messages or cut_places:
        what = [
            f"{n} more {word}{'s' if n > 1 else ''}"
            for n, word in ((cut_messages, "message"), (cut_places, "place"))
            if n
        ]
        more = Text(
            f"… {' and '.join(what)} of {g.rule_id} not printed: --verbose prints them, "
            "--format json or sarif lists every finding",
            style="dim",
        )
        out.append(Padding(more, pad))
    return out


def fit(prefix: str, message: str, width: int, lines: int) -> str:
    """``message`` cut (:func:`trim`) so that ``prefix`` and it wrap to at most ``lines``
    lines of ``width`` columns, as a terminal wraps words; the whole when it fits, else the
    longest cut that does (its lead is never cut: :func:`trim`)."""

    def taken(text: str) -> int:
        return len(textwrap.wrap(prefix + text, max(width, 8), break_on_hyphens=False))

    if taken(message) <= lines:
        return message
    room = len(message)
    while room > 24:
        room -= max(4, room // 10)
        text = trim(message, room)
        if taken(text) <= lines:
            return text
    return trim(message, 24)


def trim(message: str, room: int) -> str:
    """``message`` in about ``room`` characters: cut after the last sentence that fits, else
    clause ("; ", " ("), else at a space, and marked " …"; its lead (what it is about,
    :func:`message_lead`) is never cut."""
    if len(message) <= room:
        return message
    head = message[: room - 2]
    cut = head.rfind(" ")
    for end in (head.rfind(". ") + 1, head.rfind("; "), head.rfind(" (")):  # best first
        if end >= room // 2:
            cut = end
            break
    lead = message_lead(message)
    if lead != message and cut < len(lead) + 30:  # the lead whole, no stub of what follows
        cut = len(lead)
    return message[: cut if cut > 0 else room - 2].rstrip() + " …"


def cut_fix(fix: str, room: int) -> str:
    """A fix in about ``room`` characters, what to do first: a fix that ends in a command
    (``... Command: pip install ...``) longer than ``room`` is its command; else it is cut
    after the last sentence or clause (". ", "; ", ", ") that fits, else at a space, and
    marked " …" (--verbose prints it whole)."""
    if len(fix) <= room:
        return fix
    _, sep, command = fix.rpartition("Command: ")
    if sep and command.strip():
        return command.strip() + " …"
    head = fix[: room - 2]
    cut = head.rfind(" ")
    for end in (head.rfind(". ") + 1, head.rfind("; "), head.rfind(", ")):  # best first
        if end >= room // 3:
            cut = end
            break
    return fix[: cut if cut > 0 else room - 2].rstrip() + " …"


#: A finding the verdict does not judge prints as part of one line per rule and scope: up to
#: this many messages, each with up to this many places (the rest counted; --verbose: all)
BRIEF_MESSAGES = 4
BRIEF_PLACES = 3
#: Lines of findings not judged that get a heading (fewer: each line says it)
BRIEF_HEADING = 3


def short_lead(message: str, limit: int = 48) -> str:
    """What a message is about in a few words: its lead (:func:`message_lead`) up to its
    first clause (``vllm`` of ``vllm: ...``, "`vllm` comes from vllm" of "`vllm` comes from
    vllm, which needs ..."), cut at ``limit`` characters with an ellipsis."""
    lead = clean_line(message_lead(message))
    for sep in (", ", "; ", " ("):
        head = lead.split(sep, 1)[0]
        if len(head) >= 8:
            lead = head
    return lead if len(lead) <= limit else lead[: limit - 1] + "…"


def brief_line(g: RuleGroup, width: int | None = None, tag: str = "") -> Padding:
    """One rule's findings the verdict does not judge, as one line: ``GP202 minor ×3 test
    tests/a.py:1, tests/b.py:4  `vllm` comes from vllm`` (the scope after the rule when they
    share one, else after each place; ``tag`` after the scope): its places first, whole, then
    what it is about, cut to what is left of ``width`` (``None``: whole); what it leaves out
    it counts (``+3 more``), and --verbose prints them whole."""
    scopes = {f.scope for f in g.findings}
    line = Text(g.rule_id, style="bold")
    line.append(" ")
    line.append(g.severity.value, style=SEV_STYLE[g.severity])
    if g.count > 1:
        line.append(f" ×{g.count}", style="bold")
    if len(scopes) == 1:
        line.append(f" {next(iter(scopes))}{tag}", style="dim")
    elif tag:
        line.append(tag, style="dim")
    messages = [m for x in g.fixes for m in x.messages]
    items = []
    for m in messages[:BRIEF_MESSAGES]:
        places = [
            clean_line(p.display() + p.marks)
            + (f" ({p.findings[0].scope})" if len(scopes) > 1 else "")
            for p in m.places[:BRIEF_PLACES]
        ]
        if len(m.places) > BRIEF_PLACES:
            places.append(f"+{len(m.places) - BRIEF_PLACES} more")
        items.append((", ".join(places), short_lead(m.message)))
    more = f"; +{len(messages) - BRIEF_MESSAGES} more messages"
    more = more if len(messages) > BRIEF_MESSAGES else ""
    if width is None or len(items) > 1:
        text = "; ".join(f"{lead}: {places}" for places, lead in items)
    else:  # one message: its places, then its lead in what is left of the line
        where, lead = items[0]
        room = width - 2 - line.cell_len - len(where) - len(more) - 4
        if room < 12:  # the places wrap anyway: what it is about first, in a few words
            text = f"{short_lead(lead, 24)}: {where}"
        else:
            text = where + "  " + (lead if room >= len(lead) else lead[: room - 1] + "…")
    line.append("  " + text + more)
    return Padding(line, (0, 0, 0, 2))


def _whole(
    console: Console,
    heading: Text,
    findings: list[Finding],
    order: list[str],
    shown: set[str],
    verbose: bool,
    trimmed: set[str],
) -> None:
    """A heading, then the findings grouped by rule and fix, one block each; a message takes
    one line (a rule of one finding: two with its place and rule) unless it says its fix, a
    fix one (a longer one its command or first sentence or clause); ``verbose``: all
    whole."""
    console.print(heading)
    room = None if verbose else console.width - 2
    for g in group(findings, order):
        limit = None if verbose else LINES_PER_RULE
        for part in group_lines(g, shown=shown, limit=limit, room=room, trimmed=trimmed):
            console.print(part)


def _findings(
    console: Console,
    report: ScanReport,
    order: list[str],
    shown: set[str],
    verbose: bool,
    trimmed: set[str],
) -> bool:
    """The findings: the judged scope's whole under its counts; every other scope's blockers
    whole, one heading per scope; the rest of the other scopes one line per rule and scope
    (``verbose``: whole, and info findings too). Returns whether details were left out."""
    visible = [f for f in report.findings if verbose or f.severity is not Severity.INFO]
    mine_all = judged(report.findings, report.scope)
    mine = {id(f) for f in mine_all}
    if report.scope == "all":  # every scope judged: one heading each, core first
        for scope, items in by_scope(report.findings):
            heading = _judged_heading(scope, items)
            items = [f for f in items if verbose or f.severity is not Severity.INFO]
            _whole(console, heading, items, order, shown, verbose, trimmed)
    else:
        shown_mine = [f for f in visible if id(f) in mine]
        _whole(
            console, _judged_heading("core", mine_all), shown_mine, order, shown, verbose, trimmed
        )
    others = [f for f in visible if id(f) not in mine]
    brief: list[Finding] = []
    for scope, items in by_scope(others):
        blockers = [f for f in items if f.severity is Severity.BLOCKER]
        rest = [f for f in items if f.severity is not Severity.BLOCKER]
        if blockers:
            heading = Text(
                f"Blockers in {scope} code ({len(blockers)}, not judged)", style="bold underline"
            )
            _whole(console, heading, blockers, order, shown, verbose, trimmed)
        if rest and verbose:
            heading = Text(
                f"Other findings in {scope} code ({counts_text(rest)}, not judged)",
                style="bold underline",
            )
            _whole(console, heading, rest, order, shown, verbose, trimmed)
        elif rest:
            brief += rest
    if not brief:
        return False
    counts = ", ".join(f"{scope} {len(items)}" for scope, items in by_scope(brief))
    groups = group(brief, order)
    width = None if verbose else console.width
    if len(groups) < BRIEF_HEADING:  # a line or two: each says it is not judged
        for g in groups:
            console.print(brief_line(g, width, ", not judged"))
        return True
    console.print(Text(f"Not judged (--scope all): {counts}", style="bold underline"))
    for g in groups:
        console.print(brief_line(g, width))
    return True


def _per_file(report: ScanReport, console: Console) -> None:
    """Every file with findings, worst first, one line each (--verbose: the blocks above
    already name every place, folder by folder)."""
    per: dict[str, Counter[Severity]] = defaultdict(Counter)
    for f in report.findings:
        per[f.location.path][f.severity] += 1
    if not per:
        return
    ordered = sorted(per.items(), key=lambda kv: (*tuple(-kv[1][s] for s in Severity), kv[0]))
    console.print(Text("Findings per file", style="bold underline"))
    for path, counts in ordered:
        line = Text(clean_line(path) + "  ")
        line.append(", ".join(f"{counts[s]} {s.value}" for s in Severity if counts[s]), style="dim")
        console.print(Padding(line, (0, 0, 0, 2)))


def _effort(report: ScanReport, console: Console) -> None:
    """Listed changes, hours per rule: a table on a wide console, else one line each."""
    title = "Listed changes (hours per rule)"
    if console.width < effort_view.TABLE_WIDTH:
        console.print(Text(title, style="bold underline"))
        for item in report.effort.basis:
            line = Text(f"{item.rule_id}  ", style="bold")
            line.append(clean_line(item.title))
            line.append(f": {item.count} × {item.hours_each:g} h = {item.hours:g} h", style="dim")
            console.print(Padding(line, (0, 0, 0, 2)))
        return
    table = Table(title=title, title_justify="left")
    table.add_column("rule", overflow="fold")
    table.add_column("what", overflow="fold")
    table.add_column("count", justify="right", overflow="fold")
    table.add_column("h each", justify="right", overflow="fold")
    table.add_column("hours", justify="right", overflow="fold")
    for item in report.effort.basis:
        table.add_row(
            item.rule_id,
            Text(clean_line(item.title)),
            str(item.count),
            f"{item.hours_each:g}",
            f"{item.hours:g}",
        )
    console.print(table)


def _routes(report: ScanReport, console: Console) -> None:
    console.print(Text("ROCm route (the project's own evidence)", style="bold underline"))
    for r in report.routes:
        line = Text(f"{r.kind}  ", style="green")
        line.append(clean_line(r.path + (f":{r.line}" if r.line else "")))
        line.append("  " + clean(r.detail), style="dim")
        if not r.counts:
            line.append(f"  (not counted: {clean_line(r.why)})", style="yellow")
        console.print(Padding(line, (0, 0, 0, 2)))


def _notes(report: ScanReport, console: Console) -> None:
    """Why some code's findings are info: NVIDIA-only components, parts the ROCm build leaves
    out."""
    nv = [c for c in report.components if c.nvidia_only]
    if nv and report.routes:
        console.print(
            "NVIDIA-only components (replace or drop on ROCm; their findings are info): "
            + ", ".join(f"{c.path}/ ({c.evidence})" for c in nv),
            highlight=False,
            markup=False,
        )
    parts = report.not_built_parts()
    if parts:
        counted = sum(n for _, n, _ in parts)
        console.print(
            "Not built on ROCm (the route leaves it out; findings there are info): "
            + "; ".join(
                f"{where} ({n} file{'s' if n != 1 else ''}): {ev}" for where, n, ev in parts
            )
            + (
                f" and {len(report.not_built) - counted} more file(s)"
                if len(report.not_built) > counted
                else ""
            ),
            highlight=False,
            markup=False,
        )


def _skipped(report: ScanReport, console: Console, verbose: bool) -> None:
    """The skipped files with their reasons: one line each with ``verbose``, else one wrapped
    line per reason (its files, then why): a file not read is never left out silently."""
    if not report.skipped:
        return
    console.print(Text(f"Skipped files ({len(report.skipped)})", style="bold underline"))
    if verbose:
        for sk in report.skipped:
            line = Text(clean_line(sk.path) + "  ")
            line.append(clean_line(sk.reason), style="dim")
            console.print(Padding(line, (0, 0, 0, 2)))
        return
    by_reason: dict[str, list[str]] = {}
    for sk in report.skipped:
        by_reason.setdefault(sk.reason, []).append(sk.path)
    for reason, paths in by_reason.items():
        line = Text(clean_line(", ".join(paths)) + "  ")
        line.append(clean_line(reason), style="dim")
        console.print(Padding(line, (0, 0, 0, 2)))


def _footer(report: ScanReport, console: Console, left_out: list[str]) -> None:
    """One line: what the default report left out, and the flag that shows it."""
    if not left_out:
        return
    line = "--verbose: " + ", ".join(left_out)
    if len(line) > console.width:  # the same, in fewer words: the footer stays one line
        words = dict(_FOOTER_SHORT)
        line = "--verbose: " + ", ".join(
            next((short for long, short in words.items() if x.endswith(long)), x)
            if not x[0].isdigit() or x.endswith(" info")
            else x.replace(" full ", " ")
            for x in left_out
        )
    if len(line) > console.width:  # cut messages and fixes: one item
        cut = sum(int(x.split(" ", 1)[0]) for x in left_out if _CUT_TEXT.fullmatch(x))
        rest = [x for x in left_out if not _CUT_TEXT.fullmatch(x)]
        words = dict(_FOOTER_SHORT)
        line = "--verbose: " + ", ".join(
            [next((s for long, s in words.items() if x.endswith(long)), x) for x in rest[:1]]
            + [f"{cut} cut"]
            + [next((s for long, s in words.items() if x.endswith(long)), x) for x in rest[1:]]
        )
    console.print(Text(line, style="dim"))


#: A footer item that counts texts the default report cut
_CUT_TEXT = re.compile(r"\d+ full (?:message|fix)(?:es|s)?")


#: The footer's words when they do not fit in one line
_FOOTER_SHORT = (
    ("details outside core", "non-core"),
    ("route evidence", "routes"),
    ("effort basis", "effort"),
)


def render(report: ScanReport, console: Console, *, verbose: bool = False) -> None:
    trimmed: set[str] = set()  # the reason, messages and fixes the default report cut
    _header(report, console, trimmed, verbose=verbose)
    order = [f.rule_id for f in top_blockers(report.findings, RULES, "all")]
    shown: set[str] = set()  # messages and fixes printed once
    briefed = _findings(console, report, order, shown, verbose, trimmed)
    _notes(report, console)
    if verbose:
        if report.routes:
            _routes(report, console)
        _per_file(report, console)
        if report.effort.components:
            caption = "; ".join(x for x in (report.effort.calendar, report.effort.note) if x)
            effort_view.print_components(console, report.effort.components, caption)
        if report.effort.basis:
            _effort(report, console)
    elif report.effort.basis and not report.effort.components:
        _effort(report, console)
    _skipped(report, console, verbose)
    if verbose:
        return
    left_out = []
    hidden = sum(1 for f in report.findings if f.severity is Severity.INFO)
    if hidden:
        left_out.append(f"{hidden} info")
    fixes = sum(1 for x in trimmed if x.startswith("fix: "))
    messages = len(trimmed) - fixes
    if messages:
        left_out.append(f"{messages} full message{'s' if messages != 1 else ''}")
    if fixes:
        left_out.append(f"{fixes} full fix{'es' if fixes != 1 else ''}")
    if short_reason(report.verdict_reason) != report.verdict_reason:
        left_out.append("route evidence")
    if briefed:
        left_out.append("details outside core")
    if report.effort.components:
        left_out.append("effort basis")
    _footer(report, console, left_out)
