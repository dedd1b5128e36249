"""``gpuport rules`` and ``gpuport explain RULE``: the rule registry, for people and tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from gpuport import textre
from gpuport.cli.common import emit
from gpuport.cli.options import FormatOption
from gpuport.models import GpuportError
from gpuport.render.interface import OutputFormat
from gpuport.scan.rules import RULES, Rule, rules_sorted


def rule_dict(rule: Rule) -> dict[str, object]:
    return {
        "id": rule.id,
        "name": rule.name,
        "title": rule.title,
        "severity": rule.severity.value,
        "family": rule.family.value,
        "applies_to": rule.applies_note,
        "effort_hours": rule.effort_hours,
        "status": rule.status,
        "rationale": rule.rationale,
        "fix": rule.fix,
        "references": list(rule.references),
    }


_DUNDER = textre.compile(r"(?<![`\w])(__\w+)")


def _code(text: str) -> str:
    """Put ``__identifiers`` in code spans so Markdown does not read them as bold."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):  # even parts are outside existing code spans
        parts[i] = _DUNDER.sub(r"`\1`", parts[i])
    return "`".join(parts)


def rule_markdown(rule: Rule, *, anchor: bool = True) -> str:
    refs = "\n".join(f"* <{url}>" for url in rule.references)
    head = f'<a id="{rule.id.lower()}"></a>\n\n' if anchor else ""
    return (
        f"{head}### {rule.id} `{rule.name}`: {_code(rule.title)}\n\n"
        f"*Severity:* {rule.severity.value} · *Family:* {rule.family.value} · "
        f"*Applies to:* {rule.applies_note} · *Typical effort:* {rule.effort_hours:g} h · "
        f"*Status:* {rule.status}\n\n"
        f"**Why.** {_code(rule.rationale)}\n\n**Fix.** {_code(rule.fix)}\n\n"
        f"**Evidence.**\n\n{refs}\n"
    )


def rules_markdown() -> str:
    from gpuport.scan.effort.model import SUMMARY

    head = (
        "# Rules\n\n"
        "Generated from the rule registry by `gpuport rules --format markdown`; do not edit by "
        "hand. `gpuport explain GPxxx` prints one rule. Suppress a finding on one line with a "
        "comment `gpuport: ignore[GPxxx]`.\n\n"
        f"{SUMMARY}\n\n"
        "| ID | name | severity | title |\n|---|---|---|---|\n"
    )
    rows = "".join(
        f"| [{r.id}](#{r.id.lower()}) | `{r.name}` | {r.severity.value} | {_code(r.title)} |\n"
        for r in rules_sorted()
    )
    return head + rows + "\n" + "\n".join(rule_markdown(r) for r in rules_sorted())


def rules(
    fmt: FormatOption = OutputFormat.TERMINAL,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file.")
    ] = None,
) -> None:
    """List every rule: ID, severity, title."""
    if fmt is OutputFormat.SARIF:
        raise GpuportError("rules has no SARIF form; use terminal, json or markdown")

    def terminal(console: Console) -> None:
        from gpuport.scan.effort.model import SUMMARY

        table = Table(title=f"{len(RULES)} rules", caption=SUMMARY)
        for col in ("id", "severity", "family", "applies to", "h each", "title"):
            table.add_column(col, overflow="fold")
        for r in rules_sorted():
            table.add_row(
                r.id,
                r.severity.value,
                r.family.value,
                r.applies_note,
                f"{r.effort_hours:g}",
                r.title,
            )
        console.print(table)

    def text() -> str:
        if fmt is OutputFormat.JSON:
            return json.dumps([rule_dict(r) for r in rules_sorted()], indent=2) + "\n"
        return rules_markdown()

    emit(fmt, output, text=text, terminal=terminal)


def explain(
    rule_id: Annotated[str, typer.Argument(help="Rule ID, e.g. GP301, or its name.")],
    fmt: FormatOption = OutputFormat.TERMINAL,
) -> None:
    """Explain one rule: why it matters on ROCm, the fix, and the evidence."""
    if fmt is OutputFormat.SARIF:
        raise GpuportError("explain has no SARIF form; use terminal, json or markdown")
    key = rule_id.strip()
    rule = RULES.get(key.upper()) or next((r for r in RULES.values() if r.name == key), None)
    if rule is None:
        raise GpuportError(f"no rule {rule_id!r}; `gpuport rules` lists them")
    if fmt is OutputFormat.JSON:
        typer.echo(json.dumps(rule_dict(rule), indent=2))
    elif fmt is OutputFormat.TERMINAL:
        from rich.markdown import Markdown

        Console().print(Markdown(rule_markdown(rule, anchor=False)))
    else:
        typer.echo(rule_markdown(rule))


def register(app: typer.Typer) -> None:
    app.command("rules")(rules)
    app.command("explain")(explain)
