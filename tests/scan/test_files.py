"""Which files a scan reads: classification, ignores, vendored folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.scan.project.files import Candidate, Skip, classify, walk
from gpuport.scan.rules.base import FileKind


@pytest.mark.parametrize(
    ("rel", "kind"),
    [
        ("requirements.txt", FileKind.REQUIREMENTS),
        ("requirements-gpu.txt", FileKind.REQUIREMENTS),
        ("requirements/base.in", FileKind.REQUIREMENTS),
        ("constraints.txt", FileKind.REQUIREMENTS),
        ("notes.txt", None),
        ("pyproject.toml", FileKind.PYPROJECT),
        ("pkg/setup.py", FileKind.SETUP_PY),
        ("setup.cfg", FileKind.SETUP_CFG),
        ("environment.yml", FileKind.CONDA_ENV),
        ("Dockerfile", FileKind.DOCKERFILE),
        ("Dockerfile.rocm", FileKind.DOCKERFILE),
        ("docker/gpu.dockerfile", FileKind.DOCKERFILE),
        ("docker-compose.yml", FileKind.COMPOSE),
        ("compose.rocm.yaml", FileKind.COMPOSE),
        ("src/kernel.cu", FileKind.NATIVE),
        ("include/x.cuh", FileKind.NATIVE),
        ("CMakeLists.txt", FileKind.CMAKE),
        ("cmake/cuda.cmake", FileKind.CMAKE),
        ("Makefile", FileKind.MAKEFILE),
        ("build/rules.mk", FileKind.MAKEFILE),
        ("kernels/k.ptx", FileKind.GPU_BINARY),
        ("app.py", FileKind.PYTHON),
        ("README.md", None),
    ],
)
def test_classify(rel: str, kind: FileKind | None) -> None:
    assert classify(rel) is kind


def _rels(root: Path, **kw: object) -> list[str]:
    return [c.rel for c in walk(root, **kw) if isinstance(c, Candidate)]  # type: ignore[arg-type]


def test_nested_gitignore_vendored_and_env_folders(tmp_path: Path) -> None:
    for rel in [
        "a.py", "gen/out.py", "sub/keep.py", "sub/skip.py", "sub/deep/also.py",
        "third_party/lib.cu", "pkg/_vendor/quack/k.py", ".venv/lib.py", "node_modules/x.py",
        "build/x.py",
        "venv/lib/x.py", "env/cuda_env.py", "src/pkg/build/ops.py", "deps/x.py",
    ]:  # fmt: skip
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / ".gitignore").write_text("gen/\n")
    (tmp_path / "sub" / ".gitignore").write_text("skip.py\ndeep/\n")
    assert sorted(_rels(tmp_path)) == [
        "a.py", "deps/x.py", "env/cuda_env.py", "pyproject.toml", "src/pkg/build/ops.py",
        "sub/keep.py",
    ]  # fmt: skip
    reasons = {s.rel: s.reason for s in walk(tmp_path) if isinstance(s, Skip)}
    assert reasons == {
        "build/": "build output: not scanned",
        "node_modules/": "installed third-party packages: not scanned",
        "pkg/_vendor/": "vendored code: not scanned (--include-vendored scans it)",
        "third_party/": "vendored code: not scanned (--include-vendored scans it)",
        "venv/": "virtual environment: not scanned",
    }
    assert "third_party/lib.cu" in _rels(tmp_path, include_vendored=True)
    kept = _rels(tmp_path, exclude=("sub/", "src/", "env/", "deps/"))
    assert kept == ["a.py", "pyproject.toml"]


def test_undecodable_file_names_are_skipped_not_fatal(tmp_path: Path) -> None:
    import os

    os.makedirs(os.path.join(os.fsencode(tmp_path), b"d\xff"))
    with open(os.path.join(os.fsencode(tmp_path), b"bad\xfe.py"), "wb") as fh:
        fh.write(b"import pynvml\n")
    reasons = {s.rel: s.reason for s in walk(tmp_path) if isinstance(s, Skip)}
    assert reasons == {
        "bad\\xfe.py": "file name is not valid UTF-8",
        "d\\xff": "file name is not valid UTF-8",
    }


def test_requirements_folder_counts_when_it_is_the_root(tmp_path: Path) -> None:
    folder = tmp_path / "requirements"
    folder.mkdir()
    (folder / "base.txt").write_text("flash-attn\n")
    assert [c.kind for c in walk(folder) if isinstance(c, Candidate)] == [FileKind.REQUIREMENTS]
    only = [c.kind for c in walk(folder / "base.txt") if isinstance(c, Candidate)]
    assert only == [FileKind.REQUIREMENTS]


def test_fifo_is_skipped_without_blocking(tmp_path: Path) -> None:
    import os

    from gpuport.scan.project.files import read_text

    os.mkfifo(tmp_path / "pipe.py")
    got = read_text(tmp_path / "pipe.py")
    assert isinstance(got, Skip)
    assert got.reason == "not a regular file (pipe, socket or device)"


def test_gitignore_negation(tmp_path: Path) -> None:
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text("x = 1\n")
    (tmp_path / ".gitignore").write_text("*.py\n!b.py\n")
    assert _rels(tmp_path) == ["b.py"]


def test_single_file_and_unknown_single_file(tmp_path: Path) -> None:
    cu = tmp_path / "k.cu"
    cu.write_text("__global__ void k() {}\n")
    assert [c.rel for c in walk(cu) if isinstance(c, Candidate)] == ["k.cu"]
    other = tmp_path / "notes.md"
    other.write_text("hi")
    assert [s.reason for s in walk(other) if isinstance(s, Skip)] == [
        "not a file kind gpuport scans"
    ]


@pytest.mark.parametrize("spelling", [".", "./", "proj/..", "{abs}"])
def test_relative_paths_do_not_depend_on_how_the_root_is_spelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spelling: str
) -> None:
    for rel in ["top.py", "src/pkg/deep.py", "csrc/k.cu"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    (tmp_path / "proj").mkdir()
    monkeypatch.chdir(tmp_path)
    root = Path(spelling.format(abs=tmp_path))
    assert sorted(_rels(root)) == ["csrc/k.cu", "src/pkg/deep.py", "top.py"]
