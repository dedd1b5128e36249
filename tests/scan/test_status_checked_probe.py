"""Issue 24, thirteenth sample (jittor ``install_cuda.py:30``): an ``nvidia-smi`` run whose
status the next statement tests and leaves on is a handled failure on an AMD host (GP204
guarded, as under a ``try`` that catches ``OSError``); one whose failure raises, or whose
status nothing tests, is not."""

from __future__ import annotations

from pathlib import Path

from gpuport.models import Severity
from tests.scan.project_files import scan_files

_PY = """\
import subprocess as sp

def driver():
    ret, out = sp.getstatusoutput("nvidia-smi -q -u")
    if ret != 0:
        return None
    return out

def must():
    p = sp.run(["nvidia-smi", "-L"], capture_output=True)
    if p.returncode != 0:
        raise RuntimeError("no GPU")
    return p.stdout

def blind():
    out = sp.check_output(["nvidia-smi", "-L"])
    print(out)
    return out
"""


def test_a_probe_whose_status_is_checked_is_handled_but_not_one_that_raises(
    tmp_path: Path,
) -> None:
    r = scan_files(tmp_path, {"pkg/probe.py": _PY})
    sev = {f.location.line: f.severity for f in r.findings if f.rule_id == "GP204"}
    assert sev[4] is Severity.INFO
    assert sev[10] is not Severity.INFO and sev[16] is not Severity.INFO
