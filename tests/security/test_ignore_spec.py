"""The .gitignore matcher on RE2 (gpuport.scan.project.ignore_spec) answers as pathspec's own
GitIgnoreSpec does on random .gitignores and file paths (issue 23, item 4), and the walk keeps
the files git keeps (folder paths: pathspec reads a pattern's match of a folder itself as a
match of something inside it; git is the reference there)."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pathspec
import pytest

from gpuport.models import GpuportError
from gpuport.scan.project import ignore_spec
from gpuport.scan.project.files import Candidate, walk
from gpuport.scan.project.ignore_spec import IgnoreSpec

PARTS = ["a", "b", "*", "**", "?", "[ab]", "[!a]", "/", "!", "\\", ".o", "build", "x", "dir/",
         "*.cu", "!*.cu", "#c", " ", "\\ ", "é"]  # fmt: skip
NAMES = ["a", "b", "x", "build", "k.cu", "k.o", "dir", "ab", "ba", "xx.o", "é", " "]


def test_matches_pathspec_on_random_gitignores() -> None:
    rng = random.Random(23)  # noqa: S311 - test inputs
    compared = 0
    for block in (ignore_spec.BLOCK, 2):  # also with blocks smaller than the file
        ignore_spec.BLOCK = block
        try:
            for _ in range(400):
                lines = [
                    "".join(rng.choice(PARTS) for _ in range(rng.randint(1, 5)))
                    for _ in range(rng.randint(1, 7))
                ]
                try:
                    ref = pathspec.GitIgnoreSpec.from_lines(lines, backend="simple")
                except ValueError:  # a line that is not a pattern: gitignore_spec leaves it out
                    continue
                mine = IgnoreSpec(lines)
                for _ in range(15):
                    depth = rng.randint(1, 4)
                    path = "/".join(rng.choice(NAMES) for _ in range(depth))
                    assert mine.match_file(path) == ref.match_file(path), (lines, path)
                    compared += 1
        finally:
            ignore_spec.BLOCK = 64
    assert compared > 5_000


def test_a_block_re2_refuses_as_too_large_is_split(monkeypatch: pytest.MonkeyPatch) -> None:
    """A red-team .gitignore (64 lines of ``*a`` and 4,000 ``?``) made a block's alternation too
    large for RE2: the scan stopped with an internal error and 12 MB of regex on stderr. Now
    the block is split until RE2 takes each part; the answers stay pathspec's."""
    from gpuport import textre

    real = textre.TextPattern.check

    def small_only(self: textre.TextPattern) -> textre.TextPattern:
        if self.pattern.count("|(?:") >= 2:  # an alternation of more than two patterns
            raise textre.Unsupported("RE2 refused it: pattern too large")
        return real(self)

    monkeypatch.setattr(textre.TextPattern, "check", small_only)
    rng = random.Random(2323)  # noqa: S311 - test inputs
    for _ in range(60):
        lines = ["".join(rng.choice(PARTS[:12]) for _ in range(3)) for _ in range(9)]
        try:
            ref = pathspec.GitIgnoreSpec.from_lines(lines, backend="simple")
        except ValueError:
            continue
        mine = IgnoreSpec(lines)
        assert all(p.count("|(?:") < 2 for p in (b.pattern for b, _ in mine._blocks))
        for _ in range(20):
            path = "/".join(rng.choice(NAMES) for _ in range(rng.randint(1, 3)))
            assert mine.match_file(path) == ref.match_file(path), (lines, path)


def test_costly_gitignore_lines_are_left_out_and_said(cli: Any, tmp_path: Path) -> None:
    """The red team's .gitignore (256 KB: 64 lines of ``*a`` + 4,000 ``?``) ran 38 s and then
    crashed the scan (exit 4); lines with more wildcards than any real one are now left out
    and said, like lines that are not patterns."""
    from gpuport.scan.project.files import MOST_WILDCARDS

    root = tmp_path / "p"
    root.mkdir()
    lines = ["*a" + "?" * 4000 + f"x{i}" for i in range(64)]
    lines += ["*a" + "?" * (MOST_WILDCARDS + 1), "build/", "*a" + "?" * 10]
    (root / ".gitignore").write_text("\n".join(lines) + "\n")
    (root / "m.py").write_text("import torch\n")
    (root / "build").mkdir()
    (root / "build" / "g.py").write_text("import pycuda\n")
    res = cli("scan", str(root), "--format", "json", "--jobs", "1")
    assert res.code == 0, res.err
    assert "line 1, 2, 3, 4, 5 and 60 more is not a valid pattern" in res.out
    assert "pycuda" not in res.out  # the good lines still apply


_TREE_PARTS = ["a", "b", "*", "**", "?", "[ab]", "/", "!", "k", ".cu", "x"]
_TREE_FILES = ["x.cu", "a/k.cu", "a/b/k.cu", "b/x.cu", "ab/k.cu", "x/a/ab.cu", "k.cu/a.cu",
               "a/x/k.cu", "b/b/b.cu", "xa.cu", "k/k.cu"]  # fmt: skip


def test_the_walk_keeps_what_git_keeps(tmp_path: Path) -> None:
    """Git itself is the reference for which files a .gitignore leaves (``git ls-files
    --others --exclude-standard``): pathspec reads a folder pattern's match of the folder
    itself as a match of something inside it, so "ignore everything but folders and
    ``*.*``" (``*``, ``!/**/``, ``!*.*``: libparanumal, the twenty-sixth sample) hid every
    file in a subfolder."""
    git = shutil.which("git")
    assert git is not None, "the test needs git (installed wherever the repository is cloned)"
    rng = random.Random(26)  # noqa: S311 - test inputs
    idioms = [["*", "!/**/", "!*.*"], ["*", "!*/", "!*.cu"], ["*", "!**/", "!k.cu"]]
    cases = idioms + [
        ["".join(rng.choice(_TREE_PARTS) for _ in range(rng.randint(1, 4)))
         for _ in range(rng.randint(1, 5))]
        for _ in range(60)
    ]  # fmt: skip
    compared = 0
    for i, lines in enumerate(cases):
        root = tmp_path / str(i)
        for rel in _TREE_FILES:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text("__global__ void k() {}\n")
        (root / ".gitignore").write_text("\n".join(lines) + "\n")
        env = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path)}
        subprocess.run([git, "init", "-q", str(root)], check=True, env=env)
        out = subprocess.run(
            [git, "-C", str(root), "ls-files", "--others", "--exclude-standard"],
            check=True, capture_output=True, text=True, env=env,
        ).stdout  # fmt: skip
        kept_by_git = {p for p in out.splitlines() if p.endswith(".cu")}
        try:
            walked = {c.rel for c in walk(root) if isinstance(c, Candidate)}
        except GpuportError:
            continue  # a line gpuport refuses (said so in the scan): not compared
        assert walked == kept_by_git, (lines, sorted(walked ^ kept_by_git))
        compared += 1
    assert compared > 40
