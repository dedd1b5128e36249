"""SARIF 2.1.0 for GitHub code scanning and other SARIF consumers.

One run, one tool component with every rule in the registry, one result per
finding. Levels map blocker/major to ``error``/``warning``; ``security-severity``
is not set because these are portability, not security, findings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from gpuport import __version__
from gpuport.models import Severity
from gpuport.scan.model import ScanReport
from gpuport.scan.rules import rules_sorted

SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
_LEVEL = {
    Severity.BLOCKER: "error",
    Severity.MAJOR: "warning",
    Severity.MINOR: "note",
    Severity.INFO: "note",
}
_RANK = {Severity.BLOCKER: 90.0, Severity.MAJOR: 60.0, Severity.MINOR: 30.0, Severity.INFO: 5.0}


def _base(report: ScanReport) -> tuple[str, str]:
    """(prefix for artifact URIs, file URI of SRCROOT).

    When the scanned folder lies under the current directory (the usual CI case:
    ``gpuport scan src/`` from the checkout), URIs are relative to the current
    directory, which is what code-scanning services resolve against; otherwise
    they are relative to the scanned folder.
    """
    root = Path(report.root).resolve()
    if root.is_file():
        root = root.parent
    cwd = Path.cwd().resolve()
    if root == cwd or cwd in root.parents:
        prefix = root.relative_to(cwd).as_posix()
        return ("" if prefix == "." else prefix + "/"), cwd.as_uri() + "/"
    return "", root.as_uri() + "/"


def _uri(path: str) -> str:
    return quote(path, safe="/")


def render(report: ScanReport) -> str:
    rules = rules_sorted()
    prefix, base_uri = _base(report)
    index = {rule.id: i for i, rule in enumerate(rules)}
    results: list[dict[str, Any]] = []
    for f in report.findings:
        region: dict[str, Any] = {}
        if f.location.line:
            region["startLine"] = f.location.line
            if f.location.column:
                region["startColumn"] = f.location.column
            if f.location.snippet:
                region["snippet"] = {"text": f.location.snippet}
        physical: dict[str, Any] = {
            "artifactLocation": {"uri": _uri(prefix + f.location.path), "uriBaseId": "SRCROOT"}
        }
        if region:
            physical["region"] = region
        results.append(
            {
                "ruleId": f.rule_id,
                "ruleIndex": index[f.rule_id],
                "level": _LEVEL[f.severity],
                "rank": _RANK[f.severity],
                "message": {"text": f"{f.message} Fix: {f.fix}"},
                "locations": [{"physicalLocation": physical}],
                "properties": {
                    "severity": f.severity.value,
                    "guarded": f.guarded,
                    "scope": f.scope,
                    **({"notBuilt": f.not_built} if f.not_built else {}),
                },
            }
        )
    doc = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "gpuport",
                        "semanticVersion": __version__,
                        "rules": [
                            {
                                "id": rule.id,
                                "name": rule.name,
                                "shortDescription": {"text": rule.title},
                                "fullDescription": {"text": rule.rationale},
                                "help": {"text": f"{rule.rationale}\n\nFix: {rule.fix}"},
                                "defaultConfiguration": {"level": _LEVEL[rule.severity]},
                                "properties": {
                                    "tags": ["portability", "rocm", rule.family.value],
                                    "severity": rule.severity.value,
                                    "references": list(rule.references),
                                },
                            }
                            for rule in rules
                        ],
                    }
                },
                "originalUriBaseIds": {
                    "SRCROOT": {"uri": base_uri, "description": {"text": "project root"}}
                },
                "results": results,
                "invocations": [
                    {
                        "executionSuccessful": True,
                        "toolExecutionNotifications": [
                            {
                                "level": "note",
                                "message": {"text": f"skipped {s.path}: {s.reason}"},
                                "locations": [
                                    {
                                        "physicalLocation": {
                                            "artifactLocation": {
                                                "uri": _uri(prefix + s.path),
                                                "uriBaseId": "SRCROOT",
                                            }
                                        }
                                    }
                                ],
                            }
                            for s in report.skipped
                        ],
                    }
                ],
                "properties": {
                    "target": report.target.name,
                    "verdict": report.verdict.value,
                    "effortDays": [report.effort.low_days, report.effort.high_days],
                    "scope": report.scope,
                    "scopeCounts": {
                        scope: {sev.value: n for sev, n in counts.items()}
                        for scope, counts in report.scope_counts.items()
                    },
                    "rocmRoute": [r.model_dump() for r in report.routes],
                    "notBuiltFiles": len(report.not_built),
                    "nvidiaOnlyComponents": [c.path for c in report.components if c.nvidia_only],
                },
            }
        ],
    }
    return json.dumps(doc, indent=2) + "\n"
