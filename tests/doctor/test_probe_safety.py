"""Probes that must not be fooled or held up: code in the working folder, tools that print
without end or leave children behind, a file read that never returns, filters in the
environment, and what a snapshot may say about the user."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuport.doctor import DoctorOptions, ProbeStatus, collect, probes_python
from gpuport.doctor.context import ProbeContext
from gpuport.doctor.tools import MAX_OUTPUT, run_tool
from tests.conftest import REPO
from tests.doctor.conftest import tool_env, write_tool

_GOOD_TORCH = """
import os
__version__ = "9.9.9+good"
class version:
    cuda = None
    hip = None
class cuda:
    @staticmethod
    def is_available():
        raise RuntimeError("cwd=%s cache=%s" % (os.getcwd(), os.environ.get("CUDA_CACHE_DISABLE")))
"""
_EVIL_TORCH = """
import pathlib
pathlib.Path(__file__).with_name("PWNED").write_text("x")
__version__ = "6.6.6+evil"
"""


def test_child_interpreters_never_import_from_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A torch.py in the folder doctor runs from is not imported; PYTHONPATH still counts."""
    monkeypatch.setattr(probes_python, "_torch_installed", lambda: "9.9.9")
    good = tmp_path / "site"
    (good / "torch").mkdir(parents=True)
    (good / "torch" / "__init__.py").write_text(_GOOD_TORCH)
    work = tmp_path / "work"
    work.mkdir()
    (work / "torch.py").write_text(_EVIL_TORCH)
    monkeypatch.chdir(work)
    env = {**tool_env(tmp_path / "bin"), "PYTHONPATH": str(good)}
    options = DoctorOptions(
        root=tmp_path, env=env, python=sys.executable, only=frozenset({"torch", "smoke"})
    )
    s = collect(options)
    assert not (work / "PWNED").exists()
    assert s.torch is not None and s.torch.version == "9.9.9+good"
    assert s.smoke is not None and s.smoke.error is not None
    assert "cwd=/ " in s.smoke.error and "cache=1" in s.smoke.error  # no ~/.nv JIT cache


def test_tool_output_is_bounded_and_the_tool_stopped(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    write_tool(bindir, "chatty", "while :; do echo 0123456789abcdef0123456789abcdef; done")
    ctx = ProbeContext.create(DoctorOptions(root=tmp_path, env=tool_env(bindir)))
    started = time.monotonic()
    outcome = run_tool(ctx, ["chatty"], 20.0)
    assert time.monotonic() - started < 10
    assert outcome.status is ProbeStatus.ERROR and "stopped" in (outcome.message or "")
    assert outcome.run is not None
    assert len(outcome.run.stdout) <= MAX_OUTPUT + 20 and outcome.run.stdout.endswith("[... cut]")


def test_a_grandchild_that_left_the_group_is_not_waited_for(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    # Exits at once, but a setsid'ed child keeps its output pipes open for 8 s.
    write_tool(bindir, "leaky", "echo done; setsid sleep 8 &")
    # Hangs; what it printed before the limit is kept although the pipes stay open.
    write_tool(bindir, "stuck", "echo before; setsid sleep 8 & sleep 8")
    ctx = ProbeContext.create(DoctorOptions(root=tmp_path, env=tool_env(bindir)))
    started = time.monotonic()
    leaky = run_tool(ctx, ["leaky"], 5.0)
    assert time.monotonic() - started < 3
    assert leaky.status is ProbeStatus.OK and leaky.run is not None
    assert leaky.run.stdout == "done\n"
    started = time.monotonic()
    stuck = run_tool(ctx, ["stuck"], 0.5)
    assert time.monotonic() - started < 3
    assert stuck.status is ProbeStatus.TIMEOUT and stuck.run is not None
    assert stuck.run.stdout == "before\n"


def test_gpu_tools_run_without_visibility_filters_and_override(
    fake_machine: tuple[Path, Path],
) -> None:
    root, bindir = fake_machine
    write_tool(bindir, "rocminfo", 'echo "ROCR=${ROCR_VISIBLE_DEVICES-unset} '
               'HSA=${HSA_OVERRIDE_GFX_VERSION-unset}"')  # fmt: skip
    env = {**tool_env(bindir), "ROCR_VISIBLE_DEVICES": "6,7", "HSA_OVERRIDE_GFX_VERSION": "11.0.0"}
    s = collect(DoctorOptions(root=root, env=env, only=frozenset({"rocminfo", "env"})))
    run = s.tools["rocminfo"]
    assert run.stdout.strip() == "ROCR=unset HSA=unset"
    assert run.unset == ["HSA_OVERRIDE_GFX_VERSION", "ROCR_VISIBLE_DEVICES"]
    assert s.env["ROCR_VISIBLE_DEVICES"] == "6,7"  # still judged by GP628


def test_a_tool_in_the_working_folder_is_never_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    write_tool(work, "rocminfo", "echo evil")
    monkeypatch.chdir(work)
    ctx = ProbeContext.create(DoctorOptions(root=tmp_path, env={"PATH": ".::/nonexistent"}))
    assert ctx.which("rocminfo") is None


def test_render_nodes_record_their_gpu_vendor(fake_machine: tuple[Path, Path]) -> None:
    root, bindir = fake_machine
    vendor = root / "sys/class/drm/renderD128/device/vendor"
    vendor.parent.mkdir(parents=True)
    vendor.write_text("0x1002\n")
    s = collect(DoctorOptions(root=root, env=tool_env(bindir), only=frozenset({"nodes"})))
    nodes = {n.path: n.vendor for n in s.nodes}
    assert nodes == {"/dev/kfd": None, "/dev/dri/renderD128": "1002"}


def test_the_snapshot_does_not_name_the_user(
    fake_machine: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import pwd
    from types import SimpleNamespace

    entry = SimpleNamespace(pw_name="zoe", pw_gid=1234)
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: entry)
    root, bindir = fake_machine
    (root / "etc/group").write_text("zoe:x:1234:zoe\nrender:x:109:zoe\nvideo:x:44:zoe\n")
    write_tool(bindir, "rocminfo", "echo 'Runtime at /scratch/zoe/rocm and /home/zoe/x'")
    env = {
        **tool_env(bindir, Path("/home/zoe")),
        "USER": "zoe",
        "LD_LIBRARY_PATH": "/scratch/zoe/lib:/home/zoe/lib",
        "HF_AUTH_X": "a",
        "NCCL_IB_PASSWD": "b",
        "CUDA_MY_PASS": "c",
        "AMD_CREDENTIAL_FILE": "d",
    }
    s = collect(DoctorOptions(root=root, env=env, only=frozenset({"rocminfo", "env", "user"})))
    text = s.model_dump_json()
    assert "zoe" not in text
    assert "Runtime at /scratch/<user>/rocm and ~/x" in s.tools["rocminfo"].stdout
    assert s.env["LD_LIBRARY_PATH"] == "/scratch/<user>/lib:~/lib"
    assert {k: v for k, v in s.env.items() if v == "<redacted>"} == {
        "NCCL_IB_PASSWD": "<redacted>",
        "CUDA_MY_PASS": "<redacted>",
        "AMD_CREDENTIAL_FILE": "<redacted>",
    }  # HF_AUTH_X is not a GPU variable: not kept at all
    assert s.user.configured_groups == ["render", "video"]  # not the per-user group "zoe"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_hung_in_process_probe_does_not_keep_doctor_from_exiting(
    fake_machine: tuple[Path, Path], tmp_path: Path
) -> None:
    """/proc/cpuinfo that never answers (a FIFO nobody writes): it hung the system probe
    until the time limit abandoned it; now no probe opens a file that is not regular, so
    nothing waits at all (twenty-eighth re-run F13)."""
    root, bindir = fake_machine
    cpuinfo = root / "proc/cpuinfo"
    cpuinfo.unlink()
    os.mkfifo(cpuinfo)
    env = {
        **tool_env(bindir, tmp_path / "home"),
        "GPUPORT_DOCTOR_ROOT": str(root),
        "PYTHONPATH": str(REPO / "src"),
    }
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "gpuport", "doctor", "--timeout", "0.5", "--no-smoke-test",
         "--format", "json"],
        env=env, capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
    )  # fmt: skip
    took = time.monotonic() - started
    assert took < 30, f"doctor took {took:.1f} s to exit"
    assert '"system: did not finish in' not in proc.stdout
    assert '"kind": "gpuport.doctor"' in proc.stdout
