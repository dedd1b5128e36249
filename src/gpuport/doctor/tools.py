"""Running an external diagnostic tool so that it can neither hang nor crash doctor.

Each tool runs through :func:`gpuport.subproc.run`: in its own session (process group)
without a shell, stdin closed, from a neutral working folder, with a time limit. Its output
is read as it comes, up to :data:`MAX_OUTPUT` bytes per stream: a tool that prints more is
stopped there. On timeout (or too much output) the whole group is killed: a wrapper script
that started ``sleep`` would otherwise keep the output pipes open and block us past the
limit. A grandchild that left the group with ``setsid`` cannot be killed that way; it is not
waited for either.
"""

from __future__ import annotations

import signal
from collections.abc import Iterable
from dataclasses import dataclass

from gpuport import subproc
from gpuport.doctor.context import ProbeContext, ProbeResult
from gpuport.doctor.snapshot import ProbeStatus, ToolRun

MAX_OUTPUT = 256_000  # bytes kept per stream by default; nvidia-smi for 8 GPUs is ~10 kB
NEUTRAL_CWD = subproc.NEUTRAL_CWD  # never the user's folder: python -c would import torch.py
_SHELL_SIGNALS = {
    128 + signal.SIGABRT,
    128 + signal.SIGBUS,
    128 + signal.SIGFPE,
    128 + signal.SIGSEGV,
}


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
    unset: Iterable[str] = (),
    english: bool = True,
    max_output: int = MAX_OUTPUT,
) -> ToolOutcome:
    """Run ``argv`` (argv[0] looked up on PATH); never raises.

    ``denied`` lists output fragments meaning "not allowed to read this" (dmesg without
    privileges): such a run counts as missing data, not as a broken probe. ``unset``
    names environment variables the tool must not see (a visibility filter would make
    rocminfo hide GPUs); those that were set are recorded in the run. ``max_output``
    bytes per stream are kept; a tool that prints more is stopped.
    """
    exe = ctx.which(argv[0])
    if exe is None:
        if (seen := ctx.passed_over(argv[0])) is not None:
            said = f"{argv[0]} not run: found only at {seen}, inside a project (gpuport runs no"
            return ToolOutcome(None, ProbeStatus.MISSING, said + " program from a project)")
        return ToolOutcome(None, ProbeStatus.MISSING, f"{argv[0]} not found")
    # the same PATH the tool was looked up on
    env = subproc.safe_env(base=ctx.env, avoid=ctx.options.avoid)
    removed = sorted(name for name in set(unset) if env.pop(name, None) is not None)
    if english:
        env["LC_ALL"] = "C"
    env.update(extra_env or {})
    try:
        done = subproc.run([exe, *argv[1:]], timeout_s=timeout_s, env=env, max_output=max_output)
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        return ToolOutcome(None, ProbeStatus.ERROR, f"cannot run {argv[0]}: {why}")
    out, err, ended = done.stdout, done.stderr, done.ended
    if ended == "timeout":
        run = _tool_run(ctx, argv, None, out, err, removed, max_output)
        return ToolOutcome(run, ProbeStatus.TIMEOUT, f"no answer after {timeout_s:g} s; killed")
    if ended == "overflow":
        run = _tool_run(ctx, argv, None, out, err, removed, max_output)
        return ToolOutcome(
            run, ProbeStatus.ERROR, f"printed more than {max_output // 1000} kB; stopped"
        )
    code = done.returncode if done.returncode is not None else -signal.SIGKILL  # not reached
    run = _tool_run(ctx, argv, code, out, err, removed, max_output)
    if code == 0:
        return ToolOutcome(run, ProbeStatus.OK, None)
    if denied and any(marker in run.text for marker in denied):
        return ToolOutcome(run, ProbeStatus.MISSING, f"{argv[0]}: not permitted")
    if code < 0:
        return ToolOutcome(run, ProbeStatus.ERROR, f"crashed: killed by {_signal_name(-code)}")
    if code in _SHELL_SIGNALS:  # a wrapper script whose program died: 128 + signal
        return ToolOutcome(run, ProbeStatus.ERROR, f"crashed: {_signal_name(code - 128)}")
    return ToolOutcome(run, ProbeStatus.ERROR, f"exit {code}: {first_line(run)}")


def _tool_run(
    ctx: ProbeContext,
    argv: list[str],
    code: int | None,
    out: bytes,
    err: bytes,
    removed: list[str],
    limit: int,
) -> ToolRun:
    return ToolRun(
        argv=list(argv),
        returncode=code,
        stdout=ctx.redact(_decode(out, limit)),
        stderr=ctx.redact(_decode(err, limit)),
        unset=removed,
    )


def _decode(raw: bytes | None, limit: int = MAX_OUTPUT) -> str:
    """Bytes cut to the limit first, then decoded: a huge stream is never held as text."""
    raw = raw or b""
    if len(raw) <= limit:
        return raw.decode("utf-8", errors="replace")
    return raw[:limit].decode("utf-8", errors="replace") + "\n[... cut]"


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
    unset: Iterable[str] = (),
    max_output: int = MAX_OUTPUT,
) -> tuple[ProbeResult, ToolRun | None]:
    """Run one tool and file its output under ``tools[key]`` (unless ``keep`` is False)."""
    outcome = run_tool(
        ctx, argv, ctx.options.timeout_s, denied=denied, unset=unset, max_output=max_output
    )
    data: dict[str, object] = {}
    if outcome.run is not None and keep:
        data["tools"] = {key: outcome.run}
    return ProbeResult(data, outcome.status, outcome.message), outcome.run
