"""Running an external diagnostic tool so that it can neither hang nor crash doctor.

Each tool runs in its own session (process group) without a shell, stdin closed, with a
time limit. On timeout the whole group is killed: a wrapper script that started
``sleep`` would otherwise keep the output pipes open and block us past the limit.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from dataclasses import dataclass

from gpuport.doctor.context import ProbeContext, ProbeResult
from gpuport.doctor.snapshot import ProbeStatus, ToolRun

MAX_OUTPUT = 200_000
_SHELL_SIGNALS = {
    128 + signal.SIGABRT,
    128 + signal.SIGBUS,
    128 + signal.SIGFPE,
    128 + signal.SIGSEGV,
}  # characters kept per stream; rocminfo for 8 MI300X is ~60 kB


@dataclass(frozen=True)
class ToolOutcome:
    run: ToolRun | None
    status: ProbeStatus
    message: str | None


def run_tool(
    ctx: ProbeContext,
    argv: list[str],
    timeout_s: float,
    *,
    denied: tuple[str, ...] = (),
    extra_env: dict[str, str] | None = None,
    english: bool = True,
) -> ToolOutcome:
    """Run ``argv`` (argv[0] looked up on PATH); never raises.

    ``denied`` lists output fragments meaning "not allowed to read this" (dmesg without
    privileges): such a run counts as missing data, not as a broken probe.
    """
    exe = ctx.which(argv[0])
    if exe is None:
        return ToolOutcome(None, ProbeStatus.MISSING, f"{argv[0]} not found")
    env = dict(ctx.env)
    if english:
        env["LC_ALL"] = "C"
    env.update(extra_env or {})
    try:
        proc = subprocess.Popen(
            [exe, *argv[1:]],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        return ToolOutcome(None, ProbeStatus.ERROR, f"cannot run {argv[0]}: {exc.strerror or exc}")
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        out, err = _kill(proc)
        run = _tool_run(argv, None, out, err)
        return ToolOutcome(run, ProbeStatus.TIMEOUT, f"no answer after {timeout_s:g} s; killed")
    run = _tool_run(argv, proc.returncode, out, err)
    code = proc.returncode
    if code == 0:
        return ToolOutcome(run, ProbeStatus.OK, None)
    if denied and any(marker in run.text for marker in denied):
        return ToolOutcome(run, ProbeStatus.MISSING, f"{argv[0]}: not permitted")
    if code < 0:
        return ToolOutcome(run, ProbeStatus.ERROR, f"crashed: killed by {_signal_name(-code)}")
    if code in _SHELL_SIGNALS:  # a wrapper script whose program died: 128 + signal
        return ToolOutcome(run, ProbeStatus.ERROR, f"crashed: {_signal_name(code - 128)}")
    return ToolOutcome(run, ProbeStatus.ERROR, f"exit {code}: {first_line(run)}")


def _kill(proc: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    try:
        return proc.communicate(timeout=2.0)
    except subprocess.TimeoutExpired:
        # Something left the process group and still holds the pipes: give up on output.
        proc.kill()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        proc.wait(timeout=2.0)
        return b"", b""


def _tool_run(argv: list[str], code: int | None, out: bytes, err: bytes) -> ToolRun:
    return ToolRun(
        argv=list(argv),
        returncode=code,
        stdout=_decode(out),
        stderr=_decode(err),
    )


def _decode(raw: bytes | None) -> str:
    text = (raw or b"").decode("utf-8", errors="replace")
    return text if len(text) <= MAX_OUTPUT else text[:MAX_OUTPUT] + "\n[... cut]"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def first_line(run: ToolRun) -> str:
    for line in (run.stderr + "\n" + run.stdout).splitlines():
        if line.strip():
            return line.strip()[:200]
    return "(no output)"


def tool_probe_result(
    ctx: ProbeContext,
    key: str,
    argv: list[str],
    *,
    denied: tuple[str, ...] = (),
    keep: bool = True,
) -> tuple[ProbeResult, ToolRun | None]:
    """Run one tool and file its output under ``tools[key]`` (unless ``keep`` is False)."""
    outcome = run_tool(ctx, argv, ctx.options.timeout_s, denied=denied)
    data: dict[str, object] = {}
    if outcome.run is not None and keep:
        data["tools"] = {key: outcome.run}
    return ProbeResult(data, outcome.status, outcome.message), outcome.run
