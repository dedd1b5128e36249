"""The ROCm release workflow family (``port.fix_release``): a ROCm wheel workflow beside a
CUDA one that hands a vendored build a CMake switch, and its wheel-index entries (J32
GenieX #90, J35 llama-cpp-python #2252)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import yaml

from gpuport.knowledge.release_switches import load_release_switches, parse
from gpuport.models import GpuportError
from gpuport.port.fix_release import RULE
from tests.port.helpers import created, fix_ids, project, run

CUDA_WF = """\
name: Build Wheels (CUDA)

on: workflow_dispatch

permissions:
  contents: write

jobs:
  build_wheels:
    name: Build Wheel ${{ matrix.os }} ${{ matrix.cuda }}
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-22.04, windows-2022]
        pyver: ["3.10", "3.11"]
        cuda: ["12.4.1"]
    defaults:
      run:
        shell: pwsh
    steps:
      - uses: actions/checkout@v4
        with:
          submodules: "recursive"
      - name: Build Wheel
        run: |
          $env:CMAKE_ARGS = "-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=all -DCUDAToolkit_ROOT=$r"
          $env:CMAKE_ARGS = $env:CMAKE_ARGS + ' -DGGML_AVX2=off -DGGML_FMA=off'
          python -m build --wheel
          # write the build tag to the output
          Write-Output "CUDA_VERSION=124" >> $env:GITHUB_ENV
      - uses: softprops/action-gh-release@v2
        if: startsWith(github.ref, 'refs/tags/')
        with:
          files: dist/*
          tag_name: ${{ github.ref_name }}-cu${{ env.CUDA_VERSION }}
"""
INDEX_WF = """\
name: Wheels Index

on:
  workflow_run:
    workflows: ["Release", "Build Wheels (CUDA)", "Build Wheels (Metal)"]
    types:
      - completed

jobs:
  deploy:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Build
        run: |
          ./scripts/releases-to-pep-503.sh index/whl/cpu '^[v]?[0-9]+\\.[0-9]+\\.[0-9]+$'
          # ./scripts/releases-to-pep-503.sh index/whl/cu121 '^[v]?[0-9]+\\.[0-9]+\\.[0-9]+-cu121$'
          ./scripts/releases-to-pep-503.sh index/whl/cu124 '^[v]?[0-9]+\\.[0-9]+\\.[0-9]+-cu124$'
          ./scripts/releases-to-pep-503.sh index/whl/metal '^[v]?[0-9]+\\.[0-9]+\\.[0-9]+-metal$'
"""
SCRIPT = """\
#!/bin/bash
root_dir=index/whl
if [ -n "$root_dir" ]; then
    echo "    <a href=\\"cpu/\\">CPU</a><br>" >> "$root_dir/index.html"
    # echo "    <a href=\\"cu121/\\">CUDA 12.1</a><br>" >> "$root_dir/index.html"
    echo "    <a href=\\"cu124/\\">CUDA 12.4</a><br>" >> "$root_dir/index.html"
    echo "  </body>" >> "$root_dir/index.html"
fi
"""
README_HIP = 'To build for AMD GPUs:\n\n    CMAKE_ARGS="-DGGML_HIP=on" pip install demo\n'


def _files(**extra: str) -> dict[str, str]:
    files = {
        "pyproject.toml": '[project]\nname = "demo"\nversion = "0.1"\n',
        ".gitmodules": '[submodule "vendor/llama.cpp"]\n\tpath = vendor/llama.cpp\n',
        ".github/workflows/build-wheels-cuda.yaml": CUDA_WF,
        ".github/workflows/generate-index-from-release.yaml": INDEX_WF,
        "scripts/releases-to-pep-503.sh": SCRIPT,
        "README.md": README_HIP,
    }
    files.update(extra)
    return {k: v for k, v in files.items() if v}


def test_rocm_wheel_workflow_beside_the_cuda_one_and_its_index_entries(tmp_path: Path) -> None:
    root = project(tmp_path, _files())
    report = run(root, unsafe_fixes=True, apply=True, verify=False)
    fix = next(f for f in report.fixes if f.id.startswith("rocm-release:"))
    assert fix.id == "rocm-release:.github/workflows/build-wheels-rocm.yaml"
    assert fix.applied and not fix.safe and "release policy" in fix.why
    wf_text = (root / ".github/workflows/build-wheels-rocm.yaml").read_text()
    wf = yaml.safe_load(wf_text)
    assert wf["name"] == "Build Wheels (ROCm)"
    job = wf["jobs"]["build_wheels"]
    assert job["container"] == "rocm/dev-ubuntu-22.04:6.4-complete"
    assert job["runs-on"] == "ubuntu-22.04"
    assert job["strategy"]["matrix"]["pyver"] == ["3.10", "3.11"]
    build = next(s for s in job["steps"] if s.get("name") == "Build Wheel")["run"]
    # the README's HIP switch; the CUDA-only options dropped, the others kept
    assert "-DGGML_HIP=on -DGGML_AVX2=off -DGGML_FMA=off -DAMDGPU_TARGETS=" in build
    assert "CUDA" not in build and "GGML_HIPBLAS" not in build
    assert "python -m build --wheel" in build
    release = next(s for s in job["steps"] if "action-gh-release" in s.get("uses", ""))
    assert release["with"]["tag_name"] == "${{ github.ref_name }}-rocm64"
    assert release["if"] == "startsWith(github.ref, 'refs/tags/')"
    # the CUDA workflow is byte for byte the same
    assert (root / ".github/workflows/build-wheels-cuda.yaml").read_text() == CUDA_WF
    index = (root / ".github/workflows/generate-index-from-release.yaml").read_text()
    assert '"Build Wheels (Metal)", "Build Wheels (ROCm)"]' in index
    assert (
        "index/whl/cu124 '^[v]?[0-9]+\\.[0-9]+\\.[0-9]+-cu124$'\n"
        "          ./scripts/releases-to-pep-503.sh index/whl/rocm64 "
        "'^[v]?[0-9]+\\.[0-9]+\\.[0-9]+-rocm64$'\n"
    ) in index
    script = (root / "scripts/releases-to-pep-503.sh").read_text()
    assert '<a href=\\"cu124/\\">CUDA 12.4</a>' in script
    assert (
        '    echo "    <a href=\\"rocm64/\\">ROCm 6.4</a><br>" >> "$root_dir/index.html"\n'
        in script
    )
    # every hunk names the finding: the CUDA switch's line in the CUDA workflow
    line = next(i for i, x in enumerate(CUDA_WF.splitlines(), 1) if "-DGGML_CUDA=on" in x)
    label = f"{RULE} .github/workflows/build-wheels-cuda.yaml:{line}"
    hunks = [h for f in report.files for h in f.hunks]
    assert len(hunks) == 4 and all(h.findings == [label] for h in hunks)
    assert run(root, unsafe_fixes=True).files == []  # idempotent


def test_safe_run_lists_the_workflow_but_writes_nothing(tmp_path: Path) -> None:
    root = project(tmp_path, _files())
    report = run(root)
    assert report.files == []
    assert "rocm-release:.github/workflows/build-wheels-rocm.yaml" in fix_ids(report, applied=False)


@pytest.mark.parametrize(
    ("extra", "names"),
    [
        ({}, ["-DGGML_HIP=on"]),  # the README's build
        ({"README.md": ""}, ["-DGGML_HIP=on", "-DGGML_HIPBLAS=on"]),  # unknown: both names
        (
            {
                "README.md": "",
                "vendor/llama.cpp/CMakeLists.txt": 'option(GGML_HIPBLAS "ggml: use hipBLAS" OFF)\n',
            },
            ["-DGGML_HIPBLAS=on"],
        ),  # the vendored build's own option
    ],
)
def test_the_hip_switch_comes_from_the_docs_or_the_vendored_build(
    tmp_path: Path, extra: dict[str, str], names: list[str]
) -> None:
    root = project(tmp_path, _files(**extra))
    text = created(run(root, unsafe_fixes=True), ".github/workflows/build-wheels-rocm.yaml")
    args = next(x for x in text.splitlines() if "export CMAKE_ARGS" in x)
    assert all(n in args for n in names)
    for other in {"-DGGML_HIP=on", "-DGGML_HIPBLAS=on"} - set(names):
        assert other not in args


@pytest.mark.parametrize(
    ("change", "reported"),
    [
        # CPU wheels only: the CUDA switch is off
        (lambda t: t.replace("-DGGML_CUDA=on", "-DGGML_CUDA=off"), False),
        # a test workflow that builds no wheel
        (lambda t: t.replace("python -m build --wheel", "pytest"), False),
        # a CUDA switch the table does not know: a report line only
        (lambda t: t.replace("-DGGML_CUDA=on", "-DFOO_CUDA=on"), True),
        # CPU wheels beside a CUDA toolkit action: CUDA artefacts, no switch to swap
        (
            lambda t: t.replace("-DGGML_CUDA=on", "-DGGML_CUDA=off").replace(
                "      - name: Build Wheel\n",
                "      - uses: Jimver/cuda-toolkit@v0.2.15\n      - name: Build Wheel\n",
            ),
            True,
        ),
        # Windows only: the HIP SDK installer is a person's job
        (lambda t: t.replace("[ubuntu-22.04, windows-2022]", "[windows-2022]"), True),
    ],
)
def test_no_workflow_without_a_known_switch_on_a_linux_wheel_build(
    tmp_path: Path, change: object, reported: bool
) -> None:
    wf = change(CUDA_WF)  # type: ignore[operator]
    root = project(tmp_path, _files(**{".github/workflows/build-wheels-cuda.yaml": wf}))
    report = run(root, unsafe_fixes=True)
    assert report.files == []
    lines = [u for u in report.unfixed if u.finding.rule_id == RULE]
    assert bool(lines) is reported
    if reported:
        assert lines[0].reason.startswith("no ROCm workflow: ")


def test_a_hip_switch_turned_off_is_no_rocm_build(tmp_path: Path) -> None:
    cpu = CUDA_WF.replace("-DGGML_CUDA=on", "-DGGML_CUDA=off -DGGML_HIP=off")
    cpu = cpu.replace("(CUDA)", "(CPU)")
    root = project(tmp_path, _files(**{".github/workflows/build-wheels-cpu.yaml": cpu}))
    files = [f.path for f in run(root, unsafe_fixes=True).files]
    assert ".github/workflows/build-wheels-rocm.yaml" in files


def test_no_workflow_where_the_project_builds_for_rocm_already(tmp_path: Path) -> None:
    rocm = CUDA_WF.replace("-DGGML_CUDA=on", "-DGGML_HIP=on").replace("CUDA)", "ROCm)")
    root = project(tmp_path, _files(**{".github/workflows/build-wheels-hip.yaml": rocm}))
    assert run(root, unsafe_fixes=True).files == []


def test_no_workflow_without_actions(tmp_path: Path) -> None:
    root = project(tmp_path, {"README.md": README_HIP, "CMakeLists.txt": "project(x)\n"})
    report = run(root, unsafe_fixes=True)
    assert report.files == [] and not [u for u in report.unfixed if u.finding.rule_id == RULE]


def test_release_switches_sourced_and_dated() -> None:
    table = load_release_switches()
    assert table.hip_for("GGML_CUDA") is not None
    assert table.hip_for("GGML_CUDA").hip == ("GGML_HIP", "GGML_HIPBLAS")  # type: ignore[union-attr]
    for entry in table.switches:
        assert entry.sources and entry.checked >= dt.date(2026, 11, 1)
    assert table.hip_for("NOT_A_SWITCH") is None
    with pytest.raises(GpuportError, match="sources"):
        parse({"switch": [{"cuda": "A_CUDA", "hip": ["A_HIP"], "summary": "x",
                           "checked": dt.date(2026, 1, 1)}],
               "release": {"amdgpu_targets": "gfx90a", "sources": ["https://x"],
                           "checked": dt.date(2026, 1, 1)}})  # fmt: skip
    with pytest.raises(GpuportError, match="amdgpu_targets"):
        parse({"release": {"amdgpu_targets": "sm_80", "sources": ["https://x"],
                           "checked": dt.date(2026, 1, 1)}})  # fmt: skip
