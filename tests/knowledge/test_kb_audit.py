"""tools/kb_audit.py and knowledge/upstream.py against recorded answers: never the network.

The answers in fixtures/upstream/ are in the tool's --record format; each says what it is:
PyPI answers recorded on the dev VM (trimmed), GitHub answers RECONSTRUCTED from a repository
snapshot or the search tool's issue corpus, an EXCERPT of a ROCm docs page, and SYNTHETIC
PyTorch index pages (download.pytorch.org is not reachable from the dev VM).
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from gpuport.knowledge import PackageInfo, Route
from gpuport.knowledge.gpus import load_gpus
from gpuport.knowledge.upstream import (
    Answer,
    AnswerStatus,
    index_versions,
    named_wheels,
    newer_torch_indexes,
    page_date,
    parse_pypi,
    plan,
    route_indexes,
)

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures" / "upstream"
TODAY = dt.date(2026, 11, 27)


def _load_tool() -> ModuleType:
    path = REPO / "tools" / "kb_audit.py"
    spec = importlib.util.spec_from_file_location("kb_audit", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("kb_audit", module)
    spec.loader.exec_module(module)
    return module


kb = _load_tool()


class Recorded:
    """The recorded answers, remembering what was asked; ``fail`` URLs do not answer."""

    def __init__(self, fail: set[str] | None = None) -> None:
        self.inner = kb.replaying(FIXTURES)
        self.asked: list[str] = []
        self.fail = fail or set()

    def __call__(self, url: str) -> Answer:
        self.asked.append(url)
        if url in self.fail:
            return Answer("failed", error="connection reset")
        answer: Answer = self.inner(url)
        return answer


def _pkg(name: str, checked: dt.date = TODAY, **kw: Any) -> PackageInfo:
    fields: dict[str, Any] = {
        "name": name,
        "status": "works",
        "summary": "s",
        "sources": ["https://example.org"],
        "checked": checked,
        "verified": ["wheels"],
    }
    fields.update(kw)
    return PackageInfo.model_validate(fields)


def _pypi(name: str) -> str:
    return f"https://pypi.org/pypi/{name}/json"


# ----------------------------------------------------------------------- reading answers


def test_parse_pypi_reads_versions_dates_and_placeholders() -> None:
    rel = parse_pypi(kb.replaying(FIXTURES)(_pypi("cupy-rocm-7-0")).json())
    assert rel.latest == "14.2.0" and rel.latest_uploaded == dt.date(2026, 8, 20)
    assert {"14.0.0", "14.2.0"} <= rel.versions and rel.binary and not rel.placeholder
    stub = parse_pypi(kb.replaying(FIXTURES)(_pypi("amd-cupy")).json())
    assert stub.placeholder and not stub.binary  # a 1 KB pure-Python wheel, no library


def test_fully_yanked_release_does_not_count() -> None:
    doc = {
        "info": {"version": "2.0"},
        "releases": {
            "1.0": [{"upload_time_iso_8601": "2024-01-01T00:00:00Z", "yanked": True}],
            "2.0": [{"upload_time_iso_8601": "2025-01-01T00:00:00Z", "yanked": False}],
        },
    }
    assert parse_pypi(doc).versions == frozenset({"2.0"})


def test_index_pages_and_doc_dates() -> None:
    page = kb.replaying(FIXTURES)("https://download.pytorch.org/whl/rocm7.1/xformers/")
    assert index_versions(page.text, "xformers") == ["0.0.34+rocm7.1", "0.0.35+rocm7.1"]
    assert index_versions(page.text, "torch") == []
    doc = kb.replaying(FIXTURES)(
        "https://rocm.docs.amd.com/en/latest/compatibility/ml-compatibility/dgl-compatibility.html"
    )
    assert page_date(doc.text) == dt.date(2026, 1, 8)
    assert page_date("<p>no date here</p>") is None


def test_named_wheels_come_from_the_route_not_from_urls_options_or_prose() -> None:
    pkg = _pkg(
        "torch",
        route=Route(
            kind="index",
            how="h",
            command="pip install torch torchvision --index-url https://download.pytorch.org/whl/"
            "rocm7.2 && pip install -U 'jax==0.4.1' ./local.whl git+https://github.com/x/y"
            " && pip install xformers --index-url https://x.org/rocmX.Y  (X.Y = your ROCm)",
        ),
    )
    assert named_wheels(pkg) == ["torch", "torchvision", "jax", "xformers"]


def test_plan_reads_pypi_indexes_github_and_docs_each_once() -> None:
    pkg = _pkg(
        "xformers",
        route=Route(kind="index", how="h", index_url="https://download.pytorch.org/whl/rocm6.4"),
        sources=[
            "https://github.com/facebookresearch/xformers/issues/1365",
            "https://github.com/facebookresearch/xformers/issues/1311",
            "https://rocm.docs.amd.com/en/latest/compatibility/compatibility-matrix.html",
            "https://pypi.org/project/xformers/",
        ],
    )
    urls = plan(pkg, ["rocm6.4", "rocm7.1"])
    assert urls == [
        _pypi("xformers"),
        "https://download.pytorch.org/whl/rocm6.4/xformers/",
        "https://download.pytorch.org/whl/rocm7.1/xformers/",
        "https://api.github.com/repos/facebookresearch/xformers/releases?per_page=30",
        "https://api.github.com/repos/facebookresearch/xformers/issues/1365",
        "https://api.github.com/repos/facebookresearch/xformers/issues/1311",
        "https://rocm.docs.amd.com/en/latest/compatibility/compatibility-matrix.html",
    ]
    assert newer_torch_indexes(
        "https://download.pytorch.org/whl/rocm7.2", ["rocm7.1", "rocm10.0"]
    ) == ["https://download.pytorch.org/whl/rocm10.0"]
    assert newer_torch_indexes("https://pypi.amd.com/rocm-7.0.2/simple", ["rocm10.0"]) == []


# ----------------------------------------------------------------------- judging


def test_a_failed_lookup_claims_nothing() -> None:
    """The 2026-11-25 audit cached a failed lookup as 'no such project': offline it listed
    all 152 entries as not on PyPI. A failure is listed and supports no finding."""
    route = Route(kind="replacement", how="h", replacement="no-such-project-gpuport")
    pkg = _pkg("pyrsmi", min_version="9.9", route=route)
    down = {_pypi("pyrsmi"), _pypi("no-such-project-gpuport")}
    report = kb.audit([pkg], Recorded(fail=down), TODAY)
    (entry,) = report.entries
    assert not entry.not_on_pypi and not entry.errors and not entry.answered
    assert report.failed == [_pypi("no-such-project-gpuport"), _pypi("pyrsmi")]
    text = kb.render_markdown(report)
    assert "**Not on PyPI** (PyPI answered 404" in text and "- none" in text
    assert "Every lookup failed (offline?): nothing is claimed about any entry." in text


def test_offline_audit_of_the_whole_catalog_claims_nothing() -> None:
    from gpuport.knowledge import load_packages

    report = kb.audit(load_packages().packages, kb.offline, TODAY, gpus=load_gpus().values())
    assert report.lookups > 300 and len(report.failed) == report.lookups
    assert not any(e.not_on_pypi or e.errors or e.changes or e.placeholders for e in report.entries)
    assert not report.spec_errors  # recomputed locally: needs no network


def test_a_404_is_not_on_pypi_and_an_unpublished_min_version_is_an_error() -> None:
    packages = [
        _pkg("pyrsmi", min_version="1.0"),  # 1.0.0 exists: PEP 440 equal
        _pkg("cupy-rocm-7-0", min_version="13.9.0"),  # never published
        _pkg("no-such-project-gpuport"),
    ]
    report = kb.audit(packages, Recorded(), TODAY)
    assert {e.name: e.errors for e in report.errors} == {
        "cupy-rocm-7-0": ["min_version 13.9.0 is not a release on PyPI"]
    }
    assert report.entries[2].not_on_pypi == ["no-such-project-gpuport"]


def test_placeholders_and_binary_wheels_under_a_build_route_are_flagged() -> None:
    cupy = _pkg("cupy", route=Route(kind="replacement", how="h", replacement="amd-cupy"))
    numba = _pkg(
        "numba-hip", status="partial", route=Route(kind="build", how="build it from the repo")
    )
    said = _pkg(
        "numba-hip",
        status="partial",
        summary="the PyPI wheels are CPU/CUDA builds, so build it",
        route=Route(kind="build", how="build it from the repo"),
    )
    report = kb.audit([cupy, numba, said], Recorded(), TODAY)
    assert report.entries[0].placeholders == ["amd-cupy 0.0.2"]
    assert report.entries[1].hints == [
        "the route says build from source, but PyPI's 0.2.1 ships binary wheels"
    ]
    assert report.entries[2].hints == []  # the entry already says what PyPI's wheels are


def test_xformers_as_it_was_written_shows_what_moved_upstream() -> None:
    """The entry as checked on the day of issue #1365, its route on rocm6.4: the audit reads
    the releases since, the newer PyTorch index that carries xformers, and PyPI."""
    pkg = _pkg(
        "xformers",
        checked=dt.date(2025, 12, 19),
        status="works-with-route",
        route=Route(kind="index", how="h", index_url="https://download.pytorch.org/whl/rocm6.4"),
        sources=["https://github.com/facebookresearch/xformers/issues/1365"],
    )
    report = kb.audit([pkg], Recorded(), TODAY, torch_indexes=["rocm6.4", "rocm7.1", "rocm7.2"])
    (entry,) = report.entries
    what = [c.what for c in entry.changes]
    assert "PyPI xformers: released since the check: 0.0.34, 0.0.35" in what
    assert "release v0.0.34 (2026-01-23)" in what and "release v0.0.35 (2026-02-20)" in what
    assert "release v0.0.33.post2 (2025-12-03)" not in what  # before the check
    newer = [c for c in entry.changes if c.what.startswith("newer index")]
    assert [c.what for c in newer] == [
        "newer index https://download.pytorch.org/whl/rocm7.1 has xformers 0.0.35+rocm7.1"
    ]
    assert newer[0].rocm and not entry.errors  # rocm6.4 still lists it; rocm7.2 404 claims nothing
    # the issue thread was not recorded: that lookup failed and claimed nothing
    assert "https://api.github.com/repos/facebookresearch/xformers/issues/1365" in entry.failed
    text = kb.render_markdown(report)
    assert "`xformers` (checked 2025-12-19): " in text and "[ROCm]" in text


def test_route_index_without_the_package_is_an_error() -> None:
    pkg = _pkg(
        "xformers",
        route=Route(kind="index", how="h", index_url="https://download.pytorch.org/whl/rocm7.2"),
    )
    (entry,) = kb.audit([pkg], Recorded(), TODAY, torch_indexes=[]).entries
    assert entry.errors == [
        "the route's index https://download.pytorch.org/whl/rocm7.2 has no xformers project page"
    ]


def test_threads_and_docs_pages_updated_after_the_check() -> None:
    megatron = _pkg(
        "megatron-core",
        checked=dt.date(2026, 8, 1),
        sources=["https://github.com/ROCm/Megatron-LM/pull/154"],
    )
    dgl = _pkg(
        "dgl",
        checked=dt.date(2025, 12, 16),
        sources=[
            "https://rocm.docs.amd.com/en/latest/compatibility/ml-compatibility/dgl-compatibility.html"
        ],
    )
    report = kb.audit([megatron, dgl], Recorded(), TODAY)
    assert "#154 is merged, updated 2026-08-28" in [c.what for c in report.entries[0].changes]
    assert [c.what for c in report.entries[1].changes] == ["page updated 2026-01-08"]
    fresh = kb.audit([dgl.model_copy(update={"checked": TODAY})], Recorded(), TODAY)
    assert not fresh.entries[0].changes


def test_each_url_is_fetched_once_per_run() -> None:
    fetch = Recorded()
    packages = [
        _pkg("pyrsmi"),
        _pkg("amdsmi", route=Route(kind="replacement", how="h", replacement="pyrsmi")),
    ]
    kb.audit(packages, fetch, TODAY)
    assert fetch.asked.count(_pypi("pyrsmi")) == 1


def test_gpu_peaks_that_disagree_with_their_inputs_are_errors() -> None:
    gpus = load_gpus()
    bad = gpus["rx-9070-xt"].model_copy(
        update={"peak_tflops": {**gpus["rx-9070-xt"].peak_tflops, "bf16": 389.0}}
    )
    report = kb.audit([], kb.offline, TODAY, gpus=[gpus["mi300x"], bad])
    assert len(report.spec_errors) == 1 and "rx-9070-xt: bf16 389" in report.spec_errors[0]
    assert "rx-9070-xt: bf16 389" in kb.render_markdown(report)


def test_old_checks_and_unverified_entries_are_listed() -> None:
    packages = [_pkg("pyrsmi", checked=dt.date(2026, 6, 1)), _pkg("cupy-rocm-7-0", verified=[])]
    report = kb.audit(packages, kb.offline, TODAY, max_age_days=90)
    assert report.old == {"pyrsmi": 179} and report.unverified == ["cupy-rocm-7-0"]
    text = kb.render_markdown(report)
    assert text.startswith("### kb-audit report, 2026-11-27")
    assert "1 of 2 entries: not `cupy-rocm-7-0`" in text


# ----------------------------------------------------------------------- the command


def test_record_then_replay_gives_the_same_report(tmp_path: Path) -> None:
    packages = [_pkg("pyrsmi", min_version="1.0.0"), _pkg("no-such-project-gpuport")]
    first = kb.audit(packages, kb.recording(Recorded(), tmp_path), TODAY)
    again = kb.audit(packages, kb.replaying(tmp_path), TODAY)
    assert kb.render_markdown(first) == kb.render_markdown(again)
    recorded = [json.loads(p.read_text()) for p in tmp_path.iterdir()]
    assert {d["status"] for d in recorded} == {"ok", "missing"}


def test_main_offline_replay_strict_and_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert kb.main(["--knowledge", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kb_audit: ") and err.count("\n") == 1
    assert kb.main(["--replay", str(tmp_path / "nope")]) == 2
    assert "not a directory" in capsys.readouterr().err
    (tmp_path / "packages.toml").write_text(
        '[[package]]\nname = "pyrsmi"\nstatus = "works"\nsummary = "s"\n'
        'min_version = "0.0.1"\nsources = ["https://example.org"]\nchecked = 2026-11-25\n'
    )
    out = tmp_path / "report.md"
    argv = ["--knowledge", str(tmp_path), "--today", "2026-11-27", "--only", "pyrsmi"]
    assert kb.main([*argv, "--offline", "--strict", "--output", str(out)]) == 0
    assert "nothing is claimed" in out.read_text()
    code = kb.main([*argv, "--replay", str(FIXTURES), "--strict", "--output", str(out)])
    assert code == 1  # the user's pyrsmi entry claims a 0.0.1 that PyPI never had
    assert "`pyrsmi` (checked 2026-11-25): min_version 0.0.1 is not a release" in out.read_text()


def test_amd_indexes_a_route_command_names_are_read_for_its_distributions() -> None:
    """`--extra-index-url=https://pypi.amd.com/...` in the route: the audit asks that index for
    what the command installs; a 404 there is an error, no answer claims nothing."""
    amd = "https://pypi.amd.com/rocm-7.2.3/simple"
    pkg = _pkg(
        "xgboost",
        status="works-with-route",
        route=Route(
            kind="replacement",
            how="h",
            replacement="amd_xgboost",
            command=f"pip install amd_xgboost --extra-index-url={amd}",
        ),
    )
    assert route_indexes(pkg) == [(amd, ["amd_xgboost"])]
    page = f"{amd}/amd-xgboost/"
    assert page in plan(pkg)
    wheel = '<a href="amd_xgboost-3.1.0-py3-none-manylinux_2_28_x86_64.whl">w</a>'  # SYNTHETIC

    def answering(status: AnswerStatus, text: str = "") -> Callable[[str], Answer]:
        return lambda url: Answer(status, text=text) if url == page else Answer("failed")

    assert kb.audit([pkg], answering("ok", wheel), TODAY).entries[0].errors == []
    missing = kb.audit([pkg], answering("missing"), TODAY).entries[0]
    assert missing.errors == [f"the route's index {amd} has no amd-xgboost project page"]
    assert kb.audit([pkg], answering("failed"), TODAY).entries[0].errors == []
    # an index_url no command names serves the replacement (triton-rocm), not the entry
    triton = _pkg(
        "triton",
        route=Route(
            kind="index",
            how="h",
            index_url="https://download.pytorch.org/whl/rocm7.2",
            replacement="triton-rocm",
        ),
    )
    assert route_indexes(triton) == [("https://download.pytorch.org/whl/rocm7.2", ["triton-rocm"])]
