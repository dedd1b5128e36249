"""Forty-second re-run, Python findings: F10, F11, F12, F19 and F20 (see docs/security.md).

F10: another module calling the swallowed ``nvidia-smi`` probe under an ``import ... as`` name,
or from a file over 1 MiB, keeps GP204 major. F11: ``detect() or sys.exit(...)`` is a gate.
F12: the probe's own file reading it as a value (a dispatch table) keeps GP204 major. F19: a
function a class body calls runs on import. F20: the other files are read once a scan, not
once per file that swallows a probe.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gpuport import fileio
from gpuport.models import Severity
from gpuport.scan.engine import scan_path


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _gp204(root: Path) -> list[Severity]:
    report = scan_path(root)
    return [f.severity for f in report.findings if f.rule_id == "GP204"]


_GPU = textwrap.dedent(
    """\
    import subprocess
    import sys


    def gpu_names():
        out = subprocess.check_output(["nvidia-smi", "--query-gpu=name", "--format=csv"])
        return out.decode().splitlines()


    def detect():
        try:
            return gpu_names()
        except Exception:
            return []
    """
)


def test_f10_an_aliased_or_large_caller_in_another_module_keeps_the_probe(
    tmp_path: Path,
) -> None:
    aliased = tmp_path / "aliased"
    main = "from pkg.gpu import gpu_names as probe\n\nprint('running on', probe()[0])\n"
    _write(aliased, {"pkg/__init__.py": "", "pkg/gpu.py": _GPU, "pkg/main.py": main})
    assert _gp204(aliased) == [Severity.MAJOR]
    # the alias called only where its failure is swallowed too: still info
    main = (
        "from pkg.gpu import gpu_names as probe\n\n\ndef main():\n    try:\n"
        "        return probe()\n    except OSError:\n        return []\n"
    )
    _write(aliased, {"pkg/main.py": main})
    assert _gp204(aliased) == [Severity.INFO]
    large = tmp_path / "large"
    main = "from pkg.gpu import gpu_names\n\nprint(gpu_names()[0])\n#" + "x" * (1100 * 1024) + "\n"
    _write(large, {"pkg/__init__.py": "", "pkg/gpu.py": _GPU, "pkg/main.py": main})
    assert _gp204(large) == [Severity.MAJOR]


def test_f11_a_probe_or_exit_stops_the_program(tmp_path: Path) -> None:
    gpu = _GPU + '\n\nGPUS = detect() or sys.exit("no NVIDIA GPU found")\n'
    _write(tmp_path, {"pkg/__init__.py": "", "pkg/gpu.py": gpu})
    assert _gp204(tmp_path) == [Severity.MAJOR]
    gpu = _GPU + "\n\nGPUS = detect() or []\n"  # a default, not an exit: the program goes on
    _write(tmp_path, {"pkg/gpu.py": gpu})
    assert _gp204(tmp_path) == [Severity.INFO]


def test_f12_the_probe_read_as_a_value_in_its_own_file_is_not_swallowed(tmp_path: Path) -> None:
    gpu = _GPU + '\n\nPROBES = {"nvidia": gpu_names}\nFIRST_GPU = PROBES["nvidia"]()[0]\n'
    _write(tmp_path, {"pkg/__init__.py": "", "pkg/gpu.py": gpu})
    assert _gp204(tmp_path) == [Severity.MAJOR]


def test_f19_a_function_a_class_body_calls_runs_on_import(tmp_path: Path) -> None:
    mod = """\
        def _context():
            import pycuda.autoinit
            import pycuda.driver as drv
            return drv.Context.get_current()


        class Device:
            ctx = _context()
        """
    project = '[project]\nname = "pkg"\nversion = "0.1"\ndependencies = ["numpy"]\n'
    _write(tmp_path, {"pyproject.toml": project, "pkg/__init__.py": "", "pkg/mod.py": mod})
    gp201 = [f for f in scan_path(tmp_path).findings if f.rule_id == "GP201"]
    assert gp201
    assert all("optional feature" not in f.message for f in gp201)
    assert any(f.severity.rank > Severity.MINOR.rank for f in gp201)


def test_f20_other_files_are_read_once_a_scan_not_once_per_probe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    count = 60
    files = {"pkg/__init__.py": ""}
    for i in range(count):
        files[f"pkg/m{i}.py"] = _GPU.replace("gpu_names", f"gpu_names{i}").replace(
            "detect", f"detect{i}"
        )
    _write(tmp_path, files)
    reads: list[Path] = []
    real = fileio.read_bytes

    def counting(path: Path, **kwargs: object) -> bytes:
        reads.append(Path(path))
        return real(path, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(fileio, "read_bytes", counting)
    assert _gp204(tmp_path) == [Severity.INFO] * count
    modules = [p for p in reads if p.name.startswith("m")]
    # the old reading was files x files: about count * (count - 1) reads
    assert len(modules) < 8 * count, len(modules)
