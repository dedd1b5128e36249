"""The forty-fifth re-run (on 6ac98f1), port findings F14, F5, F6, F7, F8 and F17 of the
unsafe ROCm release workflow (``port/release_gates``): a Makefile of 200 ``include Makefile``
lines stalled plain ``gpuport port`` (F14: each include re-read the file); the tag gate the
CUDA release job runs was dropped, so the ROCm copy published from any dispatched branch,
when run as ``bash -e check_release`` (F5: ``-e`` taken for eval), by a bare name inside a
script the job runs (F6), as ``git log -1 --format=%D`` (F7), through a task runner (F8:
``npm run``, ``tox -e``) or as ``. check_release`` / ``pwsh -File check_release`` (F17).
Each file is now read once (a self-include cut) and each gate declines the ROCm workflow."""

from __future__ import annotations

import time
from pathlib import Path

from tests.security.release_helpers import declined as _declined
from tests.security.release_helpers import written as _written

_TAG = "git describe --exact-match --tags HEAD\n"


def test_f14_a_self_including_makefile_is_read_once_in_linear_time(tmp_path: Path) -> None:
    body = "include Makefile\n" * 60 + "-include Makefile other.mk\n"
    start = time.monotonic()
    _written(
        tmp_path / "self",
        "      - run: make tagcheck\n",
        {"Makefile": body + "tagcheck:\n\techo ok\n"},
    )
    assert time.monotonic() - start < 2.0
    # an include cycle is cut too, and a gate in an included file is still read
    cycle = {
        "Makefile": "include a.mk\ntagcheck: verify\n\techo ok\n",
        "a.mk": "include b.mk\n" * 40,
        "b.mk": "include a.mk\ninclude Makefile\n" * 40 + f"verify:\n\t{_TAG}",
    }
    start = time.monotonic()
    _declined(tmp_path / "cycle", "      - run: make tagcheck\n", cycle)
    assert time.monotonic() - start < 2.0


def test_f5_bash_errexit_or_python_ignore_env_before_a_bare_script_is_followed(
    tmp_path: Path,
) -> None:
    for i, gate in enumerate(
        ("bash -e check_release", "bash -ex check_release", "sh -o pipefail -e check_release",
         "python3 -E check_release", "bash --norc check_release")
    ):  # fmt: skip
        _declined(tmp_path / f"g{i}", f"      - run: {gate}\n", {"check_release": _TAG})
    # an option gpuport does not know: what runs is not read exactly, declined
    _declined(tmp_path / "unknown", "      - run: bash -Z check_release\n", {})
    # code given inline or on stdin runs no file; a harmless script is copied
    harmless = "      - run: bash -e check_release\n      - run: curl -sSf x | sh -s -- -y\n"
    _written(tmp_path / "harmless", harmless, {"check_release": "echo ok\n"})


def test_f6_a_bare_named_script_run_by_a_script_the_job_runs_is_followed(tmp_path: Path) -> None:
    files = {"scripts/gatekeep.sh": "#!/bin/sh\nsh check_tag\n", "check_tag": _TAG}
    _declined(tmp_path / "depth2", "      - run: ./scripts/gatekeep.sh\n", files)
    missing = {"scripts/gatekeep.sh": "#!/bin/sh\nbash -e check_tag\n"}
    _declined(tmp_path / "missing", "      - run: ./scripts/gatekeep.sh\n", missing)
    harmless = {"scripts/gatekeep.sh": "#!/bin/sh\nsh check_tag\n", "check_tag": "echo ok\n"}
    _written(tmp_path / "harmless", "      - run: ./scripts/gatekeep.sh\n", harmless)


def test_f7_git_commands_printing_heads_refs_are_gates(tmp_path: Path) -> None:
    for i, gate in enumerate(
        ('test -n "$(git log -1 --format=%D | grep tag:)"',
         "git show -s --decorate HEAD | grep -q tag:",
         "git --no-pager log -1 --pretty='%d' | grep -q tag:",
         "git status -sb | grep -q 'no branch'")
    ):  # fmt: skip
        _declined(tmp_path / f"g{i}", f"      - run: {gate}\n", {})
    py = 'import git\nrepo = git.Repo(".")\nassert repo.tags\n'
    _declined(tmp_path / "gitpython", "      - run: python check.py\n", {"check.py": py})
    # a date format's %d is no ref; a plain log is copied
    harmless = "      - run: git log -1 --format=%cd --date=format:%Y%m%d\n"
    _written(tmp_path / "date", harmless, {})


def test_f8_a_task_runners_target_declines_the_rocm_release(tmp_path: Path) -> None:
    npm = {"package.json": '{"scripts":{"tagcheck":"git describe --exact-match --tags HEAD"}}\n'}
    _declined(tmp_path / "npm", "      - run: npm run tagcheck\n", npm)
    _declined(tmp_path / "yarn", "      - run: yarn tagcheck\n", npm)
    tox = {"tox.ini": "[testenv:tagcheck]\ncommands = git describe --exact-match --tags HEAD\n"}
    _declined(tmp_path / "tox", "      - run: tox -e tagcheck\n", tox)
    _declined(tmp_path / "nox", "      - run: python -m pip install nox && nox -s tag\n", {})
    # installing the runner's packages runs no named task
    _written(tmp_path / "harmless", "      - run: npm ci\n", npm)


def test_f17_dot_and_pwsh_file_run_a_bare_named_script(tmp_path: Path) -> None:
    for i, gate in enumerate((". check_release", "pwsh -File check_release",
                              "pwsh -NoProfile -File check_release")):  # fmt: skip
        _declined(tmp_path / f"g{i}", f"      - run: {gate}\n", {"check_release": _TAG})
    # ``. activate`` with no such project file is sourced from PATH, as ``source activate``
    _written(tmp_path / "path", "      - run: . activate\n", {"check_release": "echo ok\n"})
