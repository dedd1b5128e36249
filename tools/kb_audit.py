"""Audit the knowledge base against the places its facts live (``make kb-audit``).

For every package entry it reads (gpuport/knowledge/upstream.py plans and judges):

* PyPI's JSON API for the distribution, its replacement and what its ``pip install`` names;
* the package index its route names (PyTorch's download.pytorch.org/whl/rocmX.Y, AMD's
  pypi.amd.com and repo.radeon.com), and the newer PyTorch ROCm indexes;
* GitHub: releases of every repository its sources link, and every issue/PR it cites;
* the rocm.docs.amd.com pages it cites (compatibility matrices, install guides): their dates;

and for every GPU entry it recomputes the peaks from clock x units x rate (knowledge/specs.py).
It reports, per entry:

* errors: a ``min_version`` PyPI never published, a route index with no page for the
  package, a stored peak its primary inputs do not give;
* changes upstream since ``checked``: releases, threads, pages and newer indexes, so the
  re-check reads the prose, not only a wheel list; entries older than ``--max-age`` days;
* names PyPI does not have, and PyPI projects that are placeholders (a ~1 KB wheel with no
  module), for a human to judge;
* the lookups that failed. A failed lookup claims nothing: offline, every lookup fails,
  the report says so, and it claims no entry missing from PyPI.

``--record DIR`` saves every answer; ``--replay DIR`` answers from a recording (a lookup not
recorded fails); ``--offline`` makes no request. The tests replay recorded answers.
Exit status: 0 with a report, 1 with --strict when there are errors, 2 on bad input.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import re
import sys
import urllib.error
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from gpuport.knowledge import PackageInfo, load_packages  # noqa: E402
from gpuport.knowledge.gpus import GpuSpec, load_gpus  # noqa: E402
from gpuport.knowledge.specs import disagreements  # noqa: E402
from gpuport.knowledge.upstream import Answer, EntryFindings, Fetch, findings_for  # noqa: E402
from gpuport.models import GpuportError  # noqa: E402

# PyTorch's ROCm indexes a route's index is compared with (newer ones are looked up too)
TORCH_ROCM_INDEXES = ("rocm6.4", "rocm7.0", "rocm7.1", "rocm7.2", "rocm10.0", "rocm10.1")
USER_AGENT = "gpuport-kb-audit (+https://github.com/gpuport)"


# ----------------------------------------------------------------------- fetching


def fetch_url(url: str, timeout: float = 20.0) -> Answer:
    """GET ``url``: ``missing`` on 404/410, ``failed`` on anything else that is not 200."""
    if not url.startswith("https://"):
        return Answer("failed", error="only https URLs are read")
    accept = "application/json" if "/pypi/" in url or "api.github.com" in url else "text/html"
    headers = {"User-Agent": USER_AGENT, "Accept": accept}
    req = urllib.request.Request(url, headers=headers)  # noqa: S310 (https only, above)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 (https URLs)
            body = resp.read(8_000_000)
            return Answer("ok", body.decode("utf-8", errors="replace"))
    except urllib.error.HTTPError as exc:
        if exc.code in (404, 410):
            return Answer("missing", error=f"HTTP {exc.code}")
        return Answer("failed", error=f"HTTP {exc.code}")
    except (TimeoutError, urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return Answer("failed", error=str(reason) or type(exc).__name__)


def _record_name(url: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9]+", "_", url.removeprefix("https://"))[:90].strip("_")
    return f"{stem}-{hashlib.sha256(url.encode()).hexdigest()[:8]}.json"


def replaying(folder: Path) -> Fetch:
    """Answers from a recording; a URL that was not recorded fails (claims nothing)."""

    def fetch(url: str) -> Answer:
        path = folder / _record_name(url)
        if not path.is_file():
            return Answer("failed", error="not in the recording")
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.get("url") != url:
            return Answer("failed", error="recording is for another URL")
        text = doc.get("text", "")
        if not isinstance(text, str):  # a recorded JSON body kept as JSON for review
            text = json.dumps(text)
        return Answer(doc["status"], text, doc.get("error", ""))

    return fetch


def recording(inner: Fetch, folder: Path) -> Fetch:
    folder.mkdir(parents=True, exist_ok=True)

    def fetch(url: str) -> Answer:
        answer = inner(url)
        doc = {"url": url, "status": answer.status, "error": answer.error,
               "recorded": dt.date.today().isoformat(), "text": answer.text}  # fmt: skip
        (folder / _record_name(url)).write_text(json.dumps(doc, indent=1), encoding="utf-8")
        return answer

    return fetch


def offline(url: str) -> Answer:
    return Answer("failed", error="offline")


def once(inner: Fetch) -> Fetch:
    """Each URL asked once per run (many entries share a repository or a replacement)."""
    seen: dict[str, Answer] = {}

    def fetch(url: str) -> Answer:
        if url not in seen:
            seen[url] = inner(url)
        return seen[url]

    return fetch


# ----------------------------------------------------------------------- the audit


@dataclass
class AuditReport:
    today: dt.date
    max_age_days: int
    entries: list[EntryFindings]
    unverified: list[str] = field(default_factory=list)
    old: dict[str, int] = field(default_factory=dict)  # entry -> days since checked
    spec_errors: list[str] = field(default_factory=list)
    lookups: int = 0

    @property
    def failed(self) -> list[str]:
        return sorted({url for e in self.entries for url in e.failed})

    @property
    def errors(self) -> list[EntryFindings]:
        return [e for e in self.entries if e.errors]

    @property
    def changed(self) -> list[EntryFindings]:
        return [e for e in self.entries if e.changes]


def audit(
    packages: Sequence[PackageInfo],
    fetch: Fetch,
    today: dt.date,
    max_age_days: int = 90,
    gpus: Iterable[GpuSpec] = (),
    torch_indexes: Iterable[str] = TORCH_ROCM_INDEXES,
) -> AuditReport:
    asked: set[str] = set()

    def counting(url: str) -> Answer:
        asked.add(url)
        return fetch(url)

    shared = once(counting)
    indexes = tuple(torch_indexes)
    report = AuditReport(today, max_age_days, [findings_for(p, shared, indexes) for p in packages])
    report.lookups = len(asked)
    report.unverified = [p.name for p in packages if not p.verified]
    report.old = {
        p.name: (today - p.checked).days
        for p in packages
        if (today - p.checked).days > max_age_days
    }
    report.spec_errors = [problem for gpu in gpus for problem in disagreements(gpu)]
    return report


def _line(e: EntryFindings, items: list[str]) -> str:
    return f"- `{e.name}` (checked {e.checked}): " + "; ".join(items)


def render_markdown(report: AuditReport) -> str:
    """The dated report that goes into docs/knowledge.md."""
    total = len(report.entries)
    failed = report.failed
    judged = [e for e in report.entries if e.answered]
    lines = [
        f"### kb-audit report, {report.today.isoformat()}",
        "",
        f"{total} package entries, {report.lookups} lookups ({len(failed)} failed), "
        f"stale after {report.max_age_days} days.",
        f"Re-checked on their date, with a `verified` list of what was checked: "
        f"{total - len(report.unverified)} of {total} entries"
        + (": not " + ", ".join(f"`{n}`" for n in report.unverified) if report.unverified else "")
        + ".",
    ]
    if failed and len(failed) == report.lookups:
        lines += ["", "**Every lookup failed (offline?): nothing is claimed about any entry.**"]
    elif len(judged) < total:
        lines += [f"{total - len(judged)} entries had no lookup answer and are not judged."]
    errors = [_line(e, e.errors) for e in report.errors] + [f"- {p}" for p in report.spec_errors]
    lines += ["", f"**Errors** (claims a source contradicts): {len(errors)}", ""]
    lines += errors or ["- none"]
    changed = report.changed
    lines += ["", f"**Changed upstream since `checked`** (re-read these): {len(changed)}", ""]
    for e in changed:
        marks = [f"{c.what}{' [ROCm]' if c.rocm else ''}" for c in e.changes]
        lines.append(_line(e, marks))
    if not changed:
        lines.append("- none" if judged else "- not known: no lookup answered")
    hinted = [e for e in report.entries if e.hints]
    lines += ["", f"**Claims a source puts in doubt** (re-read): {len(hinted)}", ""]
    lines += [_line(e, e.hints) for e in hinted] or ["- none"]
    lines += ["", f"**Checked more than {report.max_age_days} days ago**: {len(report.old)}", ""]
    lines += [f"- `{name}`: {days} days" for name, days in report.old.items()] or ["- none"]
    missing = [e for e in report.entries if e.not_on_pypi]
    lines += ["", f"**Not on PyPI** (PyPI answered 404; other index, conda, image or a name to "
              f"fix): {len(missing)}", ""]  # fmt: skip
    lines += [f"- `{e.name}`: {', '.join(e.not_on_pypi)}" for e in missing] or ["- none"]
    stubs = [e for e in report.entries if e.placeholders]
    lines += ["", f"**Placeholders on PyPI** (the newest release ships no library): "
              f"{len(stubs)}", ""]  # fmt: skip
    lines += [f"- `{e.name}`: {', '.join(e.placeholders)}" for e in stubs] or ["- none"]
    if failed:
        lines += ["", f"**Lookups that failed** ({len(failed)}; nothing was judged from them):", ""]
        lines += [f"- {url}" for url in failed[:40]]
        if len(failed) > 40:
            lines.append(f"- ... and {len(failed) - 40} more")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--knowledge", type=Path, default=None, help="extra knowledge dir")
    parser.add_argument("--today", type=dt.date.fromisoformat, default=dt.date.today())
    parser.add_argument("--max-age", type=int, default=90, help="days before an entry is stale")
    parser.add_argument("--output", type=Path, default=None, help="write the report here")
    parser.add_argument("--strict", action="store_true", help="exit 1 when there are errors")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--replay", type=Path, default=None, help="answer from a recording")
    source.add_argument("--offline", action="store_true", help="make no request")
    parser.add_argument("--record", type=Path, default=None, help="save every answer here")
    parser.add_argument("--only", action="append", default=[], help="audit these entries")
    args = parser.parse_args(argv)
    if args.max_age < 1:
        print("kb_audit: --max-age must be at least 1 day", file=sys.stderr)
        return 2
    if args.replay is not None and not args.replay.is_dir():
        print(f"kb_audit: --replay {args.replay}: not a directory", file=sys.stderr)
        return 2
    try:
        packages = load_packages(args.knowledge).packages
        gpus = list(load_gpus(args.knowledge).values())
    except GpuportError as exc:
        print(f"kb_audit: {exc}", file=sys.stderr)
        return 2
    if args.only:
        packages = [p for p in packages if p.name in set(args.only)]
    fetch: Fetch = replaying(args.replay) if args.replay else offline if args.offline else fetch_url
    if args.record is not None:
        fetch = recording(fetch, args.record)
    report = audit(packages, fetch, args.today, args.max_age, gpus)
    text = render_markdown(report)
    if args.output is not None:
        try:
            args.output.write_text(text, encoding="utf-8")
        except OSError as exc:
            print(f"kb_audit: cannot write {args.output}: {exc.strerror}", file=sys.stderr)
            return 2
    else:
        print(text, end="")
    return 1 if args.strict and (report.errors or report.spec_errors) else 0


if __name__ == "__main__":
    raise SystemExit(main())
