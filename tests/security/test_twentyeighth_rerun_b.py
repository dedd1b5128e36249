"""Issue 23: the twenty-eighth independent re-run, second part: the chart's matplotlib reading the
project's configuration (F3, F9), a history file the environment chose that is not gpuport's
(F1), set-ID bits kept by in-place rewrites (F4), 4,301-digit integers (F11) and the project's
control characters on a terminal (F14). Each test runs gpuport as a user would (a fake HOME,
the project's environment on the command line) or calls the layer that was at fault."""

from __future__ import annotations

import contextlib
import hashlib
import os
import pty
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from gpuport import fileio
from gpuport.bench.history import History
from gpuport.models import GpuportError
from gpuport.scan.cxx_ints import int_constants, known_ints
from tests.bench.test_history import make_run
from tests.cost.helpers import run_cost

SRC = str(Path(__file__).resolve().parents[2] / "src")
KERNEL = "__global__ void k(float* x) { float* p; cudaMalloc(&p, 4); x[0] = 1.f; }\n"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
HUGE = "9" * 4400  # Python's int() refuses more than 4,300 digits


def _gpuport(cwd: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {"HOME": str(cwd.parent / "home"), "PYTHONPATH": SRC, "LANG": "C.UTF-8"}
    base["PATH"] = "/usr/bin:/bin"
    return subprocess.run(
        [sys.executable, "-m", "gpuport", *args], cwd=cwd, env={**base, **env},
        capture_output=True, text=True, timeout=240, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def _tools(folder: Path, proof: Path, *names: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_text(f"#!/bin/sh\necho {name} >> {proof}\nexit 1\n")
        (folder / name).chmod(0o755)


def _files(folder: Path) -> set[Path]:
    return {p.relative_to(folder) for p in folder.rglob("*")}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ------------------------------------------------------------------ F3, F9: cost --chart


def _chart_project(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A project whose matplotlibrc asks for TeX, whose bin/ holds latex, fc-list... that leave
    a proof, and whose `.cache`/`mpl` are links to a folder of the user's."""
    proj, outside, proof = tmp_path / "proj", tmp_path / "outside", tmp_path / "ran"
    (proj / ".git").mkdir(parents=True)
    outside.mkdir()
    (proj / "matplotlibrc").write_text("text.usetex: True\nbackend: module://evil_backend\n")
    (proj / "evil_backend.py").write_text(f"open({str(proof)!r}, 'a').write('backend\\n')\n")
    _tools(proj / "bin", proof, "latex", "dvipng", "kpsewhich", "fc-list", "gs")
    (proj / ".cache").symlink_to(outside)
    (proj / "mpl").symlink_to(outside)
    return proj, outside, proof


@pytest.mark.parametrize(
    "chosen",
    [
        {},
        {"MATPLOTLIBRC": "{proj}/matplotlibrc"},
        {"MPLCONFIGDIR": "{proj}/mpl", "XDG_CACHE_HOME": "{proj}/.cache"},
    ],
    ids=["cwd-rc", "matplotlibrc-env", "config-dir-link"],
)
def test_the_chart_reads_nothing_of_the_project_and_runs_nothing(
    tmp_path: Path, chosen: dict[str, str]
) -> None:
    """F3: the project's ./matplotlibrc (text.usetex) made matplotlib run the `latex` the
    project's .envrc put on PATH. F9: HOME set to the project had the font cache written
    through its `.cache` link, outside the project."""
    proj, outside, proof = _chart_project(tmp_path)
    before = _files(proj)
    env = {
        "HOME": str(proj),  # the project's .envrc: export HOME=$PWD
        "PATH": f"{proj / 'bin'}:/usr/bin:/bin",  # PATH_add bin
        **{name: value.format(proj=proj) for name, value in chosen.items()},
    }
    done = _gpuport(proj, "cost", "-m", "qwen3-30b-a3b", "-g", "h100,mi300x", "--chart",
                    "cost.png", env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not proof.exists(), proof.read_text()
    assert not any(outside.iterdir())  # no font cache or config written through the links
    assert _files(proj) == before | {Path("cost.png")}
    assert (proj / "cost.png").read_bytes().startswith(PNG_MAGIC)


def test_the_chart_leaves_no_folder_and_restores_the_folder_and_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In one process: settings matplotlib already holds (TeX on) are not used, and the
    current folder and the environment are what they were; the private folder is gone."""
    mpl = pytest.importorskip("matplotlib")
    proj, _outside, proof = _chart_project(tmp_path)
    monkeypatch.chdir(proj)
    monkeypatch.setenv("PATH", f"{proj / 'bin'}:/usr/bin:/bin")
    monkeypatch.setenv("HOME", str(proj))
    monkeypatch.setenv("MPLCONFIGDIR", str(proj / "mpl"))
    monkeypatch.setitem(mpl.rcParams, "text.usetex", True)
    temp = Path(tempfile.gettempdir())
    leftovers = set(temp.glob("gpuport-chart-*"))
    env = dict(os.environ)
    with contextlib.suppress(Exception):  # before the fix: latex "ran" and failed
        run_cost("-m", "llama-3-8b", "-g", "h100,mi300x", "--chart", "c.svg")
    assert not proof.exists()
    assert Path.cwd() == proj
    assert dict(os.environ) == env
    assert set(temp.glob("gpuport-chart-*")) == leftovers
    assert (proj / "c.svg").read_text().lstrip().startswith("<?xml")


# ------------------------------------------------------------------ F1: the history file


def _foreign_db(path: Path) -> str:
    """An IPython-like history database of the user's; returns its digest."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE history (session INTEGER, line INTEGER, source TEXT)")
    conn.execute("INSERT INTO history VALUES (1, 1, 'print(1)')")
    conn.commit()
    conn.close()
    return _sha(path)


def test_compare_list_refuses_a_database_that_is_not_a_history(tmp_path: Path) -> None:
    """F1: GPUPORT_HISTORY from the project's .envrc named the user's IPython history;
    `compare --list` added gpuport's tables to it."""
    proj, home = tmp_path / "proj", tmp_path / "home"
    (proj / ".git").mkdir(parents=True)
    victim = home / ".ipython" / "profile_default" / "history.sqlite"
    digest = _foreign_db(victim)
    env = {"HOME": str(home), "GPUPORT_HISTORY": "~/.ipython/profile_default/history.sqlite"}
    done = _gpuport(proj, "compare", "--list", env=env)
    assert done.returncode == 2, done.stderr
    assert "is not a gpuport history" in done.stderr
    assert _sha(victim) == digest
    assert sorted(p.name for p in victim.parent.iterdir()) == ["history.sqlite"]


def test_no_history_call_changes_a_file_that_is_not_a_history(tmp_path: Path) -> None:
    """Reads and writes alike: a database with other tables, gpuport's tables beside others,
    and an empty file are refused, byte for byte unchanged."""
    foreign = tmp_path / "ipython.sqlite"
    _foreign_db(foreign)
    mixed = tmp_path / "mixed.sqlite"
    History(mixed).add(make_run("mixed001"))
    with contextlib.closing(sqlite3.connect(mixed)) as conn, conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    for path in (foreign, mixed, empty):
        digest = _sha(path)
        history = History(path)
        calls = (history.list, lambda h=history: h.get("mixed001"),
                 lambda h=history: h.add(make_run("new00001")))  # fmt: skip
        for call in calls:
            with pytest.raises(GpuportError, match="not a gpuport history"):
                call()
            assert _sha(path) == digest, path
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "empty.sqlite", "ipython.sqlite", "mixed.sqlite"
    ]  # fmt: skip


def test_reading_a_history_opens_it_read_only(tmp_path: Path) -> None:
    """A history cut off before its version row was written: reading it adds nothing (before,
    every read ran the CREATE/INSERT statements); the next write completes it."""
    path = tmp_path / "history.sqlite"
    History(path).add(make_run("abcd0001", label="one"))
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("DELETE FROM schema_version")
    digest = _sha(path)
    history = History(path)
    assert [s.id for s in history.list()] == ["abcd0001"]
    assert history.get("one").id == "abcd0001"
    assert _sha(path) == digest
    history.add(make_run("abcd0002"))
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [(1,)]


def test_a_history_link_to_nowhere_is_not_followed_to_make_a_file(tmp_path: Path) -> None:
    """Writing made the file a dangling link named, wherever it pointed."""
    target = tmp_path / "elsewhere" / "made.sqlite"
    target.parent.mkdir()
    link = tmp_path / "history.sqlite"
    link.symlink_to(target)
    with pytest.raises(GpuportError, match=str(link)):
        History(link).add(make_run("link0001"))
    assert not target.exists()
    assert History(tmp_path / "new" / "history.sqlite").add(make_run("new00001")) == "new00001"


# ------------------------------------------------------------------ F4: set-ID bits


def test_an_in_place_rewrite_and_its_backup_drop_set_id_and_sticky_bits(tmp_path: Path) -> None:
    """F4: `hipify k.cu --in-place` (run as root on another user's 6755 file) left a
    caller-owned 6755 k.cu and k.cu.gpuport.bak."""
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    source = proj / "k.cu"
    source.write_text(KERNEL)
    source.chmod(0o7755)
    done = _gpuport(proj, "hipify", "k.cu", "--in-place", env={})
    assert done.returncode == 0, done.stderr
    backup = fileio.backup_path(source)
    assert "hip" in source.read_text() and backup.read_text() == KERNEL
    assert source.stat().st_mode & 0o7777 == 0o755
    assert backup.stat().st_mode & 0o7777 == 0o755


def test_the_file_layer_keeps_only_permission_bits(tmp_path: Path) -> None:
    path = tmp_path / "tool.py"
    path.write_bytes(b"print(1)\n")
    path.chmod(0o6750)
    fileio.backup(path, b"print(1)\n")
    fileio.write_atomic_bytes(path, b"print(2)\n")
    assert path.stat().st_mode & 0o7777 == 0o750
    assert fileio.backup_path(path).stat().st_mode & 0o7777 == 0o750


# ------------------------------------------------------------------ F11: huge integers


def test_a_define_with_thousands_of_digits_is_kept_as_text() -> None:
    values = int_constants(f"#define WS {HUGE}\n#define W 0032u\nconstexpr int kBig = {HUGE};\n")
    assert values == {"WS": {HUGE}, "W": {"32"}, "kBig": {HUGE}}
    assert known_ints(values) == {"W": 32}


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("k.cu", f"#define WS {HUGE}\n{KERNEL}"),
        (
            "docker-compose.yml",
            "services:\n  a:\n    image: nvidia/cuda:12.1.0-base-ubuntu22.04\n    deploy:\n"
            "      resources:\n        reservations:\n          devices:\n"
            f"            - driver: nvidia\n              count: {HUGE}\n",
        ),
    ],
    ids=["define", "compose"],
)
def test_a_huge_integer_in_a_project_file_is_no_internal_error(
    tmp_path: Path, name: str, text: str
) -> None:
    """F11: `scan .` ended with `internal error: ValueError: Exceeds the limit (4300
    digits)`, exit 4; an unreadable compose file is skipped, as other invalid YAML is."""
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    (proj / name).write_text(text)
    done = _gpuport(proj, "scan", ".", env={"COLUMNS": "200"})
    assert done.returncode in (0, 1), done.stderr
    assert "internal error" not in done.stderr + done.stdout
    if name.endswith(".yml"):
        assert "docker-compose.yml" in done.stdout and "invalid YAML" in done.stdout


# ------------------------------------------------------------------ F14: terminal output


def _on_a_terminal(cwd: Path, *args: str, home: Path) -> bytes:
    """stdout of `python -m gpuport ARGS` when it is a pseudo-terminal."""
    master, slave = pty.openpty()
    env = {"HOME": str(home), "PYTHONPATH": SRC, "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"}
    with subprocess.Popen(
        [sys.executable, "-m", "gpuport", *args], cwd=cwd, env=env, stdout=slave,
        stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
    ) as proc:  # fmt: skip
        os.close(slave)
        out = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        proc.wait(timeout=240)
    os.close(master)
    return out


def test_hipify_to_a_terminal_shows_the_projects_control_characters(tmp_path: Path) -> None:
    """F14: `gpuport hipify k.cu` wrote an OSC 52 (clipboard) sequence from a comment of the
    project raw to the terminal; --diff was escaped. Redirected, the text stays exact."""
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    osc = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
    (proj / "k.cu").write_text(f"// {osc}\n{KERNEL}")
    shown = _on_a_terminal(proj, "hipify", "k.cu", home=tmp_path / "home")
    assert b"\x1b]52" not in shown and b"\x07" not in shown
    assert b"\\x1b]52;c;ZWNobyBwd25lZA==\\x07" in shown and b"hipMalloc" in shown
    piped = _gpuport(proj, "hipify", "k.cu", env={})
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.startswith(f"// {osc}\n")
