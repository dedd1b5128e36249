"""Run every probe, in parallel and each under its own time limit, into one Snapshot.

A probe that raises becomes an ``error`` record, one that does not finish in time a
``timeout`` record; the others are unaffected. Tools enforce their own limits (and kill
their process group); the deadline here also guards in-process probes (a read of a file
that blocks forever, such as a FIFO). Each probe runs in a daemon thread, so a hung one is
abandoned: it cannot keep the process from exiting.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from gpuport import __version__
from gpuport.doctor.context import DoctorOptions, Probe, ProbeContext, ProbeResult
from gpuport.doctor.probes_python import probe_python, probe_smoke, probe_torch
from gpuport.doctor.probes_system import (
    probe_env,
    probe_installs,
    probe_miopen_dirs,
    probe_modules,
    probe_nodes,
    probe_pci,
    probe_system,
    probe_user,
)
from gpuport.doctor.probes_tools import (
    TOOL_COMMANDS,
    make_tool_probe,
    probe_dmesg,
    probe_nvidia_smi,
)
from gpuport.doctor.snapshot import Layer, ProbeRecord, ProbeStatus, Snapshot
from gpuport.models import EnvFingerprint


def _tool(name: str, layer: Layer) -> Probe:
    return Probe(name, layer, make_tool_probe(name, TOOL_COMMANDS[name]))


PROBES: tuple[Probe, ...] = (
    Probe("system", Layer.HARDWARE, probe_system),
    Probe("pci", Layer.HARDWARE, probe_pci),
    Probe("modules", Layer.DRIVER, probe_modules),
    Probe("dmesg", Layer.DRIVER, probe_dmesg),
    _tool("mokutil", Layer.DRIVER),
    _tool("dkms", Layer.DRIVER),
    Probe("nodes", Layer.DEVICE_NODES, probe_nodes),
    Probe("user", Layer.DEVICE_NODES, probe_user),
    _tool("rocminfo", Layer.RUNTIME),
    _tool("amd-smi", Layer.RUNTIME),
    _tool("rocm-smi", Layer.RUNTIME),
    Probe("nvidia-smi", Layer.RUNTIME, probe_nvidia_smi),
    _tool("nvidia-smi-query", Layer.RUNTIME),
    _tool("hipconfig", Layer.RUNTIME),
    _tool("nvcc", Layer.RUNTIME),
    Probe("installs", Layer.RUNTIME, probe_installs),
    Probe("smoke", Layer.RUNTIME, probe_smoke, slow=True),
    Probe("python", Layer.PYTHON, probe_python),
    Probe("torch", Layer.PYTHON, probe_torch, slow=True),
    Probe("env", Layer.ENVIRONMENT, probe_env),
    Probe("miopen-cache", Layer.ENVIRONMENT, probe_miopen_dirs),
)
PROBE_NAMES = tuple(p.name for p in PROBES)

Observer = Callable[[ProbeRecord], None]


def _guarded(probe: Probe, ctx: ProbeContext) -> tuple[ProbeResult, float]:
    started = time.monotonic()
    try:
        result = probe.fn(ctx)
    except Exception as exc:  # a probe bug must cost one probe, never the run
        result = ProbeResult(status=ProbeStatus.ERROR, message=f"{type(exc).__name__}: {exc}")
    return result, time.monotonic() - started


class _Running:
    """One probe in its own daemon thread; ``result`` is set when it returns."""

    def __init__(self, probe: Probe, ctx: ProbeContext) -> None:
        self.result: tuple[ProbeResult, float] | None = None
        self.done = threading.Event()
        self.thread = threading.Thread(
            target=self._run, args=(probe, ctx), name=f"doctor-{probe.name}", daemon=True
        )
        self.thread.start()

    def _run(self, probe: Probe, ctx: ProbeContext) -> None:
        try:
            self.result = _guarded(probe, ctx)
        finally:
            self.done.set()

    def wait(self, timeout: float) -> tuple[ProbeResult, float] | None:
        self.done.wait(timeout)
        return self.result


def _redacted(value: Any, ctx: ProbeContext) -> Any:
    """Every string in the snapshot with the home folder and the login name taken out."""
    if isinstance(value, str):
        return ctx.redact(value)
    if isinstance(value, list):
        return [_redacted(v, ctx) for v in value]
    if isinstance(value, dict):
        return {k: _redacted(v, ctx) for k, v in value.items()}
    return value


def _limit(probe: Probe, options: DoctorOptions) -> float:
    if probe.slow:
        return (options.smoke_timeout_s if probe.name == "smoke" else options.torch_timeout_s) + 5
    return max(5.0, 2 * options.timeout_s) + 3


def collect(options: DoctorOptions | None = None, observer: Observer | None = None) -> Snapshot:
    """Probe this machine (or ``options.root``) read-only and return the snapshot."""
    options = options or DoctorOptions()
    ctx = ProbeContext.create(options)
    selected = [p for p in PROBES if options.only is None or p.name in options.only]
    fields: dict[str, object] = {}
    tools: dict[str, object] = {}
    records: list[ProbeRecord] = []
    started = time.monotonic()
    running = [(p, _Running(p, ctx)) for p in selected]
    for probe, run in running:
        remaining = started + _limit(probe, options) - time.monotonic()
        outcome = run.wait(max(remaining, 0.01))
        if outcome is None:
            limit = _limit(probe, options)
            result = ProbeResult(
                status=ProbeStatus.TIMEOUT, message=f"did not finish in {limit:g} s"
            )
            took = time.monotonic() - started
        else:
            result, took = outcome
        for key, value in result.data.items():
            if key == "tools" and isinstance(value, dict):
                tools.update(value)
            else:
                fields[key] = value
        record = ProbeRecord(
            name=probe.name,
            layer=probe.layer,
            status=result.status,
            message=result.message,
            duration_s=round(took, 3),
        )
        records.append(record)
        if observer is not None:
            observer(record)
    fingerprint = EnvFingerprint.collect()
    snapshot = Snapshot.model_validate(
        {
            **fields,
            "tools": tools,
            "probes": records,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "gpuport_version": __version__,
            "hostname_hash": fingerprint.hostname_hash,
            "timeout_s": options.timeout_s,
        }
    )
    # Probes redact what they store; this pass makes sure nothing names the user.
    clean = _redacted(snapshot.model_dump(mode="json"), ctx)
    return Snapshot.model_validate(clean).with_id()
