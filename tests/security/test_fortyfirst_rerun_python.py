"""Forty-first re-run, Python findings: F4, F7, F11 and F18 (see docs/security.md)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from gpuport.models import Severity
from gpuport.scan.engine import scan_path
from gpuport.scan.project.opt_in import opt_in_extensions
from gpuport.scan.project.py_layout import module_level_line


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _gp204(root: Path) -> list[Severity]:
    report = scan_path(root)
    return [f.severity for f in report.findings if f.rule_id == "GP204"]


_GPU = """\
    import subprocess


    def gpu_names():
        out = subprocess.check_output(["nvidia-smi", "--query-gpu=name"])
        return out.decode().splitlines()


    def log_gpus(logger):
        try:
            logger.info("GPUs: %s", gpu_names())
        except Exception:
            logger.info("GPUs: unknown")
    """


def test_f4_a_caller_in_another_module_keeps_the_probe(tmp_path: Path) -> None:
    main = "from pkg.gpu import gpu_names\n\n\ndef main():\n    return gpu_names()[0]\n"
    _write(tmp_path, {"pkg/__init__.py": "", "pkg/gpu.py": _GPU, "pkg/main.py": main})
    assert _gp204(tmp_path) == [Severity.MAJOR]
    # callers elsewhere that swallow the failure too: still info
    main = (
        "from pkg.gpu import gpu_names\n\n\ndef main():\n    try:\n        return gpu_names()\n"
        "    except OSError:\n        return []\n"
    )
    _write(tmp_path, {"pkg/main.py": main})
    assert _gp204(tmp_path) == [Severity.INFO]


def test_f11_a_swallowed_probe_that_stops_the_program_is_major(tmp_path: Path) -> None:
    cli = """\
        import subprocess
        import sys


        def gpu_available():
            try:
                subprocess.run(["nvidia-smi"], check=True, capture_output=True)
                return True
            except Exception:
                return False


        def main():
            if not gpu_available():
                sys.exit("error: no GPU found")
        """
    _write(tmp_path, {"app/__init__.py": "", "app/cli.py": cli})
    assert _gp204(tmp_path) == [Severity.MAJOR]


def test_f11_a_gate_through_a_variable_and_one_that_goes_on(tmp_path: Path) -> None:
    probe = """\
        import subprocess
        import sys


        def gpu_available():
            try:
                subprocess.run(["nvidia-smi"], check=True)
                return True
            except OSError:
                return False


        def main():
            ok = gpu_available()
            if not ok:
                raise SystemExit(1)
        """
    _write(tmp_path, {"a/__init__.py": "", "a/cli.py": probe})
    assert _gp204(tmp_path) == [Severity.MAJOR]
    warn = probe.replace("raise SystemExit(1)", "print('no GPU')")
    _write(tmp_path, {"a/cli.py": warn})
    assert _gp204(tmp_path) == [Severity.INFO]


def test_f7_an_imported_alias_of_environ_sets_the_toolkit_home() -> None:
    for head, write in (
        ("from os import environ as env", 'env.setdefault("CUDA_HOME", "/usr/local/cuda")'),
        ("from os import environ as env", 'env["CUDA_HOME"] = "/usr/local/cuda"'),
        ("from os import putenv as put", 'put("CUDA_HOME", "/usr/local/cuda")'),
    ):
        text = (
            f"import os\n{head}\nfrom torch.utils.cpp_extension import CUDAExtension\n"
            f"{write}\next = []\nif 'CUDA_HOME' in os.environ:\n"
            "    ext.append(CUDAExtension('k', ['k.cu']))\n"
        )
        assert opt_in_extensions(text) is None, head
    plain = (
        "import os\nfrom torch.utils.cpp_extension import CUDAExtension\next = []\n"
        "if 'CUDA_HOME' in os.environ:\n    ext.append(CUDAExtension('k', ['k.cu']))\n"
    )
    assert opt_in_extensions(plain) is not None


def test_f18_a_load_in_a_helper_called_at_import_is_module_level(tmp_path: Path) -> None:
    ops = tmp_path / "ops.py"
    ops.write_text(
        "from torch.utils.cpp_extension import load\n\n\n"
        "def _build():\n    return load(name='f', sources=['f.cu'])\n\n\n"
        "def _later():\n    return load(name='g', sources=['g.cu'])\n\n\n"
        "_ext = _build()\n\n"
        "if __name__ == '__main__':\n    _later()\n"
    )
    assert module_level_line(ops, 5)
    assert not module_level_line(ops, 9)


def test_f18_the_project_verdict(tmp_path: Path) -> None:
    ops = """\
        import os

        from torch.utils.cpp_extension import load


        def _build():
            return load(name="fused_ops", sources=[os.path.join("pkg", "fused.cu")])


        _ext = _build()
        """
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/ops.py": ops,
            "pkg/fused.cu": "__global__ void k(float*x){x[threadIdx.x]*=2.f;}\n",
            "pyproject.toml": '[project]\nname="pkg"\nversion="1"\n',
        },
    )
    assert scan_path(tmp_path).verdict.value != "ready"
