"""What the twenty-fifth independent re-run found (F8, F9, F11, F13): a folder chain deeper
than Python's recursion limit, a ``src`` link out of the project, a ``.git/index`` of millions
of entries and a file of tens of thousands of findings of one rule."""

from __future__ import annotations

import hashlib
import os
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from gpuport.models import Severity

DEPTH = 1_500  # past Python's recursion limit (1,000)
SHFL = "__global__ void k(float*x){ x[0] = __shfl_down_sync(0xffffffff, 1.0f, 1); }\n"


@contextmanager
def _chain(top: Path, leaf: str) -> Iterator[None]:
    """``top/a/a/.../a/leaf``, DEPTH folders deep, made and removed through folder
    descriptors (the path is longer than PATH_MAX; ``shutil.rmtree`` would recurse)."""
    top.mkdir(parents=True)
    fds = [os.open(top, os.O_RDONLY | os.O_DIRECTORY)]
    try:
        for _ in range(DEPTH):
            os.mkdir("a", dir_fd=fds[-1])
            fds.append(os.open("a", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
        fd = os.open(leaf, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fds[-1])
        os.write(fd, b"# ROCm\n")
        os.close(fd)
        yield
    finally:
        if len(fds) > DEPTH:
            os.unlink(leaf, dir_fd=fds[-1])
        while len(fds) > 1:
            os.close(fds.pop())
            os.rmdir("a", dir_fd=fds[-1])
        os.close(fds.pop())


def test_a_deep_docs_chain_is_scanned_not_a_recursion_error(tmp_path: Path) -> None:
    """F8: ``sorted(docs.rglob("*"))`` recursed once per level: a 1,500-level folder under
    ``docs/`` ended scan, assess and port in ``internal error: RecursionError``."""
    from gpuport.scan.engine import ScanOptions, scan_path
    from gpuport.scan.project.files import MOST_FOLDER_DEPTH
    from gpuport.scan.project.routes_docs import _doc_pages

    root = tmp_path / "p"
    (root / "src").mkdir(parents=True)
    (root / "src" / "k.cu").write_text(SHFL)
    with _chain(root / "docs", "x.md"):
        (root / "docs" / "install.md").write_text("# install\n")
        assert _doc_pages(root) == [root / "docs" / "install.md"]  # deeper: not entered
        report = scan_path(root, ScanOptions(jobs=1))
        assert report.files_scanned >= 1
        deep = f"more than {MOST_FOLDER_DEPTH} folders deep"
        assert any(deep in s.reason for s in report.skipped)


def test_doc_pages_keep_the_order_of_sorted_rglob_and_never_follow_links(tmp_path: Path) -> None:
    """F8: the iterative walk lists what ``sorted(rglob)`` listed, in its order."""
    from gpuport.scan.project.routes_docs import _doc_pages

    root = tmp_path / "p"
    pages = ("docs/b.md", "docs/a/z.rst", "docs/a.md", "docs/a-b/c.txt", "doc/q.md", "docs/x.py")
    for rel in pages:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("x\n")
    (root / "docs" / "link").symlink_to(outside)
    (root / "docs" / "page-link.md").symlink_to(outside / "secret.md")
    names = [p.relative_to(root).as_posix() for p in _doc_pages(root)]
    assert names == ["docs/a/z.rst", "docs/a-b/c.txt", "docs/a.md", "docs/b.md", "doc/q.md"]
    before = [  # what the rglob walk listed (the shallow tree it could still walk)
        p
        for name in ("docs", "doc")
        for p in sorted((root / name).rglob("*"))
        if p.suffix in (".md", ".rst", ".txt") and p.is_file() and not p.is_symlink()
    ]
    assert _doc_pages(root) == before


def test_port_check_copies_a_project_with_a_deep_chain(tmp_path: Path) -> None:
    """F8: ``os.walk`` (recursive in Python 3.11) in ``port --check``'s copy of the project
    and its search for the units that include a changed header."""
    from gpuport.port.check import _copy_tree, _units
    from gpuport.port.model import FileDiff

    root = tmp_path / "p"
    (root / "src").mkdir(parents=True)
    (root / "src" / "k.cu").write_text('#include "k.cuh"\n' + SHFL)
    (root / "src" / "k.cuh").write_text("#pragma once\n")
    with _chain(root / "deep", "y.txt"):
        dest = tmp_path / "copy"
        _copy_tree(root, dest)
        assert (dest / "src" / "k.cu").is_file()
        diff = FileDiff(path="src/k.cuh", action="modify", hunks=[], fixes=[])
        assert _units(root, [diff]) == ["src/k.cu"]


def test_a_linked_src_is_not_the_projects_packages(tmp_path: Path) -> None:
    """F9: ``src -> ..`` listed the folder above the project (its folder and file names) as
    the project's own packages in the report."""
    from gpuport.scan.project.own_names import own_packages

    (tmp_path / "secret_project_x").mkdir()
    (tmp_path / "secret_project_x" / "__init__.py").write_text("")
    (tmp_path / "tax_return_2026.py").write_text("")
    root = tmp_path / "proj"
    root.mkdir()
    (root / "main.py").write_text("import torch\n")
    (root / "pyproject.toml").write_text('[project]\nname="x"\n')
    (root / "src").symlink_to("..")
    assert own_packages(root) == {"main"}
    (root / "src").unlink()
    (root / "src" / "mine").mkdir(parents=True)
    (root / "src" / "mine" / "__init__.py").write_text("")
    assert own_packages(root) == {"main", "mine"}  # a real src/ layout still counts


def _index(root: Path, count: int) -> None:
    """A version-2 ``.git/index`` of ``count`` files ``f0 f1 ...``."""
    out = bytearray(b"DIRC" + struct.pack(">II", 2, count))
    for i in range(count):
        name = f"f{i}".encode()
        head = struct.pack(">IIIIIIIIII", 0, 0, 0, 0, 0, 0, 0o100644, 0, 0, 0)
        entry = head + b"\x11" * 20 + struct.pack(">H", len(name)) + name
        out += entry + b"\0" * (8 - len(entry) % 8)
    out += hashlib.sha1(out).digest()  # noqa: S324 - git's own checksum
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "index").write_bytes(bytes(out))


def test_an_index_of_too_many_entries_is_not_read_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """F11: a 128 MB index of 1.79 M entries cost the scan 1.28 GB: the entry count, read from
    the header, is bounded, and an index over it is not read, and the scan says so."""
    from gpuport.scan.project import gitindex

    small, big = tmp_path / "small", tmp_path / "big"
    _index(small, 3)
    _index(big, 40)
    assert gitindex.MAX_INDEX_ENTRIES >= 300_000  # real projects: ~90,000 (Linux)
    assert gitindex.git_facts(small).tracked == {"f0", "f1", "f2"}
    monkeypatch.setattr(gitindex, "MAX_INDEX_ENTRIES", 39)
    facts = gitindex.git_facts(big)
    assert not facts.has_index and not facts.tracked
    assert facts.problem is not None and "40 entries" in facts.problem
    assert gitindex.git_facts(small).problem is None  # a normal index: as before
    from gpuport.scan.engine import ScanOptions, scan_path

    (big / "k.cu").write_text(SHFL)
    report = scan_path(big, ScanOptions(jobs=1))
    assert any(s.path == ".git/index" and "40 entries" in s.reason for s in report.skipped)


def test_findings_of_one_rule_in_one_file_are_capped_and_the_rest_counted(tmp_path: Path) -> None:
    """F13: 5 files of 2 MB of one shuffle line made 240,000 findings (2.2 GB, a 267 MB
    SARIF). At most MOST_PER_RULE_PER_FILE of a rule are listed per file; one info finding
    says how many more there are."""
    from gpuport.render.scan_sarif import render as render_sarif
    from gpuport.scan import engine
    from gpuport.scan.engine import ScanOptions, scan_path

    cap = engine.MOST_PER_RULE_PER_FILE
    root = tmp_path / "p"
    root.mkdir()
    line = "x[0]=__shfl_down_sync(0xffffffff,x[0],1);\n"
    (root / "k.cu").write_text("__global__ void k(int*x){\n" + line * (cap + 37) + "}\n")
    report = scan_path(root, ScanOptions(jobs=1))
    by_rule: dict[str, list[str]] = {}
    for f in report.findings:
        by_rule.setdefault(f.rule_id, []).append(f.message)
    fired = [r for r, msgs in by_rule.items() if len(msgs) > cap]
    assert fired  # the shuffle's rules fired on every line
    for rule in fired:
        msgs = by_rule[rule]
        assert len(msgs) == cap + 1
        notes = [m for m in msgs if "more findings of this rule in this file not listed" in m]
        assert len(notes) == 1 and notes[0].startswith(f"{rule}: 37 more")
        note = next(f for f in report.findings if f.message == notes[0])
        assert note.severity is Severity.INFO and note.location.line == cap + 2
    assert "37 more findings" in render_sarif(report)
