"""Issue 23: the thirty-third re-run (full, a thirteenth reviewer, on 7f71bb6): 9 findings, none
critical or high. F1-F8 (medium): inputs under 10 MB that kept a command busy past 60 s, each a
loop over one thing per another (conda files x texts, backend folder pairs x build texts,
commented-out folders x build texts, sources x skipped files, flags x a Python text, module
statements x the module body), .gitignore compiling outside the walk's CPU budget, and hipify's
uncapped terminal list; F9 (low): a NUL byte in ``model_config`` was an internal error.

The timed tests use the stall tests' CPU-time bound (scaled to this machine, two tries); each
input took minutes, or tens of seconds, on the code before."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from tests.security.test_stalls import _scan, _within

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_f1_many_conda_files_beside_large_docs(tmp_path: Path) -> None:
    """1,500 conda files and 4 MB of pages that talk about conda: each file was searched
    for in every text (60 s for 2,000 files and 8 MB)."""
    files = {"pyproject.toml": '[project]\nname = "pkg"\nversion = "1"\n'}
    line = "conda " + "x" * 70 + " q\n"
    for i in range(4):
        files[f"docs/p{i}.md"] = line * (1_000_000 // len(line))
    for i in range(1500):
        files[f"environment-{i}.yml"] = f"name: env{i}\ndependencies:\n  - numpy\n"
    files["README.md"] = "conda env create -f environment-7.yml\nconda activate env9\n"
    _write(tmp_path, files)
    report = _scan(tmp_path)
    _within(lambda: _scan(tmp_path), 6.0)
    # still judged: the one the README names, and the one whose environment it activates
    scopes = {
        f.location.path: f.scope
        for f in report.findings  # type: ignore[attr-defined]
        if f.location.path.startswith("environment-")
    }
    assert all(s != "core" for p, s in scopes.items() if p not in ("environment-7.yml",))


def test_f1_a_conda_file_named_by_a_page_or_its_environment_stays_core(tmp_path: Path) -> None:
    from gpuport.scan.project.files import Candidate
    from gpuport.scan.project.unnamed_envs import unnamed_conda_files
    from gpuport.scan.rules.base import FileKind

    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "a/environment.yml": "name: alpha\n",
            "b/env.yaml": "name: beta-1.0\n",
            "c/environment.yml": "name: gamma\n",
            "docs/install.md": "see a/environment.yml\n",
            "CMakeLists.txt": 'set(CONDA_ENV_NAME "beta-1.0")\n',
        },
    )
    cands = [
        Candidate(path=tmp_path / rel, rel=rel, kind=FileKind.CONDA_ENV, root=tmp_path)
        for rel in ("a/environment.yml", "b/env.yaml", "c/environment.yml")
    ]
    known = [("CMakeLists.txt", (tmp_path / "CMakeLists.txt").read_text())]
    got = unnamed_conda_files(tmp_path, cands, known, "pyproject.toml")
    # a/environment.yml's name "environment.yml" is named by the page, so c's is too (as before)
    assert set(got) == set()
    del known[0]
    got = unnamed_conda_files(tmp_path, cands, known, "pyproject.toml")
    assert set(got) == {"b/env.yaml"}


def test_f2_many_module_level_flags_in_a_setup_py() -> None:
    """60,000 module-level `X = True` lines (700 KB): `node in tree.body` per assignment."""
    from gpuport.scan.project.opt_in import opt_in_extensions

    text = "".join(f"X{i} = True\n" for i in range(60_000)) + (
        "import sys\nfrom setuptools import setup\n"
        "from torch.utils.cpp_extension import CUDAExtension\n"
        "ext = []\nif '--cuda-ext' in sys.argv:\n    ext = [CUDAExtension('k', ['k.cu'])]\n"
        "setup(name='pkg', ext_modules=ext)\n"
    )
    assert opt_in_extensions(text) == 60_005
    # 12 s: about 2-5 s CPU on the shared VM, more when it is loaded (the stall took minutes)
    _within(lambda: opt_in_extensions(text), 12.0)


def test_f2_a_setup_py_over_the_parse_limit_is_listed_not_analysed(tmp_path: Path) -> None:
    _write(tmp_path, {"setup.py": "X = 1\n" * 200_000, "k.cu": "__global__ void k() {}\n"})
    report = _scan(tmp_path)
    reasons = {s.path: s.reason for s in report.skipped}  # type: ignore[attr-defined]
    assert "too large to analyse" in reasons["setup.py"]


def test_f3_many_backend_folder_pairs() -> None:
    """3,000 `dN/cuda/model.cmake` + `dN/hip/model.cmake` pairs: a pattern and a pass over
    every build text per pair (41 s)."""
    from gpuport.scan.project.backend_folders import backend_folder_builds

    files = {"CMakeLists.txt": "project(x)\n"}
    for i in range(3000):
        files[f"d{i}/cuda/model.cmake"] = "add_subdirectory(z)\n"
        files[f"d{i}/hip/model.cmake"] = "add_subdirectory(z)\n"
    assert backend_folder_builds(files) == ([], {})
    _within(lambda: backend_folder_builds(files), 2.0)
    # chosen by a variable, the HIP one is the build (one pass found it)
    files["CMakeLists.txt"] = "include(${ROOT}/d7/${MODEL}/model.cmake)\n"
    hip, not_read = backend_folder_builds(files)
    assert hip == ["d7/hip/model.cmake"] and list(not_read) == ["d7/cuda/model.cmake"]


def test_f4_many_platform_flags_in_a_large_python_file(tmp_path: Path) -> None:
    """20,000 `IS_HIP_N = torch.version.hip is not None` lines (900 KB): a pattern and a pass
    over the text per flag (58 s under a profiler)."""
    text = "import torch\n" + "".join(
        f"IS_HIP_{i} = torch.version.hip is not None\n" for i in range(20_000)
    )
    _write(tmp_path, {"m.py": text})
    _within(lambda: _scan(tmp_path), 8.0)


def test_f5_many_commented_out_subdirectories_beside_a_large_makefile() -> None:
    """20,000 `#add_subdirectory(dN)` lines beside a 1 MB Makefile: three searches of every
    other build text per folder."""
    from gpuport.scan.project.cmake_calls import commented_out_folders

    files = {
        "CMakeLists.txt": "".join(f"#add_subdirectory(d{i})\n" for i in range(20_000)),
        "Makefile": "all:\n" + "\techo x y z\n" * 90_000 + "\t$(MAKE) -C d5/sub\n",
    }
    got = commented_out_folders(files)
    assert len(got) == 19_999 and "d5" not in got  # the Makefile names d5/
    _within(lambda: commented_out_folders(files), 3.0)


def test_f6_many_unread_sources_beside_many_skipped_files() -> None:
    """20,000 sources the build names against 20,000 skipped files: a walk of the skipped
    list per source."""
    from gpuport.scan.finding import SkippedFile
    from gpuport.scan.ready_evidence import skip_reason as _skip_reason
    from gpuport.scan.ready_evidence import skip_reasons as _skip_reasons

    skipped = [SkippedFile(path=f"b/b{i}.cpp", reason="binary") for i in range(20_000)]
    skipped.append(SkippedFile(path="vendor/", reason="vendored"))
    reasons = _skip_reasons(skipped)
    assert _skip_reason("b/b7.cpp", reasons) == "binary"
    assert _skip_reason("vendor/x/y.cu", reasons) == "vendored"
    assert _skip_reason("src/k.cu", reasons) == ""

    def every() -> None:
        for i in range(20_000):
            _skip_reason(f"src/k{i}.cu", reasons)

    _within(every, 0.5)


def test_f7_compiling_gitignore_files_counts_against_the_walks_budget(
    tmp_path: Path, monkeypatch: object
) -> None:
    """Sibling .gitignore files of thousands of lines, few files to match: compiling them was
    outside the CPU budget (110 folders of 10,000 lines: > 60 s)."""
    import pytest

    from gpuport.scan.project import files as files_mod

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.setattr(files_mod, "IGNORE_BUDGET_S", 0.3)
    _write(tmp_path, {"a.py": "import torch\n"})
    for i in range(12):
        _write(
            tmp_path,
            {
                f"f{i:02d}/.gitignore": "".join(f"/n{i}x{k}*z\n" for k in range(4000)),
                f"f{i:02d}/a.py": "import torch\n",
            },
        )
    report = _scan(tmp_path)
    spent = [s for s in report.skipped if "gitignore patterns took" in s.reason]  # type: ignore[attr-defined]
    assert spent, "the budget stops the walk once reading the patterns has spent it"


def test_f8_hipify_lists_at_most_sixty_lines_of_a_kind_per_file() -> None:
    from gpuport.hipify.run import FileResult, HipifyReport, UnsupportedName
    from gpuport.render.hipify_terminal import MOST_LINES_PER_FILE, render

    uses = [UnsupportedName(name="umax", line=3, col=n, reason="no HIP equivalent")
            for n in range(1, 5001)]  # fmt: skip
    report = HipifyReport(
        root=".", hip_version="6.2", target="gfx942",
        files=[FileResult(path="u.cu", unsupported=uses)],
    )  # fmt: skip
    out = io.StringIO()
    render(report, Console(file=out, width=200, color_system=None))
    lines = [ln for ln in out.getvalue().splitlines() if "unsupported umax" in ln]
    assert len(lines) == MOST_LINES_PER_FILE == 60
    assert "4,940 more unsupported uses not listed (--format json lists all)" in out.getvalue()


def test_f9_a_nul_byte_in_model_config_is_a_clear_error(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "p/pyproject.toml": '[tool.gpuport]\nmodel_config = "a\\u0000b"\n',
            "p/a.py": "import torch\n",
        },
    )
    got = subprocess.run(
        [sys.executable, "-m", "gpuport", "assess", "p"], cwd=tmp_path, capture_output=True,
        text=True, timeout=300, check=False, stdin=subprocess.DEVNULL,
        env={"PYTHONPATH": SRC, "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
             "HOME": str(tmp_path)},
    )  # fmt: skip
    assert got.returncode == 2, got.stderr
    assert "NUL byte" in got.stderr and "internal error" not in got.stderr
