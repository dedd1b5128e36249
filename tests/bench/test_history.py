"""The run history: add, list, look up by id / prefix / label, and refuse damage with one line."""

from __future__ import annotations

import io
import re
import sqlite3
from pathlib import Path

import pytest
from rich.console import Console

from gpuport.bench.history import History, default_history_path, resolve_run
from gpuport.bench.model import BenchResult, BenchRun, CaseStatus, DeviceInfo
from gpuport.models import EnvFingerprint, GpuportError
from gpuport.render.compare_render import history_terminal

ENV = EnvFingerprint.collect()
DEVICE = DeviceInfo(backend="cpu", name="test cpu")


def make_run(
    run_id: str, *, label: str | None = None, started: str = "2026-01-01T00:00:00Z"
) -> BenchRun:
    results = [
        BenchResult(workload="gemm", case="small", unit="TFLOPS", value=1.5),
        BenchResult(workload="gemm", case="huge", status=CaseStatus.SKIPPED, reason="OOM"),
    ]
    return BenchRun(
        id=run_id,
        label=label,
        suite="quick",
        env=ENV,
        device=DEVICE,
        started=started,
        duration_s=1.0,
        results=results,
    )


@pytest.fixture
def history(tmp_path: Path) -> History:
    return History(tmp_path / "nested" / "dir" / "history.sqlite")


def test_add_creates_parent_dirs_and_lists_newest_first(history: History) -> None:
    assert history.list() == []
    assert not history.path.exists()  # reading an absent history does not create it
    assert history.add(make_run("aaaa0001", started="2026-01-01T00:00:00Z")) == "aaaa0001"
    history.add(make_run("bbbb0002", label="mi300x", started="2026-03-01T00:00:00Z"))
    history.add(make_run("cccc0003", started="2026-02-01T00:00:00Z"))
    assert history.path.is_file()
    listed = history.list()
    assert [s.id for s in listed] == ["bbbb0002", "cccc0003", "aaaa0001"]
    top = listed[0]
    assert (top.label, top.device, top.suite, top.n_results, top.n_ok) == (
        "mi300x",
        "test cpu",
        "quick",
        2,
        1,
    )
    assert [s.id for s in history.list(limit=1)] == ["bbbb0002"]
    assert len(history.list(limit=0)) == 3


def test_get_by_full_id_prefix_and_label(history: History) -> None:
    history.add(make_run("1234abcd-0000", label="h100", started="2026-01-01T00:00:00Z"))
    history.add(make_run("9876fedc-0000", label="h100", started="2026-01-02T00:00:00Z"))
    history.add(make_run("5555aaaa-0000", label="mi300x"))
    run = history.get("1234abcd-0000")
    assert run.id == "1234abcd-0000"
    assert run.results[0].value == 1.5  # the whole run came back, not only the columns
    assert history.get("5555").id == "5555aaaa-0000"
    assert history.get("h100").id == "9876fedc-0000"  # latest run with that label
    assert history.get("mi300x").id == "5555aaaa-0000"


def test_ambiguous_prefix_lists_the_candidates(history: History) -> None:
    history.add(make_run("abcd1111"))
    history.add(make_run("abcd2222"))
    with pytest.raises(GpuportError, match="ambiguous") as err:
        history.get("abcd")
    message = str(err.value)
    assert "abcd1111" in message and "abcd2222" in message and "\n" not in message
    assert history.get("abcd2").id == "abcd2222"


def test_label_and_prefix_of_different_runs_is_ambiguous(history: History) -> None:
    history.add(make_run("beef0001"))
    history.add(make_run("cafe0002", label="beef"))
    with pytest.raises(GpuportError, match="ambiguous"):
        history.get("beef")


def test_unknown_ref_lists_recent_runs(history: History) -> None:
    with pytest.raises(GpuportError, match="empty"):
        history.get("nothing")
    history.add(make_run("abcd1111", label="base"))
    with pytest.raises(GpuportError, match="no run 'zzzz'") as err:
        history.get("zzzz")
    assert "abcd1111 (base" in str(err.value)
    with pytest.raises(GpuportError, match="at least 4 characters"):
        history.get("abc")  # too short to be a prefix, and no such label


def test_duplicate_id_is_refused(history: History) -> None:
    history.add(make_run("dup00001"))
    with pytest.raises(GpuportError, match="already in the history"):
        history.add(make_run("dup00001", label="again"))
    assert len(history.list()) == 1


def test_corrupt_row_is_one_line_error(history: History) -> None:
    history.add(make_run("good0001"))
    history.add(make_run("bad00002"))
    with sqlite3.connect(history.path) as conn:
        conn.execute("UPDATE runs SET data = ? WHERE id = ?", ('{"id": 3}', "bad00002"))
    conn.close()
    with pytest.raises(GpuportError, match=r"bad00002.*corrupt"):
        history.get("bad00002")
    assert history.get("good0001").id == "good0001"
    assert len(history.list()) == 2  # listing reads only the indexed columns


def test_corrupt_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    path.write_bytes(b"this is not a database at all\n" * 100)
    history = History(path)
    for call in (history.list, lambda: history.get("abcd"), lambda: history.add(make_run("x"))):
        with pytest.raises(GpuportError, match=re.escape(str(path))):
            call()


def test_newer_schema_version_is_refused(history: History) -> None:
    history.add(make_run("abcd0001"))
    with sqlite3.connect(history.path) as conn:
        conn.execute("UPDATE schema_version SET version = 99")
    conn.close()
    with pytest.raises(GpuportError, match="schema version 99"):
        history.list()


def test_env_var_sets_the_default_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "env" / "h.sqlite"
    monkeypatch.setenv("GPUPORT_HISTORY", str(target))
    assert default_history_path() == target
    History().add(make_run("envrun01", label="from-env"))
    assert target.is_file()
    assert resolve_run("from-env", None).id == "envrun01"
    monkeypatch.delenv("GPUPORT_HISTORY")
    assert default_history_path().name == "history.sqlite"
    assert default_history_path() != target


def test_resolve_run_prefers_files_and_reports_missing_ones(
    tmp_path: Path, history: History, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = make_run("file0001", label="on-disk")
    path = tmp_path / "run.json"
    path.write_text(run.model_dump_json())
    assert resolve_run(str(path), history).id == "file0001"
    with pytest.raises(GpuportError, match="no such file"):
        resolve_run(str(tmp_path / "missing.json"), history)
    with pytest.raises(GpuportError, match="no such file"):
        resolve_run("some/dir/run", history)
    history.add(make_run("hist0001", label="stored"))
    monkeypatch.chdir(tmp_path)
    assert resolve_run("stored", history).id == "hist0001"
    # a file that is not a bench run is refused by load_result with one line
    other = tmp_path / "other.json"
    other.write_text('{"kind": "gpuport.scan"}')
    with pytest.raises(GpuportError, match=r"not a gpuport\.bench file"):
        resolve_run(str(other), history)


def test_history_terminal_escapes_labels(history: History) -> None:
    history.add(make_run("term0001", label="[bold red]x[/]\x1b[31m"))
    buf = io.StringIO()
    console = Console(file=buf, width=200, color_system=None)
    history_terminal(history.list(), console)
    out = buf.getvalue()
    assert "term0001" in out and "[bold red]x[/]" in out and "\x1b" not in out
    assert "1 / 2" in out
    buf2 = io.StringIO()
    history_terminal([], Console(file=buf2, width=200))
    assert "no runs" in buf2.getvalue()
