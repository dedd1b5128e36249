"""Fixtures: a fake machine on disk with fake vendor tools, and the doctor CLI in-process."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Result
from tests.doctor.machines import rocminfo

RADEON = [{"gfx": "gfx1100", "name": "AMD Radeon RX 7900 XTX", "chip": "744c"}]


def write_tool(bindir: Path, name: str, body: str) -> Path:
    """A small shell script standing in for a vendor tool."""
    path = bindir / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def fake_machine(tmp_path: Path) -> tuple[Path, Path]:
    """(root, bindir): a Radeon desktop in a folder, and a folder of fake tools."""
    root = tmp_path / "root"
    gpu = "sys/bus/pci/devices/0000:03:00.0"
    for name, value in (("vendor", "0x1002"), ("device", "0x744c"), ("class", "0x030000")):
        _write(root, f"{gpu}/{name}", value + "\n")
    _write(root, f"{gpu}/boot_vga", "1\n")
    _write(root, "sys/bus/pci/devices/0000:00:01.0/vendor", "0x8086\n")
    _write(root, "sys/bus/pci/devices/0000:00:01.0/class", "0x060000\n")
    driver = root / "sys/bus/pci/drivers/amdgpu"
    driver.mkdir(parents=True)
    (root / gpu / "driver").symlink_to(driver)
    _write(root, "sys/module/amdgpu/version", "6.8.5\n")
    _write(root, "dev/kfd", "")
    _write(root, "dev/dri/renderD128", "")
    _write(root, "etc/group", "render:x:109:alice\nvideo:x:44:alice\n")
    _write(root, "etc/os-release", 'PRETTY_NAME="Ubuntu 22.04.5 LTS"\n')
    _write(root, "opt/rocm/.info/version", "6.2.0-66\n")
    _write(root, "proc/sys/kernel/numa_balancing", "1\n")
    _write(root, "proc/cpuinfo", "model name\t: AMD Ryzen 9 7950X 16-Core Processor\n")
    _write(
        root,
        "usr/share/misc/pci.ids",
        "1002  Advanced Micro Devices, Inc. [AMD/ATI]\n"
        "\t744c  Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]\n"
        "8086  Intel Corporation\n",
    )
    bindir = tmp_path / "bin"
    bindir.mkdir()
    canned = tmp_path / "rocminfo.txt"
    canned.write_text(rocminfo(RADEON, "AMD Ryzen 9 7950X"))
    write_tool(bindir, "rocminfo", f"cat '{canned}'")
    return root, bindir


def tool_env(bindir: Path, home: Path | None = None) -> dict[str, str]:
    """An environment whose PATH finds the fake tools first, and nothing else of note."""
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "LANG": "C"}
    if home is not None:
        env["HOME"] = str(home)
    return env


@pytest.fixture
def doctor_cli(capsys: pytest.CaptureFixture[str]) -> Iterator[object]:
    """``gpuport doctor ARGS`` in-process through the real entry point (exit codes included).

    The lead wires the command into cli/app.py; until then it is registered here for the
    test and removed afterwards.
    """
    from gpuport.cli import doctor_cmd
    from gpuport.cli.app import app, main

    before = len(app.registered_commands)
    if not any(c.name == "doctor" for c in app.registered_commands):
        doctor_cmd.register(app)

    def run(*args: str) -> Result:
        code = 0
        try:
            main(["doctor", *args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        out = capsys.readouterr()
        return Result(code, out.out, out.err)

    yield run
    del app.registered_commands[before:]


def only_files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if not p.is_dir()}
