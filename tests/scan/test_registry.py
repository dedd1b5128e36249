"""The rule registry: complete metadata, and docs/rules.md generated from it."""

from __future__ import annotations

import re

import pytest

from gpuport.cli.rules_cmd import rules_markdown
from gpuport.scan.rules import RULES
from gpuport.scan.rules.base import CHECKERS, Family
from tests.conftest import REPO


def test_at_least_forty_rules_across_all_families() -> None:
    assert len(RULES) >= 40
    families = {r.family for r in RULES.values()}
    assert families >= {
        Family.DEPENDENCIES,
        Family.PYTHON,
        Family.NATIVE,
        Family.BUILD,
        Family.CONTAINERS,
    }


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_rule_metadata_is_complete(rule_id: str) -> None:
    rule = RULES[rule_id]
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
    assert len(rule.title) > 10 and not rule.title.endswith(".")
    assert len(rule.rationale) > 60
    assert len(rule.fix) > 15
    assert rule.references, "every rule links the evidence that the problem is real"
    assert all(ref.startswith("https://") for ref in rule.references)
    assert rule.effort_hours >= 0


def test_rule_names_are_unique() -> None:
    names = [r.name for r in RULES.values()]
    assert len(names) == len(set(names))


def test_every_file_kind_that_is_scanned_has_a_checker() -> None:
    from gpuport.scan.rules.base import FileKind

    assert set(FileKind) <= set(CHECKERS)


def test_docs_rules_md_is_generated_from_the_registry() -> None:
    on_disk = (REPO / "docs" / "rules.md").read_text()
    assert on_disk == rules_markdown(), "docs/rules.md is stale: run `make docs`"


def test_explain_prints_one_rule(cli) -> None:  # type: ignore[no-untyped-def]
    res = cli("explain", "GP301", "--format", "markdown")
    assert res.code == 0
    assert "### GP301" in res.out
    assert '<a id="gp301"></a>' in res.out
    assert "**Fix.**" in res.out
    by_name = cli("explain", RULES["GP301"].name, "--format", "json")
    assert '"id": "GP301"' in by_name.out


def test_rules_json_lists_every_rule(cli) -> None:  # type: ignore[no-untyped-def]
    import json

    res = cli("rules", "--format", "json")
    assert [r["id"] for r in json.loads(res.out)] == sorted(RULES)
