"""Missing optional dependencies give one line naming the extra, exit code 3."""

from __future__ import annotations

import pytest

from gpuport.models import EnvironmentProblem
from gpuport.optional import require


def test_present_module_is_returned() -> None:
    assert require("json", "all", "a test").dumps([1]) == "[1]"


def test_missing_module_names_the_extra() -> None:
    with pytest.raises(EnvironmentProblem) as info:
        require("gpuport_no_such_module.sub", "bench", "gpuport bench")
    assert info.value.exit_code == 3
    text = str(info.value)
    assert "gpuport bench needs" in text
    assert "pip install 'gpuport[bench]'" in text
    assert "\n" not in text


def test_scan_does_not_import_heavy_dependencies() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from gpuport.cli.app import main\n"
        "try:\n    main(['scan', 'examples/llm-service', '--format', 'json'])\n"
        "except SystemExit:\n    pass\n"
        "heavy = [m for m in ('torch', 'safetensors', 'matplotlib') if m in sys.modules]\n"
        "sys.stderr.write('HEAVY=' + ','.join(heavy))\n"
    )
    from tests.conftest import REPO

    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert "HEAVY=" in proc.stderr
    assert proc.stderr.rsplit("HEAVY=", 1)[1].strip() == ""
