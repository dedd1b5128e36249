"""Forty-fifth re-run (red team 45), findings F1, F2 and F12: the walk keeps what git keeps,
``git ls-files --others --exclude-standard`` being the reference: ``a/**/`` names only the
folders inside ``a``, and ``a/**`` never ``a`` itself, so a later ``!a/k.cu`` applies (F1); a
nested .gitignore's ``!k.cu`` re-includes what the root's ``*.cu`` ignored, the deeper file
deciding, while a folder ignored at any level is not entered (F2); and inline PTX in a macro
of a header template (``config.cuh.in``), which nothing judges, keeps ``ready`` off (F12).
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

from gpuport.models import GpuportError
from gpuport.scan import ScanOptions, scan_path
from gpuport.scan.model import Verdict
from gpuport.scan.project.files import Candidate, walk
from tests.scan.project_files import write

_PTX_KERNEL = (
    '__global__ void k(int *o){ int l; asm volatile("mov.u32 %0, %%laneid;" : "=r"(l)); o[0]=l; }\n'
)
_FILES = ["k.cu", "x.cu", "a/k.cu", "a/x.cu", "a/b/k.cu", "a/b/c/k.cu", "b/k.cu", "b/a/k.cu",
          "sub/k.cu", "sub/x.cu", "sub/a/k.cu", "ab/k.cu", "a/ab/k.cu"]  # fmt: skip


def _git_and_walk(root: Path, gitignores: dict[str, list[str]]) -> tuple[set[str], set[str]]:
    """The .cu files git keeps and those gpuport's walk yields, for a tree of _FILES with the
    given .gitignore files (folder -> lines); the walk's set is empty if it refuses a line."""
    git = shutil.which("git")
    assert git is not None, "the test needs git"
    for rel in _FILES:
        write(root, {rel: "__global__ void k() {}\n"})
    for folder, lines in gitignores.items():
        write(root, {f"{folder}/.gitignore" if folder else ".gitignore": "\n".join(lines) + "\n"})
    env = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root.parent)}
    subprocess.run([git, "init", "-q", str(root)], check=True, env=env)
    out = subprocess.run(
        [git, "-C", str(root), "ls-files", "-z", "--others", "--exclude-standard"],
        check=True, capture_output=True, text=True, env=env,
    ).stdout  # fmt: skip
    kept = {p for p in out.split("\0") if p.endswith(".cu")}
    try:
        walked = {c.rel for c in walk(root) if isinstance(c, Candidate)}
    except GpuportError:
        walked = set()
    return kept, walked


def _same_as_git(tmp: Path, cases: list[dict[str, list[str]]]) -> int:
    compared = 0
    for i, case in enumerate(cases):
        kept, walked = _git_and_walk(tmp / f"t{i}", case)
        if not walked and kept:
            continue  # a line gpuport refuses (said in the scan): not compared
        assert walked == kept, (case, sorted(walked ^ kept))
        compared += 1
    return compared


def _verdict_and_rules(root: Path, files: dict[str, str]) -> tuple[Verdict, set[str]]:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    report = scan_path(write(root, files), ScanOptions(jobs=1))
    return report.verdict, {f.rule_id for f in report.findings}


_CMAKE = "cmake_minimum_required(VERSION 3.18)\nproject(x LANGUAGES CXX)\nadd_library(x {})\n"

_PARTS = ["a", "b", "*", "**", "?", "/", "!", "k", ".cu", "x", "sub", "[ab]", "[!k]"]


def _random_lines(rng: random.Random) -> list[str]:
    return [
        "".join(rng.choice(_PARTS) for _ in range(rng.randint(1, 4)))
        for _ in range(rng.randint(1, 4))
    ]


def test_f1_a_star_star_patterns_name_only_what_is_inside_the_folder(tmp_path: Path) -> None:
    # the red team's project: `a/**/` hid a/k.cu and its GP301 blocker (scan said ready)
    verdict, rules = _verdict_and_rules(
        tmp_path / "scan", {".gitignore": "a/**/\n", "CMakeLists.txt": _CMAKE.format("a/k.cu"),
                            "a/k.cu": _PTX_KERNEL},
    )  # fmt: skip
    assert "GP301" in rules and verdict is not Verdict.READY
    hand = [
        {"": ["a/**/"]},
        {"": ["/a/**/"]},
        {"": ["a/**", "!a/k.cu"]},
        {"": ["a/**", "!*.cu"]},
        {"": ["**/a/**", "!a/k.cu"]},
        {"": ["**/a/**", "!k.cu"]},
        {"": ["a/**/*", "!a/*/"]},
        {"": ["a/**/", "!a/b/"]},
        {"": ["*", "!*/", "!*.cu"]},
        {"": ["*", "!/**/", "!*.*"]},
        {"": ["a/*", "!a/b"]},
        {"": ["a/**/k.cu"]},
        {"": ["a**"]},
        {"": ["a/a**/k.cu"]},
    ]
    rng = random.Random(45)  # noqa: S311 - test inputs
    cases = hand + [{"": _random_lines(rng)} for _ in range(50)]
    assert _same_as_git(tmp_path / "git", cases) > 50


def test_f2_a_nested_negation_reincludes_what_a_parent_gitignore_ignored(tmp_path: Path) -> None:
    # the red team's project: the root's `*.cu` won over sub/.gitignore's `!k.cu`
    verdict, rules = _verdict_and_rules(
        tmp_path / "scan", {".gitignore": "*.cu\n", "sub/.gitignore": "!k.cu\n",
                            "CMakeLists.txt": _CMAKE.format("sub/k.cu"), "sub/k.cu": _PTX_KERNEL},
    )  # fmt: skip
    assert "GP301" in rules and verdict is not Verdict.READY
    hand = [
        {"": ["*.cu"], "sub": ["!k.cu"]},
        {"": ["*.cu"], "sub": ["!*"]},
        {"": ["*.cu"], "sub": ["!/k.cu", "!a/k.cu"]},
        {"": ["*.cu", "!sub/k.cu"], "sub": ["k.cu"]},  # the deeper file decides
        {"": ["sub/"], "sub": ["!k.cu"]},  # an ignored folder is not entered
        {"": ["a/b/"], "a": ["!b/"]},
        {"": ["a/b/"], "a": ["!b/"], "a/b": ["*.cu", "!k.cu"]},
        {"": ["*"], "a": ["!*"], "a/b": ["!k.cu"]},
        {"": ["k.cu"], "a": ["!k.cu"], "a/b": ["k.cu"]},
        {"": ["*.cu"], "a": ["!b/"], "a/b": ["!k.cu"]},
    ]
    rng = random.Random(4545)  # noqa: S311 - test inputs
    folders = ["", "a", "a/b", "sub", "b"]
    cases = hand + [
        {f: _random_lines(rng) for f in rng.sample(folders, rng.randint(2, 4))} for _ in range(50)
    ]
    assert _same_as_git(tmp_path / "git", cases) > 50


_HIP_CMAKE = (
    "cmake_minimum_required(VERSION 3.18)\nproject(x VERSION 1.0 LANGUAGES CXX)\n"
    "configure_file(config.cuh.in config.cuh)\nfind_package(hip REQUIRED)\n"
    "set_source_files_properties(k.cu PROPERTIES LANGUAGE HIP)\nadd_library(x k.cu)\n"
    "set(GPU_TARGETS gfx942)\n"
)


def _template_scan(root: Path, macro: str) -> tuple[Verdict, list[str]]:
    files = {
        "config.cuh.in": f'#pragma once\n#define VERSION "@PROJECT_VERSION@"\n{macro}\n',
        "k.cu": '#include "config.cuh"\n__global__ void k(int *o){ int l = 0; LANE_ID(l); '
        "o[0] = l; }\n",
        "CMakeLists.txt": _HIP_CMAKE,
    }
    report = scan_path(write(root, files), ScanOptions(jobs=1))
    return report.verdict, [s.path for s in report.skipped]


def test_f12_inline_ptx_in_a_header_template_macro_keeps_ready_off(tmp_path: Path) -> None:
    ptx = '#define LANE_ID(x) asm volatile("mov.u32 %0, %%laneid;" : "=r"(x))'
    verdict, skipped = _template_scan(tmp_path / "ptx", ptx)
    assert verdict is not Verdict.READY and "config.cuh.in" in skipped
    # the same macro spread over continued lines, with __asm__
    split = (
        '#define LANE_ID(x) \\\n  __asm__ __volatile__( \\\n    "mov.u32 %0, %%laneid;" : "=r"(x))'
    )
    verdict, skipped = _template_scan(tmp_path / "split", split)
    assert verdict is not Verdict.READY and "config.cuh.in" in skipped
    # controls: a macro without inline PTX leaves the template unlisted and the scan ready
    plain = "#define LANE_ID(x) ((x) = 0)"
    assert _template_scan(tmp_path / "plain", plain) == (Verdict.READY, [])
