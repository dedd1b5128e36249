"""A rule's findings as terminal blocks: a rule's block of messages, places and fix, each
cut to the room the default report gives it, and the one-line form of findings the verdict
does not judge (issue 29). Names and messages come from the project: they pass through
:func:`clean_line` or :func:`clean`."""

from __future__ import annotations

import textwrap

from rich.console import RenderableType
from rich.padding import Padding
from rich.text import Text

from gpuport.models import Severity
from gpuport.render.finding_groups import RuleGroup
from gpuport.render.text import clean, clean_line

SEV_STYLE = {
    Severity.BLOCKER: "bold red",
    Severity.MAJOR: "yellow",
    Severity.MINOR: "cyan",
    Severity.INFO: "dim",
}


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
