"""Review findings, one test each: a machine (snapshot) on which doctor used to give a false
result or a harmful fix, and what it must say instead."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from gpuport.doctor import CheckStatus, run_checks
from gpuport.doctor.model import Diagnosis
from tests.doctor.machines import (
    Machine,
    _node,
    _pci,
    change,
    cpu_only,
    h100,
    mi300x,
    radeon,
    radeon_with_igpu,
    rocminfo,
    snap,
    tool,
)


def _ids(machine: Machine) -> set[str]:
    return {d.rule_id for d in run_checks(snap(machine))}


def _one(machine: Machine, rule_id: str) -> Diagnosis:
    found = [d for d in run_checks(snap(machine)) if d.rule_id == rule_id]
    assert len(found) == 1, [d.rule_id for d in run_checks(snap(machine))]
    return found[0]


# --------------------------------------------------------------- GP608: render nodes


def _intel_igpu_nvidia_laptop() -> Machine:
    m = h100(1)
    m["pci"] = [
        _pci("0000:00:02.0", "8086", "a7a0", "i915", "0x030000"),
        _pci("0000:01:00.0", "10de", "2860", "nvidia", "0x030200"),
    ]
    m["tools"]["nvidia-smi-query"] = tool(
        "0, NVIDIA GeForce RTX 4070 Laptop GPU, 550.54.15, 8188 MiB, 8.9, 00000000:01:00.0\n"
    )
    m["nodes"] += [_node("/dev/dri/renderD128", "render", False)]
    return m


def test_gp608_ignores_render_nodes_on_nvidia_and_intel_machines() -> None:
    laptop = _intel_igpu_nvidia_laptop()  # over ssh: no seat ACL on the Intel render node
    assert "GP608" not in _ids(laptop)
    h100_drm = h100(8)
    h100_drm["modules"]["loaded"] += ["nvidia_drm"]
    h100_drm["nodes"] += [_node("/dev/dri/renderD128", "render", False)]
    assert "GP608" not in _ids(h100_drm)
    wsl = change(
        h100(1),
        pci=[_pci("5582:00:00.0", "1414", "008e", None, "0x030200")],
        modules={"loaded": []},
        system={"wsl": True},
    )
    wsl["nodes"] = [
        {"path": "/dev/dxg", "mode": "crw-rw-rw-", "group": "root", "accessible": True},
        _node("/dev/dri/renderD128", "render", False),
    ]
    assert "GP608" not in _ids(wsl)


def test_gp608_uses_the_node_vendor_from_sysfs() -> None:
    """An AMD dGPU next to an NVIDIA one: only the AMD render node counts."""
    m = radeon()
    m["nodes"] = [
        _node("/dev/kfd"),
        {**_node("/dev/dri/renderD128", "render", False), "vendor": "10de"},
        {**_node("/dev/dri/renderD129", "render", True), "vendor": "1002"},
    ]
    m["pci"].append(_pci("0000:01:00.0", "10de", "2684", "nvidia", "0x030000"))
    assert "GP608" not in _ids(m)
    m["nodes"][2]["accessible"] = False
    evidence = " ".join(_one(m, "GP608").evidence)
    assert "/dev/dri/renderD129" in evidence and "renderD128" not in evidence


# --------------------------------------------------------------- GP608: never root


def test_gp608_never_suggests_joining_root() -> None:
    nv = h100(2)
    nv["nodes"] = [
        {"path": p, "mode": "crw-rw----", "group": "root", "accessible": False}
        for p in ("/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia1")
    ]
    d = _one(nv, "GP608")
    assert d.fix_command is not None and "root" not in d.fix_command
    assert "NVreg_DeviceFileGID" in d.fix_command
    amd = mi300x(8)
    amd["nodes"][0] = {"path": "/dev/kfd", "mode": "crw-rw----", "group": "root",
                       "accessible": False}  # fmt: skip
    d = _one(amd, "GP608")
    assert d.fix_command is not None and "usermod" not in d.fix_command
    assert "70-amdgpu.rules" in d.fix_command and "root" not in d.fix_command


def test_gp608_does_not_list_groups_the_user_is_in() -> None:
    m = radeon()
    m["nodes"] = [
        {"path": "/dev/kfd", "mode": "crw-rw----", "group": "render", "accessible": False},
        _node("/dev/dri/renderD128", "render", False),
    ]
    m["user"] = {"uid": 1000, "process_groups": ["video"], "configured_groups": ["video"]}
    assert _one(m, "GP608").fix_command == "sudo usermod -aG render $USER"


# --------------------------------------------------------------- GP609: iGPU next to NVIDIA


def _ryzen_rtx4090(apu: str = "164e") -> Machine:
    m = h100(1)
    m["pci"] = [
        _pci("0000:01:00.0", "10de", "2684", "nvidia", "0x030000"),
        _pci("0000:7c:00.0", "1002", apu, "amdgpu", "0x030000"),
    ]
    m["modules"]["loaded"] += ["amdgpu"]
    m["tools"]["nvidia-smi-query"] = tool(
        "0, NVIDIA GeForce RTX 4090, 550.54.15, 24564 MiB, 8.9, 00000000:01:00.0\n"
    )
    m["smoke"]["devices"] = [{"index": 0, "name": "NVIDIA GeForce RTX 4090", "arch": "sm_89"}]
    return change(m, system={"container": "docker"})  # docker run --gpus all: no AMD nodes


def test_gp609_ignores_the_amd_igpu_in_an_nvidia_container() -> None:
    assert "GP609" not in _ids(_ryzen_rtx4090("164e"))  # Raphael
    assert "GP609" not in _ids(_ryzen_rtx4090("1638"))  # Cezanne: was not in the table
    unknown = _ryzen_rtx4090("15ff")  # an APU ID doctor does not know, named by pci.ids
    unknown["pci"][1]["name"] = "Cezanne [Radeon Vega Series / Radeon Vega Mobile Series]"
    assert "GP609" not in _ids(unknown)


# --------------------------------------------------------------- GP628: counts


def test_gp628_rocr_filter_seen_by_rocminfo_is_not_a_missing_index() -> None:
    """rocminfo honours ROCR_VISIBLE_DEVICES: an older snapshot lists only the 2 chosen."""
    m = mi300x(8)
    m["env"] = {"ROCR_VISIBLE_DEVICES": "6,7"}
    agents = [{"gfx": "gfx942", "name": "AMD Instinct MI300X", "chip": "74a1"}] * 2
    m["tools"]["rocminfo"] = tool(rocminfo(agents))
    m["smoke"]["device_count"] = 2
    m["smoke"]["devices"] = m["smoke"]["devices"][:2]
    assert "GP628" not in _ids(m)
    # A real mistake is still caught: the PCI bus has 8 GPUs, not 9.
    m["env"] = {"ROCR_VISIBLE_DEVICES": "8"}
    assert "index 8 does not exist (8 GPUs)" in _one(m, "GP628").evidence[0]


def test_gp628_does_not_count_gpus_from_the_filtered_smoke_test() -> None:
    """WSL without nvidia-smi on PATH: only the smoke test saw a GPU, through the filter."""
    m = change(
        h100(1),
        pci=[_pci("5582:00:00.0", "1414", "008e", None, "0x030200")],
        modules={"loaded": []},
        system={"wsl": True},
        env={"CUDA_VISIBLE_DEVICES": "1"},
    )
    m["tools"] = {}
    m["nodes"] = [{"path": "/dev/dxg", "mode": "crw-rw-rw-", "group": "root", "accessible": True}]
    assert "GP628" not in _ids(m)


# --------------------------------------------------------------- GP627: unknown chips


def test_gp627_leaves_an_override_alone_when_the_real_chip_is_unknown() -> None:
    m = radeon("gfx1030", "73e3", "Radeon RX 6600M")  # not in the ID table; rocminfo overridden
    m["env"] = {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}
    assert "GP627" not in _ids(m)


def test_gp627_judges_rocminfo_run_without_the_override() -> None:
    """Since doctor runs rocminfo without the override, its gfx is the chip's own."""
    m = radeon("gfx1100", "7470", "Radeon RX 7900M")  # an ID and a name the tables do not know
    m["env"] = {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}
    m["tools"]["rocminfo"]["unset"] = ["HSA_OVERRIDE_GFX_VERSION"]
    d = _one(m, "GP627")
    assert d.status is CheckStatus.WARN and "redundant" in d.evidence[0]
    m["tools"]["rocminfo"]["unset"] = []  # the old way: the name is the override's
    assert "GP627" not in _ids(m)


def test_gp627_strix_halo_on_gfx1100_code_is_one_family() -> None:
    m = radeon("gfx1100", "1586", "Radeon 8060S Graphics")
    m["env"] = {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}
    assert not {"GP627", "GP612"} & _ids(m)


# --------------------------------------------------------------- iGPU-only laptops


def _phoenix_laptop(torch: str, cuda: str | None) -> Machine:
    m = cpu_only()
    m["pci"] = [_pci("0000:c4:00.0", "1002", "15bf", "amdgpu", "0x030000")]
    m["modules"] = {"loaded": ["amdgpu"]}
    m["nodes"] = [_node("/dev/kfd"), _node("/dev/dri/renderD128")]
    dists = {"torch": torch, "onnxruntime": "1.20.0"}
    if cuda:
        dists["nvidia-cublas-cu12"] = "12.4.5.8"
    m["python"] = {"distributions": dists}
    m["torch"] = {"version": torch, "cuda": cuda, "arch_list": []}
    m["smoke"] = (
        {"stage": "detect", "available": False, "device_count": 0, "returncode": 0}
        if cuda
        else None
    )
    return m


def test_an_igpu_only_laptop_is_not_an_amd_gpu_machine() -> None:
    cuda = run_checks(snap(_phoenix_laptop("2.5.1", "12.4")))
    assert {d.rule_id: d.status for d in cuda} == {
        "GP619": CheckStatus.INFO,
        "GP625": CheckStatus.INFO,
    }
    cpu = run_checks(snap(_phoenix_laptop("2.5.1+cpu", None)))
    assert {d.rule_id: d.status for d in cpu} == {
        "GP621": CheckStatus.INFO,
        "GP625": CheckStatus.INFO,
    }
    # Strix Halo is an APU that ROCm supports: a CUDA torch there is still a failure.
    halo = _phoenix_laptop("2.5.1", "12.4")
    halo["pci"][0]["device"] = "1586"
    assert _one(halo, "GP619").status is CheckStatus.FAIL


def test_apu_ids_are_known() -> None:
    from gpuport.doctor.gfx import DEVICE_GFX, is_apu

    for device in ("1638", "15e7", "1506", "150e", "1586", "13c0", "1114", "164e", "15bf",
                   "15c8"):  # fmt: skip
        assert is_apu(DEVICE_GFX[device]), device


# --------------------------------------------------------------- GP626


def test_gp626_other_major_is_no_clash_and_only_clashing_entries_go() -> None:
    other_major = change(h100(1), env={"LD_LIBRARY_PATH": "/usr/local/cuda-11.8/lib64"})
    assert "GP626" not in _ids(other_major)
    path = "/usr/local/cuda-12.1/lib64:~/lib:/opt/intel/lib"
    d = _one(change(h100(1), env={"LD_LIBRARY_PATH": path}), "GP626")
    assert d.fix_command == 'export LD_LIBRARY_PATH="$HOME/lib:/opt/intel/lib"'
    assert "~/lib:/opt/intel/lib" in d.fix
    rocm = change(radeon(), env={"LD_LIBRARY_PATH": "/opt/rocm-6.4.0/lib"})
    assert _one(rocm, "GP626").fix_command == "unset LD_LIBRARY_PATH"  # nothing else on it


# --------------------------------------------------------------- GP616 not hidden


def test_a_smoke_failure_is_not_hidden_by_an_unrelated_warning() -> None:
    m = h100(1)
    header = m["tools"]["nvidia-smi"]["stdout"].replace("CUDA Version: 12.4", "CUDA Version: 12.2")
    m["tools"]["nvidia-smi"]["stdout"] = header
    m["smoke"].update(ok=False, error="torch.OutOfMemoryError: CUDA out of memory.")
    ids = _ids(m)
    assert {"GP614", "GP616"} <= ids
    dgpu_first = radeon_with_igpu()
    dgpu_first["smoke"]["devices"] = list(reversed(dgpu_first["smoke"]["devices"]))
    dgpu_first["smoke"].update(error="Memory access fault by GPU node-1 on address 0x7f.")
    assert "GP616" in _ids(dgpu_first)  # GP615 is there too, but did not cause this


# --------------------------------------------------------------- GP611 vs missing /dev/kfd


def test_gp611_is_not_reported_when_kfd_is_missing() -> None:
    m = mi300x(8)
    m["system"]["container"] = "docker"
    m["nodes"] = []
    m["tools"]["rocminfo"] = tool(
        "ROCk module is loaded\nUnable to open /dev/kfd read-write: No such file or directory\n"
        "Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate\n",
        returncode=1,
    )
    m["smoke"] = {"stage": "detect", "available": False, "device_count": 0, "returncode": 0}
    assert _ids(m) == {"GP609"}


# --------------------------------------------------------------- GP607 on NVIDIA


def test_gp607_not_when_nvidia_smi_works() -> None:
    """The nodes probe ran before nvidia-smi created the nodes (first use after boot)."""
    assert "GP607" not in _ids(change(h100(2), nodes=[]))


# --------------------------------------------------------------- fix commands


def test_gp603_nouveau_fix_is_the_nvidia_driver_not_a_reboot_one_liner() -> None:
    m = h100(1)
    m["pci"][0]["driver"] = "nouveau"
    m = change(m, modules={"loaded": ["nouveau"]}, nodes=[], tools={})
    d = _one(m, "GP603")
    assert d.fix_command is None
    assert "its package blacklists nouveau" in d.fix


def test_gp615_placeholder_uuid_falls_back_to_indices_and_warns_when_harmless() -> None:
    m = radeon_with_igpu()
    agents = [
        {"gfx": "gfx1036", "name": "AMD Radeon Graphics", "chip": "164e", "uuid": "GPU-XX"},
        {"gfx": "gfx1030", "name": "AMD Radeon RX 6800 XT", "chip": "73bf", "uuid": "GPU-XX"},
    ]
    m["tools"]["rocminfo"] = tool(rocminfo(agents, "AMD Ryzen 9 7950X"))
    assert _one(m, "GP615").fix_command == "export ROCR_VISIBLE_DEVICES=1"
    fine = radeon_with_igpu()
    fine["smoke"]["devices"] = list(reversed(fine["smoke"]["devices"]))
    fine["smoke"].update(ok=True, error=None)
    assert _one(fine, "GP615").status is CheckStatus.WARN


def test_torch_reinstalls_are_pinned_to_the_installed_version() -> None:
    minor = h100(1)
    minor["tools"]["nvidia-smi"]["stdout"] = minor["tools"]["nvidia-smi"]["stdout"].replace(
        "CUDA Version: 12.4", "CUDA Version: 12.2"
    )
    d = _one(minor, "GP614")
    assert d.fix_command == (
        "pip install torch==2.5.1+cu121 --index-url https://download.pytorch.org/whl/cu121"
    )
    rocm_on_nv = copy.deepcopy(h100(1))
    rocm_on_nv["python"]["distributions"].update(torch="2.5.1+rocm6.2", torchvision="0.20.1")
    rocm_on_nv["torch"] = {"version": "2.5.1+rocm6.2", "hip": "6.2.41133", "arch_list": []}
    d = _one(rocm_on_nv, "GP620")
    assert d.fix_command is not None and "--force-reinstall" not in d.fix_command
    assert "torch==2.5.1+cu124 torchvision==0.20.1+cu124" in d.fix_command
    cpu_on_mi300 = mi300x()
    cpu_on_mi300["python"]["distributions"].update(torch="2.9.1+cpu", torchvision="0.24.1+cpu")
    cpu_on_mi300["torch"] = {"version": "2.9.1+cpu", "arch_list": []}
    d = _one(cpu_on_mi300, "GP621")
    assert d.fix_command == (
        "pip install torch==2.9.1+rocm7.0 torchvision==0.24.1+rocm7.0 "
        "--index-url https://download.pytorch.org/whl/rocm7.0"
    )
    # An RTX 5090 needs cu128, which torch 2.5.1 never had: an upgrade, and it says so.
    rtx = h100(1)
    rtx["tools"]["nvidia-smi-query"] = tool(
        "0, NVIDIA GeForce RTX 5090, 570.124.06, 32607 MiB, 12.0, 00000000:01:00.0\n"
    )
    d = _one(rtx, "GP613")
    assert d.fix_command == "pip install --upgrade torch --index-url " + (
        "https://download.pytorch.org/whl/cu128"
    )
    assert "upgrade" in d.fix


def test_gp623_reinstall_keeps_the_version_and_the_dependencies() -> None:
    m = h100(1)
    m["python"]["distributions"]["xformers"] = "0.0.28.post3"
    m["python"]["extension_backends"] = {"xformers": ["rocm"]}
    d = _one(m, "GP623")
    assert d.fix_command == "pip install --force-reinstall --no-deps xformers==0.0.28.post3"


def test_gp629_never_chowns_a_shared_miopen_folder() -> None:
    m = change(
        radeon(),
        env={"MIOPEN_USER_DB_PATH": "/shared/miopen"},
        miopen_dirs=[{"path": "/shared/miopen", "exists": True, "writable": False}],
    )
    d = _one(m, "GP629")
    assert d.fix_command is not None and "chown" not in d.fix_command
    assert 'MIOPEN_USER_DB_PATH="$HOME/.config/miopen"' in d.fix_command
    own = change(radeon(), miopen_dirs=[{"path": "~/.cache/miopen", "exists": True,
                                          "writable": False}])  # fmt: skip
    assert _one(own, "GP629").fix_command == "sudo chown -R $USER $HOME/.cache/miopen"


# --------------------------------------------------------------- hostile snapshot files


def test_deeply_nested_or_huge_snapshots_exit_2(  # type: ignore[no-untyped-def]
    doctor_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text(
        '{"kind": "gpuport.doctor.snapshot", "schema_version": "1.0", "pci": '
        + "[" * 100_000
        + "]" * 100_000
        + "}"
    )
    res = doctor_cli("--from-snapshot", str(deep))
    assert res.code == 2 and "nested too deeply" in res.err
    import gpuport.doctor as doctor

    monkeypatch.setattr(doctor, "MAX_SNAPSHOT_BYTES", 1000)
    big = tmp_path / "big.json"
    big.write_text('{"kind": "gpuport.doctor.snapshot", "pad": "' + "x" * 2000 + '"}')
    res = doctor_cli("--from-snapshot", str(big))
    assert res.code == 2 and "MB" in res.err


# --------------------------------------------- a snapshot from elsewhere (red-team re-run 11)


def test_a_snapshot_whose_distribution_is_not_a_package_name_is_refused(  # type: ignore[no-untyped-def]
    doctor_cli, tmp_path: Path
) -> None:
    """GP622 printed `$ pip uninstall -y nvidia-cublas-cu12;touch${IFS}/tmp/x;#` from a
    snapshot's distribution name: a command the user may paste. The snapshot is refused."""
    import json

    machine = change(radeon())
    machine["python"]["distributions"]["nvidia-cublas-cu12"] = "1"
    text = snap(machine).model_dump_json()
    hostile = "nvidia-cublas-cu12;touch${IFS}/tmp/PWNED;#"
    path = tmp_path / "snap.json"
    path.write_text(text.replace('"nvidia-cublas-cu12"', json.dumps(hostile)), encoding="utf-8")
    machine["python"]["distributions"][hostile] = "1"
    res = doctor_cli("--from-snapshot", str(path))
    assert res.code == 2 and "is not a package name" in res.err
    assert res.err.strip().count("\n") == 0 and "PWNED" not in res.out
    with pytest.raises(ValueError, match="not a package name"):
        snap(machine)
    healthy = change(radeon())
    healthy["python"]["distributions"]["nvidia-cublas-cu12"] = "12.4.5.8"
    assert snap(healthy).python.distributions["nvidia-cublas-cu12"] == "12.4.5.8"


def test_gp626_is_linear_in_the_entries_and_names_a_few(  # type: ignore[no-untyped-def]
) -> None:
    """A snapshot's LD_LIBRARY_PATH of 100,000 entries took 16 s (a list searched per entry)
    and printed one evidence line per clashing entry (2.7 MB). The command keeps every other
    entry; the prose names ten."""
    import time

    n = 50_000
    path = ":".join(f"/opt/rocm-6.4.0/l{i}:/x{i}" for i in range(n))
    machine = change(radeon(), env={"LD_LIBRARY_PATH": path})
    started = time.perf_counter()
    found = _one(machine, "GP626")
    took = time.perf_counter() - started
    assert took < 5, f"GP626 took {took:.1f} s"  # 0.3 s measured; quadratic was minutes
    assert len(found.evidence) <= 12
    assert f"and {n - 10} more" in found.evidence[-2] or any(
        f"{n - 10} more" in e for e in found.evidence
    )
    assert found.fix_command is not None
    assert found.fix_command.count("/x") == n and "/opt/rocm-6.4.0" not in found.fix_command


def test_gp615_a_uuid_that_is_not_hex_never_reaches_the_fix_command() -> None:
    """Red-team re-run 11: a snapshot's rocminfo `Uuid: GPU-1;touch x;#` went into
    `export ROCR_VISIBLE_DEVICES=GPU-1;touch x;#`. Only `GPU-` and hex digits are UUIDs; the
    others are named by index. A real UUID is still used."""
    m = radeon_with_igpu()
    agents = [
        {"gfx": "gfx1036", "name": "AMD Radeon Graphics", "chip": "164e", "uuid": "GPU-XX"},
        {"gfx": "gfx1100", "name": "AMD Radeon RX 7900 XTX", "chip": "744c",
         "uuid": "GPU-1;touch${IFS}/tmp/PWNED;#"},
    ]  # fmt: skip
    m["tools"]["rocminfo"] = tool(rocminfo(agents, "AMD Ryzen 9 7950X"))
    assert _one(m, "GP615").fix_command == "export ROCR_VISIBLE_DEVICES=1"
    real = _one(radeon_with_igpu(), "GP615").fix_command
    assert real == "export ROCR_VISIBLE_DEVICES=GPU-5b7c10e4c2a0d1f3"


def test_a_smoke_error_of_only_whitespace_is_no_crash() -> None:
    """Fuzzing (session 8): a snapshot whose smoke error was blanks took the last line of
    nothing (IndexError, exit 4); the failure is still reported, without an error line."""
    m = h100(1)
    m["smoke"].update(ok=False, error=" \n\t ")
    assert "GP616" in _ids(m)
