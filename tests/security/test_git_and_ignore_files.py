"""Issue 23 item 6: the git index and ``.gitignore`` files of a scanned project are read
through the file layer, can neither crash a scan nor leak a file outside the project."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from gpuport.scan.engine import ScanOptions, scan_path

SHFL = "__global__ void k(float* x) { x[0] = __shfl_xor_sync(0xffffffff, x[0], 1); }\n"


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize("command", ["scan", "hipify", "assess"])
@pytest.mark.parametrize("ignore", ["!\n", "\\\n", "*.cuh\n!\n\\\n"])
def test_a_gitignore_line_that_is_no_pattern_does_not_crash(
    cli: Any, tmp_path: Path, command: str, ignore: str
) -> None:
    """A one-line ``.gitignore`` of ``!`` crashed scan, hipify and assess with exit 4."""
    root = _tree(tmp_path / "p", {".gitignore": ignore, "k.cu": SHFL, "a.cuh": SHFL})
    args = {
        "scan": [],
        "hipify": ["--hip-version", "6.4", "-o", str(tmp_path / "out")],
        "assess": ["--no-progress"],
    }[command]
    res = cli(command, str(root), "--format", "json", *args)
    assert res.code in (0, 1), res.err
    assert "internal error" not in res.err


def test_the_bad_lines_are_said_and_the_others_applied(tmp_path: Path) -> None:
    root = _tree(tmp_path / "p", {".gitignore": "!\n*.cuh\n", "k.cu": SHFL, "a.cuh": SHFL})
    report = scan_path(root, ScanOptions(jobs=1))
    assert {f.location.path for f in report.findings} == {"k.cu"}  # *.cuh still applied
    (skip,) = [s for s in report.skipped if s.path == ".gitignore"]
    assert "line 1 is not a valid pattern" in skip.reason


def test_an_exclude_that_is_no_pattern_is_a_usage_error(cli: Any, tmp_path: Path) -> None:
    root = _tree(tmp_path / "p", {"k.cu": SHFL})
    res = cli("scan", str(root), "--exclude", "!")
    assert res.code == 2 and "not a valid pattern" in res.err


@pytest.mark.parametrize("pattern", ["[", "", "#k.cu", "   "])
def test_an_exclude_that_matches_nothing_is_a_usage_error(
    cli: Any, tmp_path: Path, pattern: str
) -> None:
    """Fifteenth re-run: ``--exclude '['`` (pathspec reads an unclosed bracket, like a blank or
    a comment, as no pattern) was accepted and excluded nothing, exit 0."""
    root = _tree(tmp_path / "p", {"k.cu": SHFL})
    res = cli("scan", str(root), "--exclude", pattern)
    assert res.code == 2 and "matches nothing" in res.err, res.err
    assert res.err.count("\n") <= 1 and "Traceback" not in res.err


def test_a_linked_index_is_not_read(tmp_path: Path) -> None:
    """``.git/index -> /etc/passwd`` put 4 bytes of passwd into the report (dulwich's error
    quoted the signature it found)."""
    secret = tmp_path / "secret"
    secret.write_bytes(b"SECRETUSER:x:0:0:/root:/bin/bash\n")
    root = _tree(tmp_path / "p", {".gitignore": "*.cuh\n", "a.cuh": SHFL, "b.cu": SHFL})
    (root / ".git").mkdir()
    (root / ".git" / "index").symlink_to(secret)
    report = scan_path(root, ScanOptions(jobs=1))
    text = report.model_dump_json()
    assert "SECR" not in text
    assert any(s.path == ".git/index" for s in report.skipped)


def test_a_corrupt_index_is_said_without_quoting_it(tmp_path: Path) -> None:
    root = _tree(tmp_path / "p", {"b.cu": SHFL})
    (root / ".git").mkdir()
    (root / ".git" / "index").write_bytes(b"SECRETPASSWORD" * 4)
    report = scan_path(root, ScanOptions(jobs=1))
    (skip,) = [s for s in report.skipped if s.path == ".git/index"]
    assert "SECRET" not in skip.reason


def test_a_git_file_pointing_outside_is_not_followed(tmp_path: Path) -> None:
    """A ``.git`` file (``gitdir: /elsewhere``) made gpuport read another repository's index."""
    from dulwich.repo import Repo

    other = _tree(tmp_path / "other", {"secret_name.cu": SHFL})
    repo = Repo.init(str(other))
    (repo.get_worktree() if hasattr(repo, "get_worktree") else repo).stage([b"secret_name.cu"])
    root = _tree(tmp_path / "p", {".gitignore": "*.cuh\n", "a.cuh": SHFL, "b.cu": SHFL})
    (root / ".git").write_text(f"gitdir: {other / '.git'}\n", encoding="utf-8")
    report = scan_path(root, ScanOptions(jobs=1))
    assert {f.location.path for f in report.findings} == {"b.cu"}
    (skip,) = [s for s in report.skipped if s.path == ".git/index"]
    assert "outside the project" in skip.reason


def test_a_submodule_git_file_into_the_superproject_is_followed(tmp_path: Path) -> None:
    top = tmp_path / "top"
    sub = _tree(top / "sub", {".gitignore": "*.cuh\n", "a.cuh": SHFL, "b.cu": SHFL})
    moddir = top / ".git" / "modules" / "sub"
    moddir.mkdir(parents=True)
    (sub / ".git").write_text("gitdir: ../.git/modules/sub\n", encoding="utf-8")
    report = scan_path(sub, ScanOptions(jobs=1))
    assert not any("outside the project" in s.reason for s in report.skipped)


def test_a_fifo_index_does_not_hang(tmp_path: Path) -> None:
    root = _tree(tmp_path / "p", {"b.cu": SHFL})
    (root / ".git").mkdir()
    os.mkfifo(root / ".git" / "index")
    report = scan_path(root, ScanOptions(jobs=1))
    assert any(s.path == ".git/index" for s in report.skipped)


def test_a_reader_crash_is_never_a_quiet_ready(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checker bug skipped the file with "please report this" and the verdict was `ready`
    with exit 0: now the verdict says it does not cover the file and the exit is 4."""
    from gpuport.scan import engine

    real = engine.check_text

    def buggy(rel: str, text: str, *a: Any, **k: Any) -> Any:
        if rel == "boom.py":
            raise ValueError(f"bug quoting the file: {text[:20]}")
        return real(rel, text, *a, **k)

    monkeypatch.setattr(engine, "check_text", buggy)
    monkeypatch.delenv("GPUPORT_DEBUG", raising=False)  # debugging raises instead
    root = _tree(tmp_path / "p", {"boom.py": "SECRETVALUE = 1\nimport torch\n", "ok.py": "x = 1\n"})
    report = scan_path(root, ScanOptions(jobs=1))
    (skip,) = [s for s in report.skipped if s.path == "boom.py"]
    assert skip.internal and "SECRETVALUE" not in skip.reason
    assert "not analysed because of a gpuport error" in report.verdict_reason
    res = cli("scan", str(root), "--jobs", "1", "--format", "json")
    assert res.code == 4, res.err
    assert "internal error analysing 1 file(s) (boom.py)" in res.err
    assert '"verdict"' in res.out  # the report is still written


def _v4_index(entries: list[tuple[int, bytes]]) -> bytes:
    import hashlib
    import struct

    body = b"".join(
        struct.pack(">10L", 0, 0, 0, 0, 0, 0, 0o100644, 0, 0, 0)
        + b"\x11" * 20
        + struct.pack(">H", 0)
        + bytes([remove])
        + suffix
        + b"\0"
        for remove, suffix in entries
    )
    data = b"DIRC" + struct.pack(">LL", 4, len(entries)) + body
    return data + hashlib.sha1(data).digest()  # noqa: S324 - git's own checksum


@pytest.mark.parametrize(
    "entries",
    [[(0, b"a" * 63)] * 6_000, [(0, b"a" * 400_000)]],
    ids=["paths-that-grow", "one-long-suffix"],
)
def test_a_version_4_index_of_paths_longer_than_path_max_is_not_read(
    tmp_path: Path, entries: list[tuple[int, bytes]]
) -> None:
    """Third review: version 4 compresses each path against the previous one; 6,000 entries
    that keep it and add 63 bytes (400 KB) stood for 1.1 GB of paths (2.5 GB in the scan at
    800 KB), and dulwich read a 400 KB suffix a byte at a time. Now a linear walk refuses a
    path over PATH_MAX before dulwich reads the file."""
    import resource
    import time

    root = _tree(tmp_path / "p", {"b.cu": SHFL})
    (root / ".git").mkdir()
    (root / ".git" / "index").write_bytes(_v4_index(entries))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.process_time()
    report = scan_path(root, ScanOptions(jobs=1))
    assert time.process_time() - started < 5
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 300_000  # KB
    (skip,) = [s for s in report.skipped if s.path == ".git/index"]
    assert "longer than 4096 bytes" in skip.reason


def test_a_version_4_index_that_git_writes_is_read(tmp_path: Path) -> None:
    import shutil
    import subprocess

    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    root = _tree(tmp_path / "p", {"src/a.cu": SHFL, "src/b.cu": SHFL, "ignored.cu": SHFL})
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    for argv in (["init", "-q"], ["add", "src"], ["update-index", "--index-version", "4"]):
        subprocess.run([git, *argv], cwd=root, env=env, check=True, stdin=subprocess.DEVNULL)
    assert (root / ".git" / "index").read_bytes()[4:8] == b"\0\0\0\4"
    from gpuport.scan.project.gitindex import git_facts

    facts = git_facts(root)
    assert facts.tracked == {"src/a.cu", "src/b.cu"} and facts.problem is None
