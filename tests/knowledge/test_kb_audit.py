"""tools/kb_audit.py against recorded PyPI responses: never the network."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from gpuport.knowledge import PackageInfo, Route

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures" / "pypi"
TODAY = dt.date(2026, 11, 25)


def _load_tool() -> ModuleType:
    path = REPO / "tools" / "kb_audit.py"
    spec = importlib.util.spec_from_file_location("kb_audit", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("kb_audit", module)
    spec.loader.exec_module(module)
    return module


kb = _load_tool()


def _recorded(name: str) -> dict[str, Any] | None:
    path = FIXTURES / f"{name}.json"
    if not path.is_file():
        return None  # what PyPI answers with a 404
    data: dict[str, Any] = json.loads(path.read_text())
    return data


class Recorder:
    """A fetch that serves the recorded responses and remembers what was asked."""

    def __init__(self, fail: set[str] | None = None) -> None:
        self.asked: list[str] = []
        self.fail = fail or set()

    def __call__(self, name: str) -> dict[str, Any] | None:
        self.asked.append(name)
        if name in self.fail:
            raise OSError("connection reset")
        return _recorded(name)


def _pkg(name: str, checked: dt.date = TODAY, **kw: Any) -> PackageInfo:
    fields: dict[str, Any] = {
        "name": name,
        "status": "works",
        "summary": "s",
        "sources": ["https://example.org"],
        "checked": checked,
    }
    fields.update(kw)
    return PackageInfo.model_validate(fields)


def test_parse_release_reads_versions_and_the_newest_upload() -> None:
    doc = _recorded("cupy-rocm-7-0")
    assert doc is not None
    rel = kb.parse_release("cupy-rocm-7-0", doc)
    assert rel.latest == "14.2.0"
    assert rel.latest_uploaded == dt.date(2026, 8, 20)
    assert {"14.0.0", "14.2.0"} <= rel.versions


def test_fully_yanked_release_does_not_count() -> None:
    doc = {
        "info": {"version": "2.0"},
        "releases": {
            "1.0": [{"upload_time_iso_8601": "2024-01-01T00:00:00Z", "yanked": True}],
            "2.0": [{"upload_time_iso_8601": "2025-01-01T00:00:00Z", "yanked": False}],
        },
    }
    rel = kb.parse_release("x", doc)
    assert rel.versions == frozenset({"2.0"})


def test_named_wheels_come_from_the_route_not_from_urls_or_options() -> None:
    pkg = _pkg(
        "torch",
        route=Route(
            kind="index",
            how="h",
            index_url="https://download.pytorch.org/whl/rocm7.2",
            command="pip install torch torchvision --index-url https://download.pytorch.org/whl/rocm7.2"
            " && pip install -U 'jax==0.4.1' ./local.whl git+https://github.com/x/y",
        ),
    )
    assert kb.named_wheels(pkg) == ["torch", "torchvision", "jax"]


def test_a_claimed_min_version_that_pypi_never_published_is_an_error() -> None:
    packages = [
        _pkg("pyrsmi", min_version="1.0.0"),  # real release: fine
        _pkg("cupy-rocm-7-0", min_version="13.9.0"),  # never published
    ]
    report = kb.audit(packages, Recorder(), TODAY)
    errors = {e.name: e.errors for e in report.errors}
    assert list(errors) == ["cupy-rocm-7-0"]
    assert "13.9.0" in errors["cupy-rocm-7-0"][0]


def test_pep440_equal_versions_are_the_same_release() -> None:
    report = kb.audit([_pkg("pyrsmi", min_version="1.0")], Recorder(), TODAY)
    assert not report.errors


def test_a_replacement_missing_from_pypi_is_listed_not_judged() -> None:
    pkg = _pkg(
        "cupy-rocm-5-0",
        status="partial",
        route=Route(kind="replacement", how="h", replacement="no-such-project"),
    )
    report = kb.audit([pkg], Recorder(), TODAY)
    (entry,) = report.entries
    assert "no-such-project" in entry.not_on_pypi
    assert "cupy-rocm-5-0" in entry.not_on_pypi  # no recording: PyPI answered 404
    assert not entry.errors


def test_a_release_after_the_check_and_an_old_check_are_stale() -> None:
    packages = [
        _pkg("pyrsmi", checked=dt.date(2025, 11, 1)),  # 1.1.0 came out 2025-12-03
        _pkg("cupy-rocm-7-0", checked=dt.date(2026, 9, 1)),  # newest upload 2026-08-20
    ]
    report = kb.audit(packages, Recorder(), TODAY, max_age_days=90)
    stale = {e.name: e.stale for e in report.stale}
    assert any("postdates" in s for s in stale["pyrsmi"])
    assert any("days ago" in s for s in stale["pyrsmi"])  # 389 days
    # 85 days old and nothing released since: not stale.
    assert "cupy-rocm-7-0" not in stale
    assert report.entries[1].latest == "14.2.0"


def test_a_fresh_check_of_an_unchanged_project_is_not_stale() -> None:
    report = kb.audit([_pkg("cupy-rocm-7-0", checked=TODAY)], Recorder(), TODAY)
    assert not report.stale


def test_each_project_is_fetched_once() -> None:
    fetch = Recorder()
    packages = [
        _pkg("pyrsmi"),
        _pkg("amdsmi", route=Route(kind="replacement", how="h", replacement="pyrsmi")),
    ]
    kb.audit(packages, fetch, TODAY)
    assert fetch.asked.count("pyrsmi") == 1


def test_a_failed_lookup_is_reported_and_nothing_is_claimed_for_it() -> None:
    report = kb.audit([_pkg("pyrsmi", min_version="9.9")], Recorder(fail={"pyrsmi"}), TODAY)
    assert report.failed_lookups and "pyrsmi" in report.failed_lookups[0]
    assert not report.errors
    text = kb.render_markdown(report)
    assert "Lookups that failed" in text


def test_entries_without_verified_are_counted_as_not_rechecked() -> None:
    packages = [_pkg("pyrsmi", verified=["wheels"]), _pkg("cupy-rocm-7-0")]
    report = kb.audit(packages, Recorder(), TODAY)
    assert [e.name for e in report.unverified] == ["cupy-rocm-7-0"]
    text = kb.render_markdown(report)
    assert text.startswith("### kb-audit report, 2026-11-25")
    assert "with a `verified` list of what was checked: 1 of 2 entries" in text


def test_main_refuses_a_bad_knowledge_dir_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert kb.main(["--knowledge", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kb_audit: ") and err[-1] == "\n" and err.count("\n") == 1


def test_main_strict_exits_1_on_errors_and_writes_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "packages.toml").write_text(
        '[[package]]\nname = "pyrsmi"\nstatus = "works"\nsummary = "s"\n'
        'min_version = "0.0.1"\nsources = ["https://example.org"]\nchecked = 2026-11-25\n'
    )
    monkeypatch.setattr(kb, "fetch_pypi", Recorder())
    out = tmp_path / "report.md"
    code = kb.main(["--knowledge", str(tmp_path), "--today", "2026-11-25", "--output", str(out),
                    "--strict"])  # fmt: skip
    assert code == 1  # the user's pyrsmi entry claims a 0.0.1 that PyPI never had
    assert "`pyrsmi`: min_version 0.0.1 is not a release on PyPI" in out.read_text()
