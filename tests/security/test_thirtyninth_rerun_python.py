"""The thirty-ninth re-run (on e3b526f), Python, requirements and release-workflow findings:
an import line added above a shebang or a coding cookie (F25, F25b: the shell ran the
script; Python decoded it as UTF-8 where it said UTF-7), a folder name with line breaks
written into a requirements file (F17), and the ROCm release workflow's copies of
project text: a wheel-index line with an odd quote (F1), a build command and ``-D``
options from heredoc data or a comment (F2), a decoy ``on:`` line (F18). gpuport now
writes only what it reads as Python, pip, the shell and GitHub's YAML do, else declines
with the reason."""

from __future__ import annotations

import ast
from pathlib import Path

import yaml

from tests.port.helpers import project, run

_KERNEL = "__global__ void k(float*x){x[0]=1;}\n"
_LOAD = (
    "def main():\n"
    "    from torch.utils.cpp_extension import load\n"
    '    return load(name="k", sources=["k.cu"], extra_cuda_cflags=["--use_fast_math", "-O3"])\n'
)
_SETUP = (
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import CUDAExtension, BuildExtension\n"
    'FLAGS = ["-O3", "--use_fast_math"]\n'
    'setup(name="x", ext_modules=[CUDAExtension("x", ["x.cu"], '
    'extra_compile_args={"nvcc": FLAGS})], cmdclass={"build_ext": BuildExtension})\n'
)


def _reasons(report: object) -> list[str]:
    return [u.reason for u in report.unfixed]  # type: ignore[attr-defined]


# F25 / F25b -----------------------------------------------------------------------------


def test_f25_import_torch_goes_below_the_shebang(tmp_path: Path) -> None:
    script = '#!/usr/bin/env python3\n"touch" "MARKER"\n' + _LOAD
    project(tmp_path, {"build_ext.py": script, "k.cu": _KERNEL})
    run(tmp_path, apply=True, verify=False)
    text = (tmp_path / "build_ext.py").read_text(encoding="utf-8")
    assert text != script  # the flags got their HIP form
    assert text.startswith('#!/usr/bin/env python3\n"touch" "MARKER"\n')
    # beside the function's own torch import (fortieth re-run F14), never above the shebang
    assert "    from torch.utils.cpp_extension import load\n    import torch  " in text
    ast.parse(text)


def test_f25_setup_py_keeps_its_shebang_and_cookie(tmp_path: Path) -> None:
    head = "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n"
    setup = head + _SETUP
    project(tmp_path, {"setup.py": setup, "x.cu": _KERNEL})
    run(tmp_path, apply=True, verify=False)
    text = (tmp_path / "setup.py").read_text(encoding="utf-8")
    assert text != setup and text.startswith(head) and "import torch  " in text


def test_f25_import_shutil_goes_below_the_shebang(tmp_path: Path) -> None:
    tool = '#!/usr/bin/env python3\n# -*- coding: latin-1 -*-\nos = __import__("os")\n'
    tool += 'os.system("nvidia-smi")\n'
    project(tmp_path, {"tool.py": tool})
    run(tmp_path, apply=True, unsafe_fixes=True, verify=False)
    text = (tmp_path / "tool.py").read_text(encoding="utf-8")
    assert text.startswith("#!/usr/bin/env python3\n# -*- coding: latin-1 -*-\n")
    assert "amd-smi" in text and "import shutil" in text
    ast.parse(text)


def test_f25b_a_utf7_cookie_declines_the_file(tmp_path: Path) -> None:
    script = (
        "#!/usr/bin/env python3\n# -*- coding: utf-7 -*-\nACM = 0\n"
        'x = 1 +ACM- 1; __import__("os").system("touch MARKER")\n' + _LOAD
    )
    setup = "# vim: set fileencoding=utf-7 :\n" + _SETUP
    project(tmp_path, {"build_ext.py": script, "setup.py": setup, "k.cu": _KERNEL,
                       "x.cu": _KERNEL})  # fmt: skip
    report = run(tmp_path, apply=True, verify=False)
    assert (tmp_path / "build_ext.py").read_text(encoding="utf-8") == script
    assert (tmp_path / "setup.py").read_text(encoding="utf-8") == setup
    assert any("coding cookie" in r for r in _reasons(report))


def test_cookies_and_import_places() -> None:
    from gpuport.port.py_imports import foreign_cookie, import_at  # new with the fix

    assert foreign_cookie("# -*- coding: utf-8 -*-\nx = 'é'\n") is None
    assert foreign_cookie("#!/bin/python\n# coding=latin-1\nx = 1\n") is None
    assert foreign_cookie("# coding=latin-1\nx = 'é'\n") is not None
    assert foreign_cookie("#!/bin/python\n# -*- coding: utf-7 -*-\nx = 1\n") is not None
    assert foreign_cookie("# coding: no-such-codec\n") is not None
    assert foreign_cookie("x = 1\ny = 2\n# coding: utf-7\n") is None  # line 3: not read
    line = "import torch\n"

    def at(text: str) -> int | None:
        starts = [0]
        for ln in text.splitlines(keepends=True):
            starts.append(starts[-1] + len(ln))
        got = import_at(ast.parse(text), text, starts, line)
        return None if got is None else got[0]

    assert at("#!/bin/sh\nx = 1\n") == len("#!/bin/sh\n")
    assert at('"""doc"""\nx = 1\n') == len('"""doc"""\n')
    assert at("from __future__ import annotations\nx = 1\n") == len(
        "from __future__ import annotations\n"
    )
    assert at("import os; x = (\n  1)\n") is None  # the import shares a line
    assert at("import os \\\n  ; y = 1\n") is None  # a backslash continues the line


# F17 ------------------------------------------------------------------------------------


def test_f17_a_folder_name_with_line_breaks_is_not_written(tmp_path: Path) -> None:
    folder = "app\n--pre\nattacker-package==6.6.6\n#"
    main = "import torch\nx = torch.zeros(1).cuda()\n"
    project(tmp_path, {f"{folder}/requirements.txt": "torch>=2.0\nnumpy\n",
                       f"{folder}/main.py": main})  # fmt: skip
    report = run(tmp_path, apply=True, verify=False)
    for path in tmp_path.rglob("*rocm*"):
        if path.is_file():
            assert "attacker-package" not in path.read_text(encoding="utf-8")
    assert any("path holds characters" in r for r in _reasons(report))


# F1 / F2 / F18: the ROCm release workflow -----------------------------------------------

_CUDA_WF = """\
name: Build Wheels (CUDA)
on: workflow_dispatch
permissions:
  contents: write
jobs:
  build_wheels:
    runs-on: ubuntu-22.04
    strategy:
      matrix:
        pyver: ["3.10", "3.11"]
    steps:
      - uses: actions/checkout@v4
      - name: Build Wheel
        run: |
          export CMAKE_ARGS="-DGGML_CUDA=on"
          python -m build --wheel
      - uses: softprops/action-gh-release@v2
        with:
          files: dist/*
          tag_name: ${{ github.ref_name }}-cu124
"""
_INDEX_WF = """\
name: Wheels Index
on:
  workflow_run:
    workflows: ["Build Wheels (CUDA)"]
    types: [completed]
jobs:
  index:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Build index
        run: |
          echo building index
          ./scripts/releases-to-pep-503.sh index/whl/cu124 '-cu124$'; : '
          touch "$MARKER"
          '
"""
_CMAKE = "cmake_minimum_required(VERSION 3.18)\nproject(x LANGUAGES CXX)\n"


def _rocm_workflow(root: Path) -> str | None:
    found = [p for p in (root / ".github" / "workflows").iterdir() if "rocm" in p.name]
    return found[0].read_text(encoding="utf-8") if found else None


def test_f1_an_index_line_with_an_odd_quote_is_not_copied(tmp_path: Path) -> None:
    project(tmp_path, {".github/workflows/build-wheels-cuda.yaml": _CUDA_WF,
                       ".github/workflows/generate-index.yaml": _INDEX_WF,
                       "CMakeLists.txt": _CMAKE})  # fmt: skip
    report = run(tmp_path, apply=True, unsafe_fixes=True, verify=False)
    index = (tmp_path / ".github/workflows/generate-index.yaml").read_text(encoding="utf-8")
    assert index == _INDEX_WF
    assert _rocm_workflow(tmp_path) is not None  # the workflow itself is still written
    fix = next(f for f in report.fixes if f.id.startswith("rocm-release:"))
    assert "wheel index entry not added" in (fix.note or "")


def test_f1_a_plain_index_line_is_still_copied(tmp_path: Path) -> None:
    plain = _INDEX_WF.replace(
        "'-cu124$'; : '\n          touch \"$MARKER\"\n          '\n", "'-cu124$'\n"
    )
    project(tmp_path, {".github/workflows/build-wheels-cuda.yaml": _CUDA_WF,
                       ".github/workflows/generate-index.yaml": plain,
                       "CMakeLists.txt": _CMAKE})  # fmt: skip
    run(tmp_path, apply=True, unsafe_fixes=True, verify=False)
    index = (tmp_path / ".github/workflows/generate-index.yaml").read_text(encoding="utf-8")
    assert "index/whl/rocm" in index and '"Build Wheels (CUDA)", "Build Wheels (ROCm)"]' in index


def test_f2_a_build_command_in_heredoc_data_declines(tmp_path: Path) -> None:
    wf = _CUDA_WF.replace(
        "      - name: Build Wheel\n",
        "      - name: Release notes\n        run: |\n          cat > notes.md <<'NOTES'\n"
        "          pip wheel --index-url=https://mirror.invalid/simple .\n          NOTES\n"
        "      - name: Build Wheel\n",
    )
    project(tmp_path, {".github/workflows/build-wheels-cuda.yaml": wf, "CMakeLists.txt": _CMAKE})
    report = run(tmp_path, apply=True, unsafe_fixes=True, verify=False)
    assert _rocm_workflow(tmp_path) is None
    assert any("heredoc" in r for r in _reasons(report))


def test_f2_an_option_in_a_comment_declines(tmp_path: Path) -> None:
    wf = _CUDA_WF.replace(
        'export CMAKE_ARGS="-DGGML_CUDA=on"',
        'export CMAKE_ARGS="-DGGML_CUDA=on" # -DCMAKE_PROJECT_INCLUDE=/tmp/evil.cmake',
    )
    project(tmp_path, {".github/workflows/build-wheels-cuda.yaml": wf, "CMakeLists.txt": _CMAKE})
    report = run(tmp_path, apply=True, unsafe_fixes=True, verify=False)
    text = _rocm_workflow(tmp_path)
    assert text is None or "CMAKE_PROJECT_INCLUDE" not in text
    assert any("comment" in r for r in _reasons(report))


def test_f2_options_that_load_code_are_not_carried(tmp_path: Path) -> None:
    wf = _CUDA_WF.replace(
        'export CMAKE_ARGS="-DGGML_CUDA=on"',
        'export CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_TOOLCHAIN_FILE=t.cmake -DGGML_AVX2=off"',
    )
    project(tmp_path, {".github/workflows/build-wheels-cuda.yaml": wf, "CMakeLists.txt": _CMAKE})
    run(tmp_path, apply=True, unsafe_fixes=True, verify=False)
    text = _rocm_workflow(tmp_path)
    assert text is not None and "-DGGML_AVX2=off" in text and "TOOLCHAIN" not in text


def test_f18_a_decoy_on_line_is_not_the_trigger(tmp_path: Path) -> None:
    wf = _CUDA_WF.replace(
        "on: workflow_dispatch\npermissions:\n  contents: write\n",
        'env: {\n  BUILD_TYPE: Release,\non: "pull_request_target",\n'
        "permissions: write-all\n}\non :\n  workflow_dispatch:\npermissions:\n  contents: read\n",
    )
    project(tmp_path, {".github/workflows/build-wheels-cuda.yaml": wf, "CMakeLists.txt": _CMAKE})
    run(tmp_path, apply=True, unsafe_fixes=True, verify=False)
    text = _rocm_workflow(tmp_path)
    assert text is not None and "pull_request_target" not in text and "write-all" not in text
    loaded = yaml.safe_load(text)
    assert loaded[True] == {"workflow_dispatch": None}  # PyYAML reads `on` as True
    assert loaded["permissions"] == {"contents": "read"}


def test_f18_the_real_on_block_is_still_copied(tmp_path: Path) -> None:
    wf = _CUDA_WF.replace(
        "on: workflow_dispatch\n",
        "on:\n  push:\n    tags: ['v*']  # releases\n  workflow_dispatch:\n\n# notes\n",
    ).replace(
        "          python -m build --wheel\n",
        '          echo "v=$(python -c "print(1)")" >> $GITHUB_ENV\n'
        "          python -m build --wheel\n",
    )
    project(tmp_path, {".github/workflows/build-wheels-cuda.yaml": wf, "CMakeLists.txt": _CMAKE})
    run(tmp_path, apply=True, unsafe_fixes=True, verify=False)
    text = _rocm_workflow(tmp_path)
    assert text is not None
    assert yaml.safe_load(text)[True] == {"push": {"tags": ["v*"]}, "workflow_dispatch": None}
