"""Details a first-time user meets: aliases, knowledge folders, effort, rule docs."""

from __future__ import annotations

from pathlib import Path

from gpuport.cli.rules_cmd import _code
from gpuport.models import Location, Severity
from gpuport.scan.finding import Finding
from gpuport.scan.rules import RULES
from gpuport.scan.verdict import estimate_effort


def test_product_aliases_resolve(cli) -> None:  # type: ignore[no-untyped-def]
    for alias in ("rx7900", "rx9070", "MI300X", "cdna4"):
        assert cli("scan", "examples/llm-service", "--target", alias, "--format", "json").code == 0


def test_unknown_target_lists_the_aliases(cli) -> None:  # type: ignore[no-untyped-def]
    res = cli("scan", "examples/llm-service", "--target", "h100")
    assert res.code == 2
    assert "gfx942 (mi300x" in res.err


def test_empty_knowledge_folder_is_refused(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    res = cli("scan", "examples/llm-service", "--knowledge", str(tmp_path))
    assert res.code == 2
    assert "holds none of the knowledge files (packages.toml, targets.toml" in res.err


def test_a_works_package_needs_no_route(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "packages.toml").write_text(
        "[[package]]\nname = 'ourlib'\nstatus = 'works'\nsummary = 'pure Python'\n"
        "sources = ['https://example.org/ourlib']\nchecked = 2026-11-01\n"
    )
    assert cli("scan", "examples/llm-service", "--knowledge", str(tmp_path)).code == 0


def _finding(rule: str, path: str, message: str) -> Finding:
    r = RULES[rule]
    return Finding(
        rule_id=rule,
        title=r.title,
        severity=Severity.MAJOR,
        location=Location(path=path, line=1),
        message=message,
        fix=r.fix,
    )


def test_a_package_declared_in_two_manifests_costs_effort_once() -> None:
    same = [
        _finding("GP102", "requirements.txt", "torch: needs the ROCm index"),
        _finding("GP102", "setup.py", "torch: needs the ROCm index"),
        _finding("GP102", "setup.py", "xformers: needs the ROCm index"),
        _finding("GP304", "a.cu", "lane math"),
        _finding("GP304", "b.cu", "lane math"),
    ]
    basis = {i.rule_id: i.count for i in estimate_effort(same, RULES).basis}
    assert basis == {"GP102": 2, "GP304": 2}


def test_dunder_names_become_code_in_markdown() -> None:
    assert _code("keep under #if !defined(__HIP_PLATFORM_AMD__) or `__x__`") == (
        "keep under #if !defined(`__HIP_PLATFORM_AMD__`) or `__x__`"
    )


def test_explain_and_rules_refuse_sarif(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("explain", "GP301", "--format", "sarif").code == 2
    assert cli("rules", "--format", "sarif").code == 2
