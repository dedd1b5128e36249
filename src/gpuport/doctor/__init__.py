"""``gpuport doctor``: what is wrong with this machine's GPU stack, and the exact fix.

Three steps, kept apart so that each can be tested alone: :func:`collect` probes the
machine read-only into a :class:`Snapshot`; :func:`diagnose` turns a snapshot (live or
replayed from a file) into a :class:`DoctorReport`; the CLI renders it. Diagnoses are the
GP6xx rules of the shared registry (``gpuport explain GP612``).
"""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import ValidationError

from gpuport.doctor.context import DoctorOptions
from gpuport.doctor.diagnose import diagnose, run_checks
from gpuport.doctor.model import CheckStatus, Diagnosis, DoctorReport, LayerCheck
from gpuport.doctor.runner import PROBE_NAMES, collect
from gpuport.doctor.snapshot import Layer, ProbeStatus, Snapshot, content_hash
from gpuport.models import SCHEMA_VERSION, GpuportError
from gpuport.safeparse import ParseError, json_value

MAX_SNAPSHOT_BYTES = 50 << 20  # a real snapshot is well under 1 MB


def load_snapshot(path: Path) -> Snapshot:
    """A saved snapshot, validated whole; one whose content no longer matches its id is refused.

    A hand-written snapshot (a constructed broken machine) leaves ``id`` empty and is
    accepted; it gets its id here. The file is read and parsed once, and refused (one line,
    exit 2) when it is over 50 MB or nested too deeply to parse.
    """
    from gpuport import fileio

    try:  # a regular file only: a FIFO would hang, /dev/zero never end
        raw = fileio.read_bytes(path, limit=MAX_SNAPSHOT_BYTES)
    except fileio.ReadRefused as exc:
        if exc.reason.startswith("too large"):
            raise GpuportError(
                f"{path} is over {MAX_SNAPSHOT_BYTES >> 20} MB: not a doctor snapshot"
            ) from None
        raise
    try:
        data = json_value(raw)
    except ParseError as exc:
        raise GpuportError(f"{path} is not a doctor snapshot: {exc}") from None
    expected = "gpuport.doctor.snapshot"
    if not isinstance(data, dict) or data.get("kind") != expected:
        what = data.get("kind") if isinstance(data, dict) else type(data).__name__
        raise GpuportError(f"{path} is not a {expected} file (found {what!r})")
    version = str(data.get("schema_version", ""))
    if version.split(".")[0] != SCHEMA_VERSION.split(".")[0]:
        raise GpuportError(
            f"{path} has schema version {version or 'none'}; this gpuport reads {SCHEMA_VERSION}"
        )
    try:
        snapshot = Snapshot.model_validate(data)
        matches = not snapshot.id or snapshot.id == content_hash(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise GpuportError(f"{path} is not a valid {expected}: {where}: {first['msg']}") from None
    except RecursionError:
        raise GpuportError(f"{path} is nested too deeply to be a doctor snapshot") from None
    if not matches:
        raise GpuportError(
            f"{path}: content does not match its id {snapshot.id} (edited after saving?); "
            "clear the id field to replay a hand-edited snapshot"
        )
    return snapshot if snapshot.id else snapshot.with_id()


def run_doctor(options: DoctorOptions | None = None, *, verbose: bool = False) -> DoctorReport:
    """Probe this machine and diagnose it: the one call the CLI and benchmarks make."""
    started = time.monotonic()
    snapshot = collect(options)
    return diagnose(
        snapshot, include_snapshot=verbose, duration_s=round(time.monotonic() - started, 2)
    )


__all__ = [
    "PROBE_NAMES",
    "CheckStatus",
    "Diagnosis",
    "DoctorOptions",
    "DoctorReport",
    "Layer",
    "LayerCheck",
    "ProbeStatus",
    "Snapshot",
    "collect",
    "diagnose",
    "load_snapshot",
    "run_checks",
    "run_doctor",
]
