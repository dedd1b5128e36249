"""From a snapshot to the report: run every check, then the catch-alls, then the checklist.

Two passes, because two diagnoses are "whatever is left": GP616 (the smoke test failed for
a reason no specific check named) and GP630 (a probe hung or crashed). They only report
what the first pass did not already explain, so one fault is not reported twice. A check
claims the smoke test (lists "smoke" in its probes) only when its evidence is the smoke
test's own failure, so an unrelated finding (a driver one CUDA minor behind) never hides
a real GPU failure (out of memory).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from gpuport import __version__
from gpuport.doctor import checks_env, checks_platform, checks_python, checks_runtime
from gpuport.doctor.checks_base import CHECKS, diagnosis, gpu_list
from gpuport.doctor.errors import Failure
from gpuport.doctor.facts import Facts
from gpuport.doctor.model import CheckStatus, Diagnosis, DoctorReport, LayerCheck
from gpuport.doctor.snapshot import Layer, ProbeRecord, ProbeStatus, Snapshot

_CHECK_MODULES = (checks_platform, checks_runtime, checks_python, checks_env)
_LAYER_ORDER = list(Layer)


def run_checks(snapshot: Snapshot) -> list[Diagnosis]:
    """Every diagnosis for ``snapshot``, worst first. Pure: reads nothing else."""
    facts = Facts(snapshot)
    found: list[Diagnosis] = []
    for rule_id in sorted(CHECKS):
        found.extend(CHECKS[rule_id](facts))
    explained = {p for d in found for p in d.probes}
    smoke = snapshot.probe("smoke")
    smoke_timed_out = smoke is not None and smoke.status is ProbeStatus.TIMEOUT
    # torch seeing no GPU is the expected symptom of any failure found so far: no echo.
    blind_only = facts.smoke_no_device or facts.smoke_failure is Failure.NO_DEVICE
    echo = blind_only and any(d.status is CheckStatus.FAIL for d in found)
    if ("smoke" not in explained or smoke_timed_out) and not echo:
        found.extend(checks_runtime.smoke_catch_all(facts, smoke_timed_out))
    found.extend(_probe_failures(snapshot.probes, {p for d in found for p in d.probes}))
    return sorted(found, key=_order)


def _order(d: Diagnosis) -> tuple[int, int, str]:
    return (-d.status.rank, _LAYER_ORDER.index(d.layer), d.rule_id)


def crashed(record: ProbeRecord) -> bool:
    return record.status is ProbeStatus.ERROR and (record.message or "").startswith("crashed")


def _probe_failures(records: Iterable[ProbeRecord], explained: set[str]) -> list[Diagnosis]:
    """GP630 for each probe that hung, crashed, or broke in a way no diagnosis explains.

    A tool that ran and exited non-zero is data (rocminfo on a machine without a GPU), not
    a broken probe; the checks read its output.
    """
    out = []
    for record in records:
        hung = record.status is ProbeStatus.TIMEOUT
        broke = (
            record.status is ProbeStatus.ERROR
            and not (record.message or "").startswith("exit ")
            and record.name not in explained
        )
        if record.name in ("smoke", "torch") and record.name in explained:
            continue  # GP616 / GP618 already report these with the error text
        if not (hung or crashed(record) or broke):
            continue
        took = f"{record.duration_s:g} s"
        what = "hung" if hung else "crashed" if crashed(record) else "failed"
        cause = f"The {record.name} probe {what}; the checks that need its output were skipped."
        if hung and record.name == "torch":  # `import torch` alone can take long on a busy box
            cause = (
                "`import torch` did not finish in time (a loaded machine or a slow disk make "
                "it take tens of seconds): it is not judged broken, and the checks that need "
                "torch were skipped; run doctor again, or with a larger --timeout."
            )
        out.append(
            diagnosis(
                "GP630",
                [f"{record.name}: {record.message or record.status.value} (after {took})"],
                cause,
                layer=record.layer,
                probes=(record.name,),
            )
        )
    return out


def _layer_rows(facts: Facts, diagnoses: list[Diagnosis]) -> list[LayerCheck]:
    rows = []
    gpu = bool(facts.gpus) or (facts.s.system.wsl and facts.node("/dev/dxg") is not None)
    for layer in Layer:
        mine = [d for d in diagnoses if d.layer is layer]
        bad = [d for d in mine if d.status in (CheckStatus.FAIL, CheckStatus.WARN)]
        if bad:
            worst = max((d.status for d in bad), key=lambda s: s.rank)
            titles = [d.title for d in bad if d.status is worst]
            text = titles[0] + (f" (+{len(bad) - 1} more)" if len(bad) > 1 else "")
            rows.append(LayerCheck(layer=layer, status=worst, text=text))
            continue
        rows.append(_quiet_row(layer, facts, gpu))
    return rows


def _quiet_row(layer: Layer, f: Facts, gpu: bool) -> LayerCheck:
    """The row of a layer with nothing wrong: what was checked, or why it was skipped."""
    if not gpu and layer in (Layer.HARDWARE, Layer.DRIVER, Layer.DEVICE_NODES, Layer.RUNTIME):
        text = "no GPU found" if layer is Layer.HARDWARE else "skipped: no GPU"
        return LayerCheck(layer=layer, status=CheckStatus.SKIP, text=text)
    if layer is Layer.HARDWARE:
        parts = [gpu_list(f, v) for v, p in (("amd", f.has_amd), ("nvidia", f.has_nvidia)) if p]
        text = "; ".join(parts) or "GPU reached through WSL (/dev/dxg)"
    elif layer is Layer.DRIVER:
        mods = [m for m in ("amdgpu", "nvidia") if f.loaded(m)]
        text = ", ".join(f"{m} loaded" for m in mods) or "no driver problem seen"
        if f.nv_driver:
            text += f"; NVIDIA driver {f.nv_driver}"
    elif layer is Layer.DEVICE_NODES:
        nodes = [n.path for n in f.s.nodes if n.accessible]
        text = f"{len(nodes)} GPU device nodes accessible" if nodes else "no node problem seen"
    elif layer is Layer.RUNTIME:
        smoke = f.s.smoke
        if f.smoke_failed or f.smoke_no_device:
            # The cause sits in another layer (driver, torch build...): say so, not "ok".
            text = "smoke test failed; the cause is diagnosed in another layer"
            return LayerCheck(layer=layer, status=CheckStatus.WARN, text=text)
        text = "smoke test passed" if smoke is not None and smoke.ok else "no runtime problem seen"
        if f.agents:
            text = f"rocminfo: {len(f.agents)} GPU agent(s); {text}"
    elif layer is Layer.PYTHON:
        text = f.torch_label() if f.torch_build else "PyTorch not installed"
    else:
        count = len(f.env)
        text = f"{count} GPU-related variable(s) set" if count else "no GPU-related variables set"
    return LayerCheck(layer=layer, status=CheckStatus.OK, text=text)


def summary_lines(facts: Facts, diagnoses: list[Diagnosis]) -> list[str]:
    lines = []
    if facts.gpus:
        vendors = [v for v, p in (("amd", facts.has_amd), ("nvidia", facts.has_nvidia)) if p]
        lines.append("GPUs: " + "; ".join(gpu_list(facts, v) for v in vendors) + ".")
    elif facts.s.system.wsl and facts.node("/dev/dxg") is not None:
        lines.append("GPU: reached through WSL2 (/dev/dxg); no PCI view.")
    else:
        cpu = facts.s.system.cpu
        lines.append("No GPU is present on this machine" + (f" (CPU: {cpu})." if cpu else "."))
    if facts.torch_build:
        lines.append(facts.torch_label() + ".")
    else:
        lines.append("PyTorch is not installed in this Python.")
    tools = facts.toolkits
    lines.append(
        ("Toolkits: " + "; ".join(tools) + ".")
        if tools
        else "Toolkits: no HIP (hipconfig) or CUDA (nvcc) toolkit found."
    )
    fails = sum(d.status is CheckStatus.FAIL for d in diagnoses)
    warns = sum(d.status is CheckStatus.WARN for d in diagnoses)
    if fails or warns:
        lines.append(f"Problems: {fails} failure(s), {warns} warning(s).")
    else:
        lines.append("No problems found.")
    return lines


def diagnose(
    snapshot: Snapshot,
    *,
    replayed: bool = False,
    include_snapshot: bool = False,
    duration_s: float | None = None,
) -> DoctorReport:
    """The report for ``snapshot``; it never touches the machine."""
    facts = Facts(snapshot)
    diagnoses = run_checks(snapshot)
    return DoctorReport(
        gpuport_version=__version__,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        snapshot_id=snapshot.id or snapshot.content_id(),
        replayed=replayed,
        summary=summary_lines(facts, diagnoses),
        layers=_layer_rows(facts, diagnoses),
        diagnoses=diagnoses,
        probes=list(snapshot.probes),
        duration_s=duration_s,
        snapshot=snapshot if include_snapshot else None,
    )
