"""Every annotated fixture agrees with the rules, and every rule has both kinds of fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.scan.rules import RULES
from gpuport.scan.rules.base import Family
from tests.scan.fixture_harness import FIXTURES, coverage, fixture_files, problems


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_fixture_annotations_hold(path: Path) -> None:
    assert problems(path) == []


def test_every_scan_rule_has_positive_and_negative_fixtures() -> None:
    pos, neg = coverage()
    scan_rules = [r.id for r in RULES.values() if r.family is not Family.ENVIRONMENT]
    missing_pos = [rid for rid in scan_rules if pos.get(rid, 0) == 0]
    missing_neg = [rid for rid in scan_rules if neg.get(rid, 0) == 0]
    assert missing_pos == [], f"rules without an `expect:` fixture line: {missing_pos}"
    assert missing_neg == [], f"rules without an `ok:` fixture line: {missing_neg}"


def test_annotations_name_real_rules() -> None:
    pos, neg = coverage()
    unknown = sorted((set(pos) | set(neg)) - set(RULES))
    assert unknown == []
