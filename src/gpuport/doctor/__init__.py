"""``gpuport doctor``: what is wrong with this machine's GPU stack, and the exact fix.

Three steps, kept apart so that each can be tested alone: :func:`collect` probes the
machine read-only into a :class:`Snapshot`; :func:`diagnose` turns a snapshot (live or
replayed from a file) into a :class:`DoctorReport`; the CLI renders it. Diagnoses are the
GP6xx rules of the shared registry (``gpuport explain GP612``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from gpuport.doctor.context import DoctorOptions
from gpuport.doctor.diagnose import diagnose, run_checks
from gpuport.doctor.model import CheckStatus, Diagnosis, DoctorReport, LayerCheck
from gpuport.doctor.runner import PROBE_NAMES, collect
from gpuport.doctor.snapshot import Layer, ProbeStatus, Snapshot, content_hash
from gpuport.models import GpuportError, load_result


def load_snapshot(path: Path) -> Snapshot:
    """A saved snapshot, validated whole; one whose content no longer matches its id is refused.

    A hand-written snapshot (a constructed broken machine) leaves ``id`` empty and is
    accepted; it gets its id here.
    """
    snapshot = load_result(path, Snapshot)
    raw = json.loads(path.read_bytes())  # load_result has checked that this parses
    if snapshot.id and snapshot.id != content_hash(raw):
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
