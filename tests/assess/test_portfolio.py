"""`gpuport assess A B C …` (issue 29): one portfolio table, one row per project (verdict,
effort, top blockers, cost decision), in every format, assessed on every core."""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Any

from gpuport.assess.portfolio import assess_many
from tests.assess.conftest import BLOCKED, MINOR, PORTABLE

PROJECTS = [BLOCKED, MINOR, PORTABLE]


def test_one_row_per_project_in_order_with_what_the_decision_needs(cli: Any) -> None:
    res = cli("assess", *map(str, PROJECTS), "--format", "json", "--no-progress")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["kind"] == "gpuport.assess.portfolio"
    rows = data["projects"]
    assert [r["project"] for r in rows] == [str(p) for p in PROJECTS]
    assert [r["verdict"] for r in rows] == ["blocked", "minor-work", "ready"]
    blocked, minor, portable = rows
    assert blocked["blockers"] and blocked["blocker_count"] >= len(blocked["blockers"])
    assert any("tensorrt" in b.lower() for b in blocked["blockers"])
    assert "cheaper" in minor["cost"] or "$" in minor["cost"]
    assert portable["model"].startswith("llama-3-70b (pyproject.toml")
    assert data["counts"] == {"blocked": 1, "minor-work": 1, "ready": 1}
    single = json.loads(cli("assess", str(BLOCKED), "--format", "json", "--no-progress").out)
    assert blocked["effort"] and single["verdict"] == blocked["verdict"]
    assert blocked["decision"] == single["decision"]  # the same assessment as alone


def test_every_format_carries_the_table(cli: Any, tmp_path: Path) -> None:
    for fmt, name in (("markdown", "p.md"), ("html", "p.html"), ("terminal", "p.txt")):
        out = tmp_path / name
        res = cli("assess", *map(str, PROJECTS), "--format", fmt, "-o", str(out), "--no-progress")
        assert res.code == 0, res.err
        assert res.err.startswith("gpuport assess: portfolio of 3 projects")
        text = html.unescape(out.read_text(encoding="utf-8"))
        for project in PROJECTS:
            assert str(project) in text, (fmt, project)
        for verdict in ("blocked", "minor", "ready"):
            assert verdict in text.lower(), (fmt, verdict)
    md = (tmp_path / "p.md").read_text(encoding="utf-8")
    assert "| project | verdict | effort | top blockers | cost decision | model | workload |" in md
    page = (tmp_path / "p.html").read_text(encoding="utf-8")
    assert page.count('<tr id="project-') == 3 and "<script" not in page


def test_all_cores_a_list_file_and_the_gate(cli: Any, tmp_path: Path) -> None:
    listing = tmp_path / "projects.txt"
    listing.write_text(
        "# the organisation's services\n" + "\n".join(str(p) for p in PROJECTS) + "\n\n"
    )
    res = cli("assess", "--projects", str(listing), "--format", "json", "--fail-on", "blocked")
    assert res.code == 1  # the worst verdict reaches the gate
    assert len(json.loads(res.out)["projects"]) == 3
    result = assess_many(PROJECTS, {})
    assert result.workers == min(os.cpu_count() or 1, len(PROJECTS))


def test_a_project_that_cannot_be_assessed_is_a_row_and_exit_2(cli: Any, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    res = cli("assess", str(PORTABLE), str(empty), "--format", "json", "--no-progress")
    assert res.code == 2
    rows = json.loads(res.out)["projects"]
    assert rows[0]["verdict"] == "ready" and rows[1]["error"].startswith("nothing to assess")
    assert "1 of 2 project(s) could not be assessed" in res.err
    res = cli("assess", str(PORTABLE), str(tmp_path / "missing"), "--no-progress")
    assert res.code == 2 and "does not exist" in res.err and res.out == ""
    res = cli("assess", str(PORTABLE), str(MINOR), "--run-bench", "quick")
    assert res.code == 2 and "one machine" in res.err
