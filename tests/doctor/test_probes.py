"""Probes on a fake machine: sysfs, device nodes and groups from a folder, vendor tools from
PATH; a tool that hangs or crashes is reported while every other probe still runs."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gpuport.doctor import DoctorOptions, ProbeStatus, collect, diagnose, probes_python
from gpuport.doctor.context import Probe, ProbeContext
from gpuport.doctor.probes_tools import strip_processes
from gpuport.doctor.runner import PROBE_NAMES
from gpuport.doctor.snapshot import Layer
from tests.doctor.conftest import tool_env, write_tool

NO_TORCH = frozenset(PROBE_NAMES) - {"torch", "smoke"}


def _options(root: Path, bindir: Path, **kw: object) -> DoctorOptions:
    return DoctorOptions(root=root, env=tool_env(bindir, root / "home"), **kw)  # type: ignore[arg-type]


def test_fake_machine_is_read_through_the_root(fake_machine: tuple[Path, Path]) -> None:
    root, bindir = fake_machine
    s = collect(_options(root, bindir, only=NO_TORCH))
    assert [(d.vendor, d.device, d.driver) for d in s.pci] == [("1002", "744c", "amdgpu")]
    assert s.pci[0].name is not None and "Navi 31" in s.pci[0].name
    assert s.modules.loaded == ["amdgpu"] and s.modules.amdgpu_version == "6.8.5"
    assert {n.path for n in s.nodes} == {"/dev/kfd", "/dev/dri/renderD128"}
    assert s.installs.rocm_version == "6.2.0-66"
    assert s.system.numa_balancing == 1 and s.system.os_name == "Ubuntu 22.04.5 LTS"
    assert s.system.cpu == "AMD Ryzen 9 7950X 16-Core Processor"
    assert "Radeon RX 7900 XTX" in s.tools["rocminfo"].stdout
    assert s.probe("nvidia-smi") is not None
    assert s.probe("nvidia-smi").status is ProbeStatus.MISSING  # type: ignore[union-attr]
    report = diagnose(s)
    assert "GPUs: AMD Radeon RX 7900 XTX (gfx1100)." in report.summary


def test_hanging_and_crashing_tools_are_reported_and_the_rest_run(
    fake_machine: tuple[Path, Path],
) -> None:
    root, bindir = fake_machine
    write_tool(bindir, "nvidia-smi", "sleep 30")  # a child process: the group must be killed
    write_tool(bindir, "amd-smi", "echo 'Segmentation fault' >&2; kill -SEGV $$")
    started = time.monotonic()
    s = collect(_options(root, bindir, timeout_s=0.5, only=NO_TORCH))
    took = time.monotonic() - started
    assert took < 5, f"a hung tool held doctor for {took:.1f} s"
    hung = s.probe("nvidia-smi")
    crashed = s.probe("amd-smi")
    assert hung is not None and hung.status is ProbeStatus.TIMEOUT
    assert crashed is not None and crashed.status is ProbeStatus.ERROR
    assert crashed.message is not None and crashed.message.startswith("crashed")
    assert s.probe("rocminfo").status is ProbeStatus.OK  # type: ignore[union-attr]
    assert s.pci and s.nodes  # the other probes still ran
    report = diagnose(s)
    failed = {d.probes[0]: d for d in report.diagnoses if d.rule_id == "GP630"}
    assert set(failed) == {"nvidia-smi", "nvidia-smi-query", "amd-smi"}
    assert "hung" in failed["nvidia-smi"].cause and "crashed" in failed["amd-smi"].cause
    assert failed["nvidia-smi"].layer is Layer.RUNTIME
    assert any(d.rule_id == "GP617" for d in report.diagnoses) is False  # RDNA: no NUMA warning


def test_a_probe_that_raises_costs_only_itself(
    fake_machine: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpuport.doctor import runner as collect_mod

    def broken(ctx: ProbeContext) -> object:
        raise RuntimeError("bug in a probe")

    probes = (*collect_mod.PROBES, Probe("broken", Layer.DRIVER, broken))  # type: ignore[arg-type]
    monkeypatch.setattr(collect_mod, "PROBES", probes)
    root, bindir = fake_machine
    s = collect(_options(root, bindir, only=frozenset({"broken", "pci", "nodes"})))
    assert s.probe("broken").status is ProbeStatus.ERROR  # type: ignore[union-attr]
    assert s.pci and s.nodes
    assert [d.rule_id for d in diagnose(s).diagnoses if d.probes == ["broken"]] == ["GP630"]


@pytest.mark.torch
def test_a_torch_that_crashes_on_import_is_diagnosed(
    fake_machine: tuple[Path, Path], tmp_path: Path
) -> None:
    root, bindir = fake_machine
    python = write_tool(
        tmp_path,
        "python-broken",
        "echo 'OSError: libamdhip64.so.6: cannot open shared object file' >&2; kill -ABRT $$",
    )
    s = collect(_options(root, bindir, python=str(python), only=frozenset({"torch", "python"})))
    assert s.probe("torch").status is ProbeStatus.ERROR  # type: ignore[union-attr]
    assert s.torch is not None and "libamdhip64" in (s.torch.import_error or "")
    ids = [d.rule_id for d in diagnose(s).diagnoses]
    assert "GP618" in ids and "GP630" not in ids


def test_smoke_test_error_text_becomes_a_diagnosis(
    fake_machine: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The smoke test runs in a child interpreter; its dying words pick the diagnosis."""
    monkeypatch.setattr(probes_python, "_torch_installed", lambda: "2.5.1+rocm6.2")
    line = (
        'GPUPORT-JSON:{"stage": "detect", "available": true, "device_count": 1, "devices": '
        '[{"index": 0, "name": "AMD Radeon RX 9070 XT", "arch": "gfx1201"}]}'
    )
    python = write_tool(
        tmp_path,
        "python-smoke",
        f"echo '{line}'; echo 'HIP error: hipErrorNoBinaryForGpu: Unable to find code object "
        "for all current devices!' >&2; kill -ABRT $$",
    )
    s = collect(_options(root := fake_machine[0], fake_machine[1], python=str(python),
                         only=frozenset({"smoke"})))  # fmt: skip
    del root
    assert s.smoke is not None and s.smoke.returncode == -6
    assert s.smoke.devices[0].arch == "gfx1201"
    s = s.model_copy(update={"torch": s.torch or None})
    from gpuport.doctor.facts import Facts

    assert Facts(s).smoke_failure is not None
    assert Facts(s).smoke_failure.value == "no-binary"  # type: ignore[union-attr]


def test_smoke_is_skipped_on_request_and_for_cpu_torch(fake_machine: tuple[Path, Path]) -> None:
    root, bindir = fake_machine
    s = collect(_options(root, bindir, smoke_test=False, only=frozenset({"smoke"})))
    assert s.probe("smoke").status is ProbeStatus.SKIPPED  # type: ignore[union-attr]
    assert s.smoke is None


def test_environment_keeps_gpu_variables_only_and_redacts(tmp_path: Path) -> None:
    from gpuport.doctor.probes_system import probe_env

    env = {
        "HOME": "/home/alice",
        "HSA_OVERRIDE_GFX_VERSION": "11.0.0",
        "LD_LIBRARY_PATH": "/home/alice/lib:/opt/rocm/lib",
        "NVIDIA_API_KEY": "nvapi-secret",
        "AWS_SECRET_ACCESS_KEY": "x",
        "PATH": "/usr/bin",
    }
    ctx = ProbeContext.create(DoctorOptions(root=tmp_path, env=env))
    kept = probe_env(ctx).data["env"]
    assert kept == {
        "HSA_OVERRIDE_GFX_VERSION": "11.0.0",
        "LD_LIBRARY_PATH": "~/lib:/opt/rocm/lib",
        "NVIDIA_API_KEY": "<redacted>",
    }


def test_nvidia_smi_process_table_is_cut() -> None:
    text = (
        "| NVIDIA-SMI 550.54.15    Driver Version: 550.54.15    CUDA Version: 12.4 |\n"
        "+-------------------------------------------+\n"
        "| Processes:                                |\n"
        "|  0   N/A  N/A  4242  C  python train.py --secret-run  |\n"
    )
    cut = strip_processes(text)
    assert "CUDA Version: 12.4" in cut and "train.py" not in cut
