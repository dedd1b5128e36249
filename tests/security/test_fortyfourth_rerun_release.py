"""The forty-fourth re-run (on bc10c27), port findings F1, F2 and F3 of the unsafe ROCm
release workflow (``port/release_gates``): a tag gate the CUDA release job runs through
``make check-release``, ``python -m scripts.check_release`` or ``sh check_release`` was
dropped, so the ROCm copy published from any dispatched branch (F1); so was one in a local
action nested in another local action (F2); and following the job's files resolved every
token against every ``working-directory:`` of the job, quadratic time (F3: 42 s for a
158 KB workflow). Each gate now declines the ROCm workflow with the reason, and the work is
linear."""

from __future__ import annotations

import time
from pathlib import Path

from tests.security.release_helpers import declined as _declined
from tests.security.release_helpers import release as _release
from tests.security.release_helpers import written as _written

_TAG = "git describe --exact-match --tags HEAD"
_PY_TAG = 'import subprocess\nsubprocess.run(["git", "describe", "--exact-match"], check=True)\n'


def test_f1_a_gate_run_by_make_python_m_or_a_bare_script_name_declines_the_rocm_release(
    tmp_path: Path,
) -> None:
    mk = f"wheel:\n\tpython -m build --wheel\n\ncheck-release:\n\t{_TAG}\n"
    forms: dict[str, tuple[str, dict[str, str]]] = {
        "make target": ("      - run: make check-release\n", {"Makefile": mk}),
        "make -C folder": (
            "      - run: make -C ci check\n",
            {"ci/Makefile": f"check:\n\t{_TAG}\n"},
        ),
        "make prerequisite": (
            "      - run: make release\n",
            {"Makefile": f"release: verify\n\techo ok\nverify:\n\t@{_TAG}\n"},
        ),
        "make variable": (
            "      - run: make check\n",
            {"Makefile": f'TAG := $(shell {_TAG})\ncheck:\n\ttest -n "$(TAG)"\n'},
        ),
        "make default goal": ("      - run: make\n", {"Makefile": f"all:\n\t{_TAG}\n"}),
        "make target gpuport cannot find": ("      - run: make gone\n", {"Makefile": mk}),
        "make without a Makefile": ("      - run: make check-release\n", {}),
        "make through a variable": ("      - run: make $TARGET\n", {"Makefile": mk}),
        "python -m module": (
            "      - run: python -m scripts.check_release\n",
            {"scripts/check_release.py": _PY_TAG},
        ),
        "python -m package": (
            "      - run: python3 -m tools.gate\n",
            {"tools/gate/__init__.py": "", "tools/gate/__main__.py": _PY_TAG},
        ),
        "python -m unreadable project module": (
            "      - run: python -m scripts.nothere\n",
            {"scripts/__init__.py": "", "scripts/other.py": "x = 1\n"},
        ),
        "sh bare name": ("      - run: sh check_release\n", {"check_release": f"{_TAG}\n"}),
        "bash bare name, missing": ("      - run: bash check_release\n", {}),
        "make -j then a target": (
            "      - run: make -j$(nproc) check-release\n",
            {"Makefile": mk},
        ),
        "working-directory": (
            "      - working-directory: ci\n        run: make check\n",
            {"ci/Makefile": f"check:\n\t{_TAG}\n"},
        ),
    }
    for what, (gate, files) in forms.items():
        _declined(tmp_path / what.replace(" ", "_"), gate, files)
    # a target, module or script that does not ask which branch or tag HEAD is: copied
    harmless = {
        "Makefile": f"deps:\n\tpip install -r requirements.txt\n\ncheck-release:\n\t{_TAG}\n",
        "requirements.txt": "numpy\n",
        "tools/setup_env.py": "print('ok')\n",
    }
    gate = (
        "      - run: make deps\n      - run: python -m tools.setup_env\n"
        "      - run: python -m pip install -U pip\n"
    )
    _written(tmp_path / "harmless", gate, harmless)


def test_f2_a_gate_in_a_nested_local_action_declines_the_rocm_release(tmp_path: Path) -> None:
    def composite(step: str) -> str:
        return f"name: a\nruns:\n  using: composite\n  steps:\n    - {step}\n"

    outer = composite("uses: ./.github/actions/inner")
    files = {
        ".github/actions/check/action.yml": outer,
        ".github/actions/inner/action.yml": composite(f"run: {_TAG}\n      shell: bash"),
    }
    gate = "      - uses: ./.github/actions/check\n"
    _declined(tmp_path / "nested", gate, files)
    deeper = {
        ".github/actions/check/action.yml": outer,
        ".github/actions/inner/action.yml": composite("uses: ./.github/actions/core"),
        ".github/actions/core/action.yml": composite(
            "run: ${{ github.action_path }}/gate.sh\n      shell: bash"
        ),
        ".github/actions/core/gate.sh": f"#!/bin/sh\n{_TAG}\n",
    }
    _declined(tmp_path / "deeper", gate, deeper)
    missing = {".github/actions/check/action.yml": outer}
    _declined(tmp_path / "missing", gate, missing)
    # an inner action behind a link out of the project is not read: declined, not followed
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "action.yml").write_text(composite("run: pip install numpy\n      shell: bash"))
    _release(tmp_path / "link", gate, missing)
    (tmp_path / "link/.github/actions/inner").symlink_to(outside, target_is_directory=True)
    _declined(tmp_path / "link", gate, missing)
    harmless = {
        ".github/actions/check/action.yml": outer,
        ".github/actions/inner/action.yml": composite("run: pip install numpy\n      shell: bash"),
    }
    _written(tmp_path / "harmless", gate, harmless)


def test_f3_following_gates_across_many_working_directories_is_linear(tmp_path: Path) -> None:
    steps = "".join(
        f"      - name: s{i}\n        working-directory: w{i}\n        run: echo "
        + " ".join(f"s{i}x{j}.d" for j in range(100))
        + "\n"
        for i in range(100)
    )
    start = time.monotonic()
    _written(tmp_path / "big", steps, {})
    assert time.monotonic() - start < 6.0
    # a step's own working-directory is still where its script is found
    gate = "      - working-directory: tools\n        run: ./check.sh\n"
    _declined(tmp_path / "wd", steps + gate, {"tools/check.sh": f"#!/bin/sh\n{_TAG}\n"})
