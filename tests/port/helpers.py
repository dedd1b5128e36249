"""Small projects written into a temporary folder, and ``port`` run on them."""

from __future__ import annotations

from pathlib import Path

from gpuport.port import PortOptions, PortReport, port_path


def project(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def run(root: Path, **opts: object) -> PortReport:
    return port_path(root, PortOptions(jobs=1, **opts))  # type: ignore[arg-type]


def created(report: PortReport, path: str) -> str:
    """The text ``report`` creates at ``path`` (from its one hunk)."""
    for f in report.files:
        if f.path == path and f.action == "create":
            return "\n".join(line[1:] for line in f.hunks[0].lines if line.startswith("+")) + "\n"
    raise AssertionError(f"{path} not created; files: {[f.path for f in report.files]}")


def fix_ids(report: PortReport, *, applied: bool | None = None) -> list[str]:
    return [f.id for f in report.fixes if applied is None or f.applied == applied]
