"""Audit packages.toml against PyPI: are its version claims and named wheels still true?

Run by a maintainer with network access (``make kb-audit``). For every package entry it
reads PyPI's JSON API (https://pypi.org/pypi/NAME/json) for the distribution, for the
replacement its route names, and for every distribution a ``pip install`` in its route
command names, and reports:

* errors: a ``min_version`` PyPI has never published, or a named replacement/wheel that
  is not on PyPI at all (a route a user cannot follow);
* stale: entries whose ``checked`` date is older than ``--max-age`` days (90), and entries
  whose newest PyPI release was uploaded after the entry was checked (facts may have
  moved: re-read the release notes);
* unverified: entries whose ``verified`` list is empty (carried over from an older
  review, never re-checked field by field).

Names that are not PyPI projects at all (an NVIDIA NIM, a conda-only package) are listed
as "not on PyPI" for a human to judge, not as errors: packages.toml also covers imports
and distributions that come from other indexes.

The core (:func:`audit`) takes a ``fetch`` callable, so the tests feed it recorded
responses and never touch the network. Exit status: 0 with a report, 1 with --strict when
there are errors, 2 on bad input.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import shlex
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from gpuport.knowledge import PackageInfo, load_packages, normalize_name  # noqa: E402
from gpuport.models import GpuportError  # noqa: E402

PYPI_JSON = "https://pypi.org/pypi/{name}/json"
Fetch = Callable[[str], dict[str, Any] | None]


@dataclass(frozen=True)
class Release:
    """What the audit needs of one PyPI project: its versions and when the newest came out."""

    name: str
    versions: frozenset[str]
    latest: str
    latest_uploaded: dt.date | None


@dataclass
class EntryAudit:
    name: str
    checked: dt.date
    verified: list[str]
    latest: str | None = None
    latest_uploaded: dt.date | None = None
    errors: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    not_on_pypi: list[str] = field(default_factory=list)


@dataclass
class AuditReport:
    today: dt.date
    max_age_days: int
    entries: list[EntryAudit]
    lookups: int = 0
    failed_lookups: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[EntryAudit]:
        return [e for e in self.entries if e.errors]

    @property
    def stale(self) -> list[EntryAudit]:
        return [e for e in self.entries if e.stale]

    @property
    def unverified(self) -> list[EntryAudit]:
        return [e for e in self.entries if not e.verified]


def fetch_pypi(name: str, timeout: float = 20.0) -> dict[str, Any] | None:
    """PyPI's JSON document for ``name``; None when PyPI has no such project (404)."""
    url = PYPI_JSON.format(name=normalize_name(name))
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 (fixed https URL)
            data: dict[str, Any] = json.load(resp)
            return data
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise


def parse_release(name: str, doc: dict[str, Any]) -> Release:
    """Versions with at least one non-yanked file, and the newest upload date."""
    releases: dict[str, list[dict[str, Any]]] = doc.get("releases", {})
    versions = {v for v, files in releases.items() if any(not f.get("yanked") for f in files)}
    latest = str(doc.get("info", {}).get("version", ""))
    uploads = [
        f.get("upload_time_iso_8601") or f.get("upload_time") or ""
        for f in releases.get(latest, [])
    ]
    dates = [dt.date.fromisoformat(u[:10]) for u in uploads if u]
    return Release(name, frozenset(versions), latest, max(dates) if dates else None)


_PIP_INSTALL = re.compile(r"pip3?\s+install\s+([^&;|]+)")
_REQ_NAME = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)")
_OPTS_WITH_VALUE = {"--index-url", "-i", "--extra-index-url", "-f", "--find-links", "-c", "-r"}


def named_wheels(pkg: PackageInfo) -> list[str]:
    """Distributions the entry tells users to install: its replacement and pip install args."""
    names: list[str] = []
    if pkg.route.replacement and _REQ_NAME.fullmatch(pkg.route.replacement):
        names.append(pkg.route.replacement)
    for command in filter(None, [pkg.route.command]):
        for match in _PIP_INSTALL.finditer(command):
            try:
                words = shlex.split(match.group(1))
            except ValueError:
                continue
            skip = False
            for word in words:
                if skip:
                    skip = False
                    continue
                if word in _OPTS_WITH_VALUE:
                    skip = True
                    continue
                if word.startswith(("-", ".", "/", "git+", "http")) or "://" in word:
                    continue
                hit = _REQ_NAME.match(word)
                if hit and not hit.group(1).endswith((".whl", ".txt")):
                    names.append(hit.group(1).rstrip("."))
    seen: dict[str, str] = {}
    for name in names:
        seen.setdefault(normalize_name(name), name)
    return list(seen.values())


def audit(
    packages: list[PackageInfo], fetch: Fetch, today: dt.date, max_age_days: int = 90
) -> AuditReport:
    """Check every entry's version claims and named wheels; collect staleness."""
    cache: dict[str, Release | None] = {}
    report = AuditReport(today=today, max_age_days=max_age_days, entries=[])

    def lookup(name: str) -> Release | None:
        key = normalize_name(name)
        if key not in cache:
            report.lookups += 1
            try:
                doc = fetch(key)
            except (OSError, ValueError) as exc:
                report.failed_lookups.append(f"{key}: {exc}")
                doc = None
                cache[key] = None
                return None
            cache[key] = parse_release(key, doc) if doc is not None else None
        return cache[key]

    for pkg in packages:
        entry = EntryAudit(pkg.name, pkg.checked, list(pkg.verified))
        own = lookup(pkg.name)
        if own is None:
            entry.not_on_pypi.append(pkg.name)
        else:
            entry.latest, entry.latest_uploaded = own.latest, own.latest_uploaded
            if pkg.min_version and not _published(pkg.min_version, own.versions):
                entry.errors.append(f"min_version {pkg.min_version} is not a release on PyPI")
            if own.latest_uploaded and own.latest_uploaded > pkg.checked:
                entry.stale.append(
                    f"newest release {own.latest} ({own.latest_uploaded}) postdates the check"
                )
        for wheel in named_wheels(pkg):
            if normalize_name(wheel) == normalize_name(pkg.name):
                continue
            if lookup(wheel) is None:
                entry.not_on_pypi.append(wheel)
        age = (today - pkg.checked).days
        if age > max_age_days:
            entry.stale.append(f"checked {age} days ago")
        report.entries.append(entry)
    return report


def _published(claim: str, versions: frozenset[str]) -> bool:
    """True if ``claim`` names a release PyPI has (1.0 == 1.0.0 per PEP 440)."""
    try:
        want = Version(claim)
    except InvalidVersion:
        return claim in versions
    for v in versions:
        try:
            if Version(v) == want:
                return True
        except InvalidVersion:
            continue
    return False


def render_markdown(report: AuditReport) -> str:
    """The dated report that goes into docs/knowledge.md."""
    total = len(report.entries)
    lines = [
        f"### kb-audit report, {report.today.isoformat()}",
        "",
        f"{total} package entries, {report.lookups} PyPI lookups "
        f"({len(report.failed_lookups)} failed), stale after {report.max_age_days} days.",
        f"Re-checked on their date, with a `verified` list of what was checked: "
        f"{total - len(report.unverified)} of {total} entries; "
        f"{len(report.unverified)} carry an older review date and no `verified` list"
        + (": " + ", ".join(f"`{e.name}`" for e in report.unverified) if report.unverified else "")
        + ".",
        "",
        f"**Errors** (a version or wheel the entry names that PyPI does not have): "
        f"{len(report.errors)}",
        "",
    ]
    lines += [f"- `{e.name}`: {'; '.join(e.errors)}" for e in report.errors] or ["- none"]
    lines += ["", f"**Stale** (re-check these): {len(report.stale)}", ""]
    lines += [f"- `{e.name}` (checked {e.checked}): {'; '.join(e.stale)}" for e in report.stale]
    if not report.stale:
        lines.append("- none")
    missing = [e for e in report.entries if e.not_on_pypi]
    lines += ["", f"**Not on PyPI** (other index, conda, image or a name to fix): {len(missing)}"]
    lines += [""] + [f"- `{e.name}`: {', '.join(e.not_on_pypi)}" for e in missing]
    if report.failed_lookups:
        lines += ["", "**Lookups that failed** (network; nothing was judged for them):", ""]
        lines += [f"- {f}" for f in report.failed_lookups]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--knowledge", type=Path, default=None, help="extra knowledge dir")
    parser.add_argument("--today", type=dt.date.fromisoformat, default=dt.date.today())
    parser.add_argument("--max-age", type=int, default=90, help="days before an entry is stale")
    parser.add_argument("--output", type=Path, default=None, help="write the report here")
    parser.add_argument("--strict", action="store_true", help="exit 1 when there are errors")
    args = parser.parse_args(argv)
    if args.max_age < 1:
        print("kb_audit: --max-age must be at least 1 day", file=sys.stderr)
        return 2
    try:
        db = load_packages(args.knowledge)
    except GpuportError as exc:
        print(f"kb_audit: {exc}", file=sys.stderr)
        return 2
    report = audit(db.packages, fetch_pypi, args.today, args.max_age)
    text = render_markdown(report)
    if args.output is not None:
        try:
            args.output.write_text(text, encoding="utf-8")
        except OSError as exc:
            print(f"kb_audit: cannot write {args.output}: {exc.strerror}", file=sys.stderr)
            return 2
    else:
        print(text, end="")
    return 1 if args.strict and report.errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
