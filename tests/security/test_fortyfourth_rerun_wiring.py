"""Forty-fourth re-run: the parts of F5 and F13 that needed wiring outside the fixing helpers'
files (see /work/redteam44/FINDINGS.md).

* F5: a console-script entry point in the same file as the probe it fails on, named unlike
  any call the ``try`` swallows (``go()``), stops the program: GP204 stays major
  (``scan.rules.python.scope`` passes the file's entry points to the in-file gate).
* F13: a GPU monitor started by ``supervisord.conf`` (``command=``) or a systemd unit
  (``ExecStart=``) is run by the project: it is not lowered as "no script runs it"
  (``scan.project.script_texts`` reads ``.conf`` and ``.service`` configs).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from gpuport.models import Severity
from gpuport.scan import ScanOptions, scan_path

_PROJECT = '[project]\nname = "pkg"\nversion = "0.1"\n'
_CLI = """\
import subprocess


def _has_gpu():
    try:
        subprocess.run(["nvidia-smi", "-L"], check=True, capture_output=True)
        return True
    except (subprocess.CalledProcessError, FileNotFoundError):
        return False


def go():
    if not _has_gpu():
        print("error: no NVIDIA GPU found")
        return {status}
    return 0
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def _gp204(root: Path) -> list[Severity]:
    report = scan_path(root, ScanOptions(jobs=1))
    return [f.severity for f in report.findings if f.rule_id == "GP204"]


def test_f5_an_entry_point_in_the_probes_own_file_failing_on_it_keeps_gp204(
    tmp_path: Path,
) -> None:
    meta = _PROJECT + '[project.scripts]\npkg-go = "pkg.cli:go"\n'
    files = {"pyproject.toml": meta, "pkg/__init__.py": "", "pkg/cli.py": _CLI.format(status=1)}
    assert _gp204(_write(tmp_path / "fails", files)) == [Severity.MAJOR]
    # returning success on the CPU path handles the failure
    files["pkg/cli.py"] = _CLI.format(status=0)
    assert _gp204(_write(tmp_path / "handled", files)) in ([], [Severity.INFO])


def test_f13_a_monitor_run_by_supervisord_or_systemd_is_not_lowered(tmp_path: Path) -> None:
    base = {
        "pyproject.toml": _PROJECT,
        "pkg/__init__.py": "import torch\n",
        "requirements.txt": "torch\nGPUtil==1.4.0\n",
    }

    def gputil(name: str, extra: dict[str, str]) -> set[str]:
        report = scan_path(_write(tmp_path / name, {**base, **extra}), ScanOptions(jobs=1))
        return {
            f.severity.value
            for f in report.findings
            if f.rule_id == "GP101" and f.message.startswith("GPUtil")
        }

    run = "python -c 'import GPUtil; GPUtil.showUtilization()'"
    supervisord = f"[program:monitor]\ncommand={run}\nautostart=true\n"
    unit = f"[Unit]\nDescription=m\n\n[Service]\nExecStart=/usr/bin/{run}\n"
    for name, extra in {
        "supervisord": {"deploy/supervisord.conf": supervisord},
        "systemd": {"deploy/monitor.service": unit},
    }.items():
        got = gputil(name, extra)
        assert got and "info" not in got, (name, got)
    assert gputil("none", {"deploy/app.conf": "[app]\nname=m\n"}) == {"info"}
