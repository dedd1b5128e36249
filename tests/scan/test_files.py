"""Which files a scan reads: classification, ignores, vendored folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.scan.files import Candidate, Skip, classify, walk
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
        "a.py",
        "gen/out.py",
        "sub/keep.py",
        "sub/skip.py",
        "sub/deep/also.py",
        "third_party/lib.cu",
        ".venv/lib.py",
        "node_modules/x.py",
        "build/x.py",
    ]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    (tmp_path / ".gitignore").write_text("gen/\n")
    (tmp_path / "sub" / ".gitignore").write_text("skip.py\ndeep/\n")
    assert _rels(tmp_path) == ["a.py", "sub/keep.py"]
    assert "third_party/lib.cu" in _rels(tmp_path, include_vendored=True)
    assert _rels(tmp_path, exclude=("sub/",)) == ["a.py"]


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
