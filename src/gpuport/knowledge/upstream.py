"""Where a package entry's facts live, and what each of those places says now.

``tools/kb_audit.py`` (``make kb-audit``) asks, for every entry of packages.toml:

* PyPI's JSON API for the distribution, its replacement and what its ``pip install`` names:
  the releases, their upload dates and files (a project whose newest release is a ~1 KB
  pure-Python wheel with no module is a name reservation, not the library);
* the package index its route names (a PEP 503 "simple" page: the PyTorch indexes at
  download.pytorch.org/whl/rocmX.Y, AMD's pypi.amd.com and repo.radeon.com), and for a
  PyTorch ROCm index the same package on the ROCm indexes newer than the route's;
* GitHub, for every repository its sources link: the releases published since the entry's
  ``checked`` date (with whether their notes mention ROCm), and the state of every issue
  and pull request it cites;
* AMD's documentation pages it cites (rocm.docs.amd.com, the compatibility matrices),
  whose pages carry the date they were last updated.

Every lookup answers ``ok``, ``missing`` (the server said there is no such thing: PyPI's
404) or ``failed`` (no answer: offline, refused, timed out, unreadable). Only ``ok`` and
``missing`` support a finding; a failed lookup claims nothing, so an offline run reports
its failures and no entry as "not on PyPI". This module is pure: it plans the lookups
and judges the answers; fetching (with recording and replay) is the tool's.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any, Literal

from packaging.utils import parse_wheel_filename
from packaging.version import InvalidVersion, Version

from gpuport import textre
from gpuport.knowledge import normalize_name

if TYPE_CHECKING:
    from gpuport.knowledge.schema import PackageInfo

AnswerStatus = Literal["ok", "missing", "failed"]
PYPI_JSON = "https://pypi.org/pypi/{name}/json"
GITHUB_API = "https://api.github.com/repos/{repo}"
ROCM_WORDS = textre.compile(r"\b(rocm|hip|amd|radeon|instinct|gfx\d{3,4}\w*|mi[23]\d\dx?)\b", re.I)
PLACEHOLDER_BYTES = 5_000  # a release whose every file is smaller ships no library

__all__ = [
    "Answer",
    "Change",
    "EntryFindings",
    "Fetch",
    "findings_for",
    "named_wheels",
    "newer_torch_indexes",
    "plan",
]


@dataclass(frozen=True)
class Answer:
    """What one lookup returned: the body when ``ok``, why not otherwise."""

    status: AnswerStatus
    text: str = ""
    error: str = ""

    def json(self) -> Any:
        return json.loads(self.text)


Fetch = Callable[[str], Answer]


@dataclass(frozen=True)
class Change:
    """One thing upstream that moved after the entry's ``checked`` date."""

    source: str  # the URL it was read from
    what: str
    rocm: bool = False  # the change's own text mentions ROCm / AMD


@dataclass
class EntryFindings:
    """Everything the lookups say about one entry."""

    name: str
    checked: dt.date
    latest: str | None = None
    latest_uploaded: dt.date | None = None
    errors: list[str] = field(default_factory=list)
    not_on_pypi: list[str] = field(default_factory=list)
    placeholders: list[str] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)  # a claim a source puts in doubt
    changes: list[Change] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # URLs that did not answer
    asked: int = 0  # lookups made for this entry

    @property
    def answered(self) -> bool:
        """Whether any lookup answered: an entry with none is not judged at all."""
        return self.asked > len(self.failed)


# ----------------------------------------------------------------------- planning


_PIP_INSTALL = textre.compile(r"pip3?\s+install\s+([^&;|]+)")
_REQ_NAME = textre.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)")
_OPTS_WITH_VALUE = {"--index-url", "-i", "--extra-index-url", "-f", "--find-links", "-c", "-r"}
_GITHUB = textre.compile(r"^https://github\.com/([\w.-]+)/([\w.-]+)(?:/(issues|pull)/(\d+))?")
_TORCH_INDEX = textre.compile(
    r"^(https://download\.pytorch\.org/whl/(?:nightly/)?)rocm(\d+)\.(\d+)"
)
_SIMPLE_HOSTS = ("download.pytorch.org/whl/", "pypi.amd.com/", "repo.radeon.com/")


def named_wheels(pkg: PackageInfo) -> list[str]:
    """Distributions the entry tells users to install: its replacement and pip install args."""
    names: list[str] = []
    if pkg.route.replacement and _REQ_NAME.fullmatch(pkg.route.replacement):
        names.append(pkg.route.replacement)
    for match in _PIP_INSTALL.finditer(pkg.route.command or ""):
        names.extend(_pip_names(match.group(1)))
    seen: dict[str, str] = {}
    for name in names:
        seen.setdefault(normalize_name(name), name)
    return list(seen.values())


def route_indexes(pkg: PackageInfo) -> list[tuple[str, list[str]]]:
    """The package indexes the route tells users to install from, each with what it should
    serve: ``index_url`` with the entry itself, and every ``--index-url`` /
    ``--extra-index-url`` / ``-i`` of a ``pip install`` in its command with that command's
    distributions (AMD's pypi.amd.com and repo.radeon.com indexes are named this way); an
    ``index_url`` no command names serves the route's replacement, or the entry itself."""
    out: dict[str, list[str]] = {}
    for match in _PIP_INSTALL.finditer(pkg.route.command or ""):
        words = [w.strip("'\"") for w in match.group(1).split()]
        dists = _pip_names(match.group(1))
        for i, word in enumerate(words):
            opt, eq, value = word.partition("=")
            if opt not in ("--index-url", "--extra-index-url", "-i"):
                continue
            if not eq:
                value = words[i + 1] if i + 1 < len(words) else ""
            if value.startswith("https://"):
                have = out.setdefault(value.rstrip("/"), [])
                have += [d for d in dists if d not in have]
    if pkg.route.index_url and pkg.route.index_url.strip().rstrip("/") not in out:
        # an index no command names serves the replacement, or the entry itself
        out[pkg.route.index_url.strip().rstrip("/")] = [pkg.route.replacement or pkg.name]
    return list(out.items())


def _pip_names(args: str) -> list[str]:
    out: list[str] = []
    skip = False
    for word in args.split():
        word = word.strip("'\"")
        if word.startswith(("(", "#")):  # prose after the command: "(X.Y = your ROCm)"
            break
        if skip:
            skip = False
        elif word in _OPTS_WITH_VALUE:
            skip = True
        elif word.startswith(("-", ".", "/", "git+", "http")) or "://" in word:
            continue
        elif (hit := _REQ_NAME.match(word)) and not hit.group(1).endswith((".whl", ".txt")):
            out.append(hit.group(1).rstrip("."))
    return out


def simple_index_url(index_url: str, name: str) -> str | None:
    """The PEP 503 page for ``name`` on ``index_url``, if the index is one gpuport reads."""
    base = index_url.strip().rstrip("/")
    if not base.startswith("https://") or not any(h in base for h in _SIMPLE_HOSTS):
        return None
    return f"{base}/{normalize_name(name)}/"


def newer_torch_indexes(index_url: str, known: Iterable[str]) -> list[str]:
    """The PyTorch ROCm indexes in ``known`` (``rocm7.1`` ...) newer than ``index_url``'s."""
    hit = _TORCH_INDEX.match(index_url.strip())
    if hit is None:
        return []
    prefix, have = hit.group(1), (int(hit.group(2)), int(hit.group(3)))
    out: list[str] = []
    for variant in known:
        m = textre.fullmatch(r"rocm(\d+)\.(\d+)", variant)
        if m and (int(m.group(1)), int(m.group(2))) > have:
            out.append(f"{prefix}{variant}")
    return out


def plan(pkg: PackageInfo, torch_indexes: Iterable[str] = ()) -> list[str]:
    """Every URL whose answer bears on ``pkg``, in a fixed order, each once."""
    urls = [PYPI_JSON.format(name=normalize_name(pkg.name))]
    urls += [PYPI_JSON.format(name=normalize_name(n)) for n in named_wheels(pkg)]
    for index, dists in route_indexes(pkg):
        urls += [p for d in dists if (p := simple_index_url(index, d))]
    for index, dists in route_indexes(pkg):
        for newer in newer_torch_indexes(index, torch_indexes):
            urls += [p for d in dists if (p := simple_index_url(newer, d))]
    for source in pkg.sources:
        gh = _GITHUB.match(source)
        if gh:
            repo = f"{gh.group(1)}/{gh.group(2).removesuffix('.git')}"
            urls.append(GITHUB_API.format(repo=repo) + "/releases?per_page=30")
            if gh.group(4):
                urls.append(GITHUB_API.format(repo=repo) + f"/issues/{gh.group(4)}")
        elif source.startswith("https://rocm.docs.amd.com/"):
            urls.append(source)
    return list(dict.fromkeys(urls))


# ----------------------------------------------------------------------- reading answers


@dataclass(frozen=True)
class Release:
    """What the audit needs of one PyPI project."""

    versions: frozenset[str]
    latest: str
    latest_uploaded: dt.date | None
    uploaded: dict[str, dt.date]  # version -> first upload
    placeholder: bool
    binary: bool  # the newest release ships a platform wheel (compiled code)


def parse_pypi(doc: dict[str, Any]) -> Release:
    """Versions with a non-yanked file, upload dates, and whether the newest is a stub."""
    releases: dict[str, list[dict[str, Any]]] = doc.get("releases", {})
    versions = {v for v, files in releases.items() if any(not f.get("yanked") for f in files)}
    uploaded: dict[str, dt.date] = {}
    for version, files in releases.items():
        dates = [_date(f.get("upload_time_iso_8601") or f.get("upload_time")) for f in files]
        known = [d for d in dates if d is not None]
        if known:
            uploaded[version] = min(known)
    latest = str(doc.get("info", {}).get("version", ""))
    newest_files = releases.get(latest, [])
    dates = [_date(f.get("upload_time_iso_8601") or f.get("upload_time")) for f in newest_files]
    stamps = [d for d in dates if d is not None]
    sizes = [f.get("size") for f in newest_files]
    placeholder = bool(newest_files) and all(
        isinstance(s, int) and s < PLACEHOLDER_BYTES for s in sizes
    )
    binary = any(
        str(f.get("filename", "")).endswith(".whl")
        and not str(f.get("filename", "")).endswith("-any.whl")
        for f in newest_files
    )
    latest_day = max(stamps) if stamps else None
    return Release(frozenset(versions), latest, latest_day, uploaded, placeholder, binary)


def _date(text: Any) -> dt.date | None:
    if not isinstance(text, str) or len(text) < 10:
        return None
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        return None


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            href = dict(attrs).get("href") or ""
            self.names.append(href.split("#", 1)[0].rsplit("/", 1)[-1])

    def handle_data(self, data: str) -> None:
        if self.names and data.strip() and not self.names[-1]:
            self.names[-1] = data.strip()


def index_versions(html: str, name: str) -> list[str]:
    """The versions of ``name`` a PEP 503 page lists wheels for (local labels kept)."""
    parser = _Links()
    parser.feed(html)
    want = normalize_name(name)
    found: set[str] = set()
    for filename in parser.names:
        if not filename.endswith(".whl"):
            continue
        try:
            dist, version, _, _ = parse_wheel_filename(filename.replace("%2B", "+"))
        except ValueError:
            continue
        if normalize_name(str(dist)) == want:
            found.add(str(version))
    return sorted(found, key=_sort_key)


def _sort_key(version: str) -> tuple[int, Version | str]:
    try:
        return (1, Version(version))
    except InvalidVersion:
        return (0, version)


_SCRIPT = textre.compile(r"<script\b.*?</script>", re.S | re.I)
_STYLE = textre.compile(r"<style\b.*?</style>", re.S | re.I)
_TAG = textre.compile(r"<[^>]+>")
_PAGE_DATE = textre.compile(r"\b(20\d\d-[01]\d-[0-3]\d)\b")


def page_date(html: str) -> dt.date | None:
    """The last-updated date a ROCm documentation page shows under its title (the first
    ISO date in the page's text)."""
    text = _SCRIPT.sub(" ", html)
    text = _STYLE.sub(" ", text)
    text = _TAG.sub(" ", text)
    hit = _PAGE_DATE.search(text)
    return _date(hit.group(1)) if hit else None


# ----------------------------------------------------------------------- judging


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


def findings_for(
    pkg: PackageInfo, fetch: Fetch, torch_indexes: Iterable[str] = ()
) -> EntryFindings:
    """Look ``pkg``'s sources up and say what they support; failed lookups claim nothing."""
    out = EntryFindings(pkg.name, pkg.checked)
    own = normalize_name(pkg.name)
    for url in plan(pkg, torch_indexes):
        out.asked += 1
        answer = fetch(url)
        if answer.status == "failed":
            out.failed.append(url)
            continue
        try:
            _judge(pkg, own, url, answer, out)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            out.failed.append(url)  # an answer gpuport cannot read supports nothing
            out.changes.append(Change(url, f"answer not readable ({type(exc).__name__})"))
    return out


def _judge(pkg: PackageInfo, own: str, url: str, answer: Answer, out: EntryFindings) -> None:
    if url.startswith("https://pypi.org/pypi/"):
        _judge_pypi(pkg, own, url, answer, out)
    elif url.startswith("https://api.github.com/"):
        _judge_github(pkg, url, answer, out)
    elif url.startswith("https://rocm.docs.amd.com/"):
        if answer.status == "ok":
            when = page_date(answer.text)
            if when is not None and when > pkg.checked:
                out.changes.append(Change(url, f"page updated {when}", rocm=True))
    else:
        _judge_index(pkg, url, answer, out)


# "the PyPI wheels are CPU/CUDA builds", "PyPI's faiss-gpu (...) wheels are CUDA builds": the
# entry already says what PyPI's binary wheels are, so they do not put a build route in doubt.
_PYPI_NOT_ROCM = textre.compile(r"PyPI.{0,200}?\b(?:CPU/CUDA|CUDA|CPU)[- ](?:builds?|built|only)\b")


def _says_pypi_is_not_rocm(pkg: PackageInfo) -> bool:
    text = " ".join([pkg.summary, pkg.route.how, *pkg.caveats.values()])
    return _PYPI_NOT_ROCM.search(text) is not None


def _judge_pypi(pkg: PackageInfo, own: str, url: str, answer: Answer, out: EntryFindings) -> None:
    name = url.removeprefix("https://pypi.org/pypi/").removesuffix("/json")
    if answer.status == "missing":
        out.not_on_pypi.append(name)
        return
    rel = parse_pypi(answer.json())
    if rel.placeholder:
        out.placeholders.append(f"{name} {rel.latest}")
    if name == own:
        out.latest, out.latest_uploaded = rel.latest, rel.latest_uploaded
        if pkg.min_version and not _published(pkg.min_version, rel.versions):
            out.errors.append(f"min_version {pkg.min_version} is not a release on PyPI")
        if (
            pkg.route.kind == "build"
            and rel.binary
            and not rel.placeholder
            and not _says_pypi_is_not_rocm(pkg)
        ):
            out.hints.append(
                f"the route says build from source, but PyPI's {rel.latest} ships binary wheels"
            )
    since = sorted(
        (v for v, day in rel.uploaded.items() if day > pkg.checked and v in rel.versions),
        key=_sort_key,
    )
    if since:
        shown = ", ".join(since[-5:]) + (f" (+{len(since) - 5} more)" if len(since) > 5 else "")
        out.changes.append(Change(url, f"PyPI {name}: released since the check: {shown}"))


def _judge_github(pkg: PackageInfo, url: str, answer: Answer, out: EntryFindings) -> None:
    if answer.status == "missing":
        out.changes.append(Change(url, "GitHub answers 404: the repository or thread is gone"))
        return
    doc = answer.json()
    if "/releases" in url:
        for rel in doc:
            when = _date(rel.get("published_at"))
            if when is None or when <= pkg.checked or rel.get("draft"):
                continue
            body = f"{rel.get('name') or ''}\n{rel.get('body') or ''}"
            tag = rel.get("tag_name", "?")
            out.changes.append(
                Change(url, f"release {tag} ({when})", rocm=bool(ROCM_WORDS.search(body)))
            )
        return
    updated = _date(doc.get("updated_at"))
    state = doc.get("state", "?")
    merged = (doc.get("pull_request") or {}).get("merged_at")
    if merged:
        state = "merged"
    if updated is not None and updated > pkg.checked:
        number = doc.get("number", "?")
        out.changes.append(Change(url, f"#{number} is {state}, updated {updated}"))


def _judge_index(pkg: PackageInfo, url: str, answer: Answer, out: EntryFindings) -> None:
    index, _, dist = url.rstrip("/").rpartition("/")
    routes = {i for i, _ in route_indexes(pkg)}
    if answer.status == "missing":
        if index in routes:
            out.errors.append(f"the route's index {index} has no {dist} project page")
        return
    versions = index_versions(answer.text, dist)
    if not versions:
        if index in routes:
            out.errors.append(f"the route's index {index} lists no {dist} wheels")
        return
    if index not in routes:
        out.changes.append(Change(url, f"newer index {index} has {dist} {versions[-1]}", rocm=True))
