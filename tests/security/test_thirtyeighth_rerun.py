"""Issue 23: the thirty-eighth re-run (short, on cfd027b, an eighteenth reviewer): six
findings of one cause -- ``str.splitlines`` breaks lines at characters (U+2028, U+0085, form
feed ...) that Python, C++, Docker, CMake, pip and YAML do not (or not all), so a line gpuport
placed by its reading landed inside a comment by theirs and the comment's tail became live:
setup.py and Python edits (by a safe fix), a Dockerfile's ROCm copy (safe), the ROCm wheel
workflow's copied blocks, requirement comments naming a folder, ``hipify --annotate``. A text
holding such a break is now neither edited nor written (``gpuport.linebreaks``)."""

from __future__ import annotations

from pathlib import Path

from gpuport.linebreaks import odd_line_break
from tests.port.helpers import project, run

_PAYLOAD = "__import__('os').system('touch pwned')"


def test_odd_line_breaks_are_named() -> None:
    assert odd_line_break("a\nb\r\nc") is None
    assert odd_line_break("a\u2028b") == "U+2028"
    assert odd_line_break("a\x0cb") == "U+000C"
    assert odd_line_break("a\rb") == "a lone carriage return"


def test_f2_a_setup_py_with_u2028_is_not_edited(tmp_path: Path) -> None:
    setup = (
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import CUDAExtension, BuildExtension  # notes\u2028"
        + _PAYLOAD + "\n"
        'FLAGS = ["-O3", "--use_fast_math"]\n'
        'setup(name="x", ext_modules=[CUDAExtension("x", ["x.cu"], '
        'extra_compile_args={"nvcc": FLAGS})], cmdclass={"build_ext": BuildExtension})\n'
    )  # fmt: skip
    project(tmp_path, {"setup.py": setup, "x.cu": "__global__ void k(float*x){x[0]=1;}\n"})
    run(tmp_path, apply=True)
    assert (tmp_path / "setup.py").read_text(encoding="utf-8") == setup


def test_f3_a_python_file_with_u2028_is_not_edited(tmp_path: Path) -> None:
    tool = "import os  # helpers\u2028" + _PAYLOAD + '\nos.system("nvidia-smi")\n'
    project(tmp_path, {"tool.py": tool})
    run(tmp_path, apply=True, unsafe_fixes=True)
    assert (tmp_path / "tool.py").read_text(encoding="utf-8") == tool


def test_f4_f6_written_files_hold_no_odd_break(tmp_path: Path) -> None:
    folder = "s\u2028--pre\u2028"
    train = "import torch\nx = torch.zeros(3).cuda()\n"
    project(
        tmp_path / "a", {f"{folder}/requirements.txt": "torch>=2.1\n", f"{folder}/train.py": train}
    )
    run(tmp_path / "a", apply=True)
    dockerfile = (
        "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\nCOPY requirements.txt .\n"
        "# deps\x0cRUN pip install -r requirements.txt && echo MARKER\n"
        "RUN pip install -r requirements.txt\nCOPY . .\n"
    )
    project(tmp_path / "b", {"Dockerfile": dockerfile, "requirements.txt": "torch>=2.1\n",
                             "train.py": "import torch\nx = torch.zeros(3).cuda()\n"})  # fmt: skip
    run(tmp_path / "b", apply=True)
    for path in [*(tmp_path / "a").rglob("*rocm*"), *(tmp_path / "b").rglob("*rocm*")]:
        if path.is_file():
            assert odd_line_break(path.read_text(encoding="utf-8")) is None, path


def test_f1_a_workflow_with_a_form_feed_is_not_copied(tmp_path: Path) -> None:
    wf = (
        "name: Build CUDA wheels\non:\n  push:\n    branches: [main] # note\x0c"
        "  workflow_run: {workflows: [X], types: [completed]}\njobs:\n  build:\n"
        "    runs-on: ubuntu-22.04\n    steps:\n      - uses: actions/checkout@v4\n"
        '      - run: CMAKE_ARGS="-DGGML_CUDA=on" python -m build --wheel\n'
    )
    project(tmp_path, {".github/workflows/build-cuda.yml": wf,
                       "CMakeLists.txt": "project(x LANGUAGES CXX CUDA)\n"})  # fmt: skip
    run(tmp_path, apply=True, unsafe_fixes=True)
    written = [p for p in (tmp_path / ".github" / "workflows").iterdir() if "rocm" in p.name]
    assert all("workflow_run" not in p.read_text() for p in written)


def test_f5_annotate_adds_nothing_to_a_source_with_a_form_feed(tmp_path: Path) -> None:
    from gpuport.hipify.run import hipify_path

    src = (
        "__global__ void k(unsigned *o){\n  // lanes\x0c  o[0] = 42;\n"
        "  o[0] = __ballot_sync(0xffffffff, 1);\n}\n"
    )
    (tmp_path / "k.cu").write_text(src)
    out = hipify_path(tmp_path / "k.cu", hip_version="6.4", annotate=True).files[0].text or ""
    assert "// lanes\x0c  o[0] = 42;" in out and "gpuport:" not in out.split("\x0c")[0][-40:]
