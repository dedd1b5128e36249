"""Small projects written into a temporary folder and scanned (issue 24's tests)."""

from __future__ import annotations

from pathlib import Path

from gpuport.scan import ScanOptions, scan_path
from gpuport.scan.model import ScanReport


def write(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (relative path -> text) under ``root``; return ``root``."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def scan_files(root: Path, files: dict[str, str]) -> ScanReport:
    """Write the project and scan it in this process."""
    return scan_path(write(root, files), ScanOptions(jobs=1))
