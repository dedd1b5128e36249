"""The forty-sixth re-run (on aef9550), port findings F1, F12, F2, F3, F14 and F13 of the
unsafe ROCm release workflow (``port/release_gates``, ``port/release_runs``): the tag or
branch gate the CUDA release job runs was dropped, so the ROCm copy published, when the
script or make target was started after ``if`` / ``!`` / ``timeout`` / ``env -i`` or in a
``bash -c`` string (F1), run by name through a folder the job puts on PATH (F12), fed to a
shell on stdin (F2: ``sh < check_tag``, ``cat check_tag | sh``), asked of git behind global
options (F3: ``git -P``, ``--git-dir "x"``), asked through GitPython's command wrapper (F14:
``repo.git.describe(tags=True, exact_match=True)``) or given to ``fish`` / ``csh`` (F13).
Each now declines the ROCm workflow; the same commands without a gate still write it."""

from __future__ import annotations

from pathlib import Path

from tests.security.release_helpers import declined as _declined
from tests.security.release_helpers import written as _written

_TAG = "git describe --exact-match --tags HEAD\n"
_OK = "echo ok\n"


def test_f1_a_script_or_make_target_after_a_keyword_or_wrapper_is_followed(
    tmp_path: Path,
) -> None:
    runs = {
        "if_make": "if ! make check-tag; then exit 1; fi",
        "timeout": "timeout 60 sh check_tag",
        "nohup": "nohup sh check_tag",
        "env_i": "env -i sh check_tag",
        "while": "while sh check_tag; do break; done",
        "bash_c": 'bash -c "sh check_tag"',
        "sudo_u": "sudo -u root make check-tag",
    }
    for name, line in runs.items():
        files = {"Makefile": f"check-tag:\n\t{_TAG}", "check_tag": _TAG}
        _declined(tmp_path / name, f"      - run: {line}\n", files)
        harmless = {"Makefile": f"check-tag:\n\t{_OK}", "check_tag": _OK}
        _written(tmp_path / f"ok_{name}", f"      - run: {line}\n", harmless)


def test_f12_a_script_run_by_name_through_a_project_folder_on_path_is_followed(
    tmp_path: Path,
) -> None:
    gates = {
        "github_path": (
            '      - run: echo "$PWD/scripts" >> "$GITHUB_PATH"\n      - run: check_tag\n'
        ),
        "workspace": (
            '      - run: echo "${{ github.workspace }}/scripts" >> $GITHUB_PATH\n'
            "      - run: if check_tag; then echo ok; fi\n"
        ),
        "inline": '      - run: PATH="$PWD/scripts:$PATH" check_tag\n',
    }
    for name, gate in gates.items():
        _declined(tmp_path / name, gate, {"scripts/check_tag": _TAG})
        _written(tmp_path / f"ok_{name}", gate, {"scripts/check_tag": _OK})


def test_f2_a_script_fed_to_a_shell_on_stdin_is_followed(tmp_path: Path) -> None:
    for name, line in {
        "redirect": "sh < check_tag",
        "attached": "bash -s <check_tag",
        "cat_pipe": "cat check_tag | sh",
        "python": "python3 - < check_tag",
    }.items():
        _declined(tmp_path / name, f"      - run: {line}\n", {"check_tag": _TAG})
        _written(tmp_path / f"ok_{name}", f"      - run: {line}\n", {"check_tag": _OK})
    # a pipe from a command gpuport does not read declines; a download does not
    _declined(tmp_path / "unknown", "      - run: ./gen.bin | sh\n", {"README": "x\n"})
    _written(tmp_path / "download", "      - run: curl -sSf x | sh -s -- -y\n", {})


def test_f3_git_global_options_do_not_hide_a_ref_printing_command(tmp_path: Path) -> None:
    for name, line in {
        "pager": 'test "$(git -P branch --show-current)" = main',
        "git_dir": 'test "$(git --git-dir "$PWD/.git" branch --show-current)" = main',
        "work_tree": "git --work-tree . --no-pager describe --tags --exact-match",
        "p_c": "git -p -c core.pager=cat -C . describe --exact-match",
    }.items():
        _declined(tmp_path / name, f"      - run: {line}\n", {"README": "x\n"})
    _written(tmp_path / "ok", "      - run: git -P log -1 --oneline\n", {"README": "x\n"})


def test_f14_gitpython_command_wrapper_is_read_as_git(tmp_path: Path) -> None:
    gate = "      - run: python scripts/check_tag.py\n"
    for name, call in {
        "describe": "r.git.describe(tags=True, exact_match=True)",
        "branch": 'r.git.branch("--show-current")',
        "log": 'r.git.log("-1", format="%D")',
        "pygit2": "assert not r.head_is_detached",
    }.items():
        body = f'import git\nr = git.Repo(".")\n{call}\n'
        _declined(tmp_path / name, gate, {"scripts/check_tag.py": body})
    ok = 'import git\nr = git.Repo(".")\nprint(r.git.rev_parse("HEAD"))\n'
    _written(tmp_path / "ok", gate, {"scripts/check_tag.py": ok})


def test_f13_a_script_given_to_fish_or_csh_is_followed(tmp_path: Path) -> None:
    for shell in ("fish", "csh", "tcsh", "busybox sh"):
        line = f"      - run: {shell} check_tag\n"
        name = shell.replace(" ", "_")
        _declined(tmp_path / name, line, {"check_tag": _TAG})
        _written(tmp_path / f"ok_{name}", line, {"check_tag": _OK})
