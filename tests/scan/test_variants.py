"""Issue 24: what a ROCm user does not run (a vendor split's NVIDIA module, the other
platforms' requirements beside the ROCm one), optional features imported lazily, and a few
hours of majors that are not a port."""

from __future__ import annotations

from pathlib import Path

from gpuport.models import Severity
from gpuport.scan.model import ScanReport, Verdict
from tests.scan.project_files import scan_files

SMI = (
    "import subprocess\n\n\ndef gpus():\n    return subprocess.check_output(['nvidia-smi', '-L'])\n"
)


def _sev(r: ScanReport, path: str, rule: str) -> list[Severity]:
    return [f.severity for f in r.findings if f.location.path == path and f.rule_id == rule]


def test_the_nvidia_module_of_a_vendor_split_is_not_run_on_rocm(tmp_path: Path) -> None:
    files = {"app/hw/nvidia.py": SMI, "app/hw/amd.py": "def gpus():\n    return []\n"}
    r = scan_files(tmp_path / "a", files)
    assert _sev(r, "app/hw/nvidia.py", "GP204") == [Severity.INFO]
    alone = scan_files(tmp_path / "b", {"app/hw/nvidia.py": SMI})
    assert _sev(alone, "app/hw/nvidia.py", "GP204") == [Severity.MAJOR]


def test_other_platform_requirements_beside_the_rocm_ones_are_variants(tmp_path: Path) -> None:
    files = {
        "requirements/requirements_amd.txt": (
            "--extra-index-url https://download.pytorch.org/whl/rocm6.2\ntorch\ntorchao\n"
        ),
        "requirements/requirements.txt": "torch\ntorchao\nbitsandbytes==0.43\n",
        "requirements/requirements_apple.txt": "torch\ntorchao\n",
    }
    r = scan_files(tmp_path, files)
    for name in ("requirements/requirements.txt", "requirements/requirements_apple.txt"):
        hits = [f for f in r.findings if f.location.path == name and f.rule_id.startswith("GP1")]
        assert hits and all(f.severity is Severity.INFO and f.scope == "extra" for f in hits)
    own = _sev(r, "requirements/requirements_amd.txt", "GP103")
    assert own == [Severity.MINOR]  # the route installs it on purpose


def test_a_lazy_import_of_an_optional_nvidia_package_is_minor(tmp_path: Path) -> None:
    module = (
        "import torch\n\n\ndef to_tensorrt(model):\n    import torch_tensorrt\n\n"
        "    return torch_tensorrt.compile(model)\n"
    )
    r = scan_files(tmp_path / "a", {"lib/export.py": module, "requirements.txt": "torch\n"})
    assert _sev(r, "lib/export.py", "GP201") == [Severity.MINOR]
    assert r.verdict is Verdict.MINOR_WORK
    required = {"lib/export.py": module, "requirements.txt": "torch\ntorch-tensorrt\n"}
    kept = scan_files(tmp_path / "b", required)
    assert _sev(kept, "lib/export.py", "GP201")[0].rank > Severity.MINOR.rank


def test_a_few_hours_of_majors_is_minor_work_and_a_port_is_major(tmp_path: Path) -> None:
    r = scan_files(tmp_path / "a", {"lib/smi.py": SMI})
    assert r.verdict is Verdict.MINOR_WORK and "under a day" in r.verdict_reason
    many = {f"lib/smi{i}.py": SMI for i in range(4)}  # 4 x 2 h
    assert scan_files(tmp_path / "b", many).verdict is Verdict.MAJOR_WORK


def test_a_project_variable_named_for_nvshmem_is_not_the_library(tmp_path: Path) -> None:
    own = 'struct Cache { float* nvshmem_pages_; };\nchar* nvshmem_cfg = getenv("X");\n'
    used = own + "void f() { void* b = nvshmem_malloc(64); }\n"
    assert not _sev(scan_files(tmp_path / "a", {"kv.cc": own}), "kv.cc", "GP315")
    assert _sev(scan_files(tmp_path / "b", {"kv.cc": used}), "kv.cc", "GP315") == [Severity.BLOCKER]
