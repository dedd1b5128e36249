"""Saved snapshots (constructed broken machines and one recorded on a real machine) replay
to the expected diagnoses; snapshots are validated whole and refused when tampered with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuport.doctor import load_snapshot, run_checks
from gpuport.models import GpuportError

SNAPSHOTS = Path(__file__).parent / "snapshots"

# file -> the rule IDs its replay must produce (exactly).
EXPECTED: dict[str, set[str]] = {
    "mi300x_healthy.json": set(),
    "mi300x_numa_balancing_on.json": {"GP617"},
    "mi210_stale_hsa_override.json": {"GP627"},
    "radeon_7900xtx_healthy.json": set(),
    "radeon_apu_igpu_enumerated_first.json": {"GP615"},
    "radeon_user_not_in_render_group.json": {"GP608"},
    "radeon_cuda_torch_installed.json": {"GP619"},
    "h100_healthy.json": set(),
    "h100_driver_too_old.json": {"GP614"},
    "rtx5090_torch_cu124.json": {"GP613"},
    "cpu_only_vm.json": {"GP601"},
    "recorded_this_machine_no_gpu.json": {"GP601"},
}


def test_every_fixture_has_an_expectation() -> None:
    assert {p.name for p in SNAPSHOTS.glob("*.json")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_replays_to_the_expected_diagnoses(name: str) -> None:
    snapshot = load_snapshot(SNAPSHOTS / name)
    assert {d.rule_id for d in run_checks(snapshot)} == EXPECTED[name]


def test_both_vendors_and_both_amd_families_are_covered() -> None:
    text = " ".join(p.read_text() for p in SNAPSHOTS.glob("*.json"))
    for marker in ("AMD Instinct MI300X", "Radeon RX 7900 XTX", "NVIDIA H100", "RTX 5090"):
        assert marker in text


def _saved(tmp_path: Path, name: str = "h100_healthy.json") -> tuple[Path, dict[str, object]]:
    data = json.loads((SNAPSHOTS / name).read_text())
    path = tmp_path / name
    return path, data


def test_an_edited_snapshot_is_refused(tmp_path: Path) -> None:
    path, data = _saved(tmp_path)
    data["env"] = {"CUDA_VISIBLE_DEVICES": "7"}
    path.write_text(json.dumps(data))
    with pytest.raises(GpuportError, match="does not match its id"):
        load_snapshot(path)


def test_a_hand_written_snapshot_without_id_is_accepted(tmp_path: Path) -> None:
    path, data = _saved(tmp_path)
    data["id"] = ""
    data["env"] = {"CUDA_VISIBLE_DEVICES": "7"}
    path.write_text(json.dumps(data))
    snapshot = load_snapshot(path)
    assert snapshot.id == snapshot.content_id()
    assert "GP628" in {d.rule_id for d in run_checks(snapshot)}


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(kind="gpuport.bench.run"), "is not a gpuport.doctor.snapshot file"),
        (lambda d: d.update(schema_version="9.0"), "schema version 9.0"),
        (lambda d: d.update(probes="all fine"), "probes"),
        (lambda d: d["system"].update(numa_balancing="lots"), "numa_balancing"),
    ],
    ids=["wrong-kind", "future-schema", "bad-probes", "bad-field"],
)
def test_invalid_snapshots_are_refused_with_one_line(tmp_path: Path, mutate, message) -> None:  # type: ignore[no-untyped-def]
    path, data = _saved(tmp_path)
    mutate(data)
    path.write_text(json.dumps(data))
    with pytest.raises(GpuportError, match=message):
        load_snapshot(path)
