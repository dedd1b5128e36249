"""Result files are validated whole on load, or refused with one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuport.models import GpuportError, load_result
from gpuport.scan import ScanReport, scan_path
from tests.conftest import EXAMPLE


@pytest.fixture(scope="module")
def report_json() -> str:
    return scan_path(EXAMPLE).model_dump_json()


def test_round_trip(tmp_path: Path, report_json: str) -> None:
    path = tmp_path / "scan.json"
    path.write_text(report_json)
    loaded = load_result(path, ScanReport)
    assert loaded.verdict.value == "blocked"
    assert loaded.findings[0].rule_id


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(kind="gpuport.bench"), "is not a gpuport.scan file"),
        (lambda d: d.update(schema_version="2.0"), "schema version 2.0"),
        (lambda d: d["findings"][0].update(severity="catastrophic"), "findings.0.severity"),
        (lambda d: d.pop("verdict"), "verdict"),
    ],
)
def test_invalid_files_are_refused(tmp_path: Path, report_json: str, mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(report_json)
    mutate(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(GpuportError, match=message) as info:
        load_result(path, ScanReport)
    assert "\n" not in str(info.value)


def test_not_json_and_missing(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text("{not json")
    with pytest.raises(GpuportError, match="is not JSON"):
        load_result(bad, ScanReport)
    with pytest.raises(GpuportError, match="cannot read"):
        load_result(tmp_path / "missing.json", ScanReport)
