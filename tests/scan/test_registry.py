"""The rule registry: complete metadata, and docs/rules.md generated from it."""

from __future__ import annotations

import re

import pytest

from gpuport.cli.rules_cmd import rules_markdown
from gpuport.scan.rules import CHECKERS, RULES
from gpuport.scan.rules.base import Family
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


def test_kind_families_name_exactly_the_families_whose_checkers_read_each_kind() -> None:
    from gpuport.scan.rules import KIND_FAMILIES, family_of

    for kind, checkers in CHECKERS.items():
        assert {family_of(fn.__module__) for fn in checkers} == set(KIND_FAMILIES[kind]), kind


def test_a_rule_id_leads_to_one_folder_with_its_detector_metadata_and_fixtures() -> None:
    import inspect
    import sys
    from pathlib import Path

    from gpuport.scan.rules import family_for_id
    from tests.scan.fixture_harness import FIXTURES

    for rule in RULES.values():
        folder = FIXTURES / family_for_id(rule.id)
        assert (folder / "__init__.py").is_file(), rule.id
        sources = "".join(p.read_text() for p in folder.glob("*.py"))
        assert f'"{rule.id}"' in sources, f"{rule.id}: metadata or detector outside {folder}"
        if rule.family is not Family.ENVIRONMENT:
            fixtures = [p for p in (folder / "fixtures").rglob("*") if p.is_file()]
            assert any(rule.id in p.read_text(errors="replace") for p in fixtures), rule.id
    for checkers in CHECKERS.values():
        for fn in checkers:
            path = inspect.getsourcefile(sys.modules[fn.__module__])
            assert path is not None and FIXTURES in Path(path).parents


def test_one_family_loads_alone() -> None:
    """`gpuport hipify` checks CUDA files only: loading the native family must not pull in the
    Python, dependency, container or build checkers (start-up cost, issue 18)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from gpuport.scan.rules import FileKind, checkers_for\n"
        "from gpuport.scan.rules.base import RULES\n"
        "assert checkers_for(FileKind.NATIVE)\n"
        "assert RULES and all(r.startswith('GP3') for r in RULES), sorted(RULES)\n"
        "loaded = {m.split('.')[3] for m in sys.modules if m.startswith('gpuport.scan.rules.')}\n"
        "print(sorted(loaded))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['base', 'native']"


def test_family_for_id_refuses_what_is_not_a_rule_id() -> None:
    from gpuport.scan.rules import family_for_id

    assert family_for_id("GP302") == "native" and family_for_id("gp101") == "deps"
    for bad in ("GP902", "XX302", ""):
        with pytest.raises(ValueError, match="not a gpuport rule ID"):
            family_for_id(bad)
