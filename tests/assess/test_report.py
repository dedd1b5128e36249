"""The same Assessment as JSON (round trip), Markdown and HTML; hostile text stays text."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpuport.assess import Assessment, assess, load_settings
from gpuport.models import load_result
from gpuport.render import assess_html, assess_markdown
from gpuport.render.svg import Bar, bar_chart
from tests.assess.conftest import BLOCKED, HOSTILE_CU, HOSTILE_NAME, hostile_project
from tests.conftest import EXAMPLE

SECTION_IDS = [sid for sid, _ in assess_html.SECTIONS]


@pytest.fixture(scope="module")
def example() -> Assessment:
    return assess(load_settings(EXAMPLE))


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Assessment:
    root = hostile_project(tmp_path_factory.mktemp("hostile") / "proj")
    return assess(load_settings(root))


def test_json_round_trip_through_load_result(example: Assessment, tmp_path: Path) -> None:
    path = tmp_path / "assessment.json"
    path.write_text(example.model_dump_json(indent=2))
    data = json.loads(path.read_text())
    assert data["kind"] == "gpuport.assess" and data["schema_version"]
    assert data["verdict"] == "blocked"
    assert "validate" in data and "validate_" not in data
    back = load_result(path, Assessment)
    assert back == example


def test_json_verdict_values_are_the_documented_ones() -> None:
    a = assess(load_settings(BLOCKED))
    assert json.loads(a.model_dump_json())["verdict"] in {
        "ready",
        "minor-work",
        "major-work",
        "blocked",
    }


def test_markdown_has_every_section(example: Assessment) -> None:
    text = assess_markdown.render(example)
    for heading in assess_markdown.HEADINGS:
        assert f"\n## {heading}\n" in text, heading
    assert "**BLOCKED**" in text
    assert "| GP301 |" in text
    assert "| component | regime | days | basis | AMD equivalent |" in text
    assert f"Total: **{example.effort.days()}**" in text


def test_markdown_escapes_hostile_text(hostile: Assessment) -> None:
    text = assess_markdown.render(hostile)
    assert "<script>" not in text and "<img" not in text
    assert "x&lt;script&gt;alert(1)&lt;!--.py" in text


def test_html_has_every_section_and_chart(example: Assessment) -> None:
    html = assess_html.render(example)
    for sid in SECTION_IDS:
        assert f'<section id="{sid}">' in html, sid
    assert 'id="chart-severity"' in html and 'id="chart-effort"' in html
    # the effort by component, each row with its regime and range, and the calendar note
    assert '<table id="effort-components">' in html
    assert html.count('<tr id="effort-component-') == len(example.effort.components) > 0
    assert "engineer time" in html
    assert 'id="chart-cost-llama-3-8b"' in html
    assert html.count('<tr id="finding-') == len(example.scan.findings)
    for c in example.conclusions:
        for e in c.evidence:
            assert f'id="{e.anchor}"' in html, e.anchor


def test_html_is_self_contained(example: Assessment) -> None:
    html = assess_html.render(example)
    assert "<script" not in html.lower()
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    # nothing to fetch: no src= at all, and links only to anchors in the page
    assert not re.search(r"\ssrc\s*=", html)
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert hrefs and all(h.startswith("#") for h in hrefs), hrefs
    assert "<link" not in html and "@import" not in html


def test_html_escapes_hostile_file_names_and_snippets(hostile: Assessment) -> None:
    names = {f.location.path for f in hostile.scan.findings}
    assert {HOSTILE_NAME, HOSTILE_CU} <= names  # the hostile files were really scanned
    html = assess_html.render(hostile)
    assert "<script" not in html.lower()
    assert "<img" not in html.lower() and "<!--.py" not in html
    assert "x&lt;script&gt;alert(1)&lt;!--.py" in html
    assert "k&lt;img src=x onerror=alert(4)&gt;.cu" in html
    assert "&lt;/code&gt;&lt;script&gt;alert(5)&lt;/script&gt;" in html


def test_html_makes_control_characters_visible(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "a.py").write_text("import pynvml  # \u202eevil\n")
    html = assess_html.render(assess(load_settings(root)))
    assert "\u202e" not in html and "\\u202e" in html


def test_svg_escapes_labels_and_handles_empty_charts() -> None:
    svg = bar_chart(
        [Bar("<b>x</b>", 3.0, href='#a"b'), Bar("y", 1.0, low=0.5, high=1.5)],
        title="<t>",
        chart_id="c",
        unit="h",
        reference=1.0,
    )
    assert "<b>" not in svg and "&lt;b&gt;x&lt;/b&gt;" in svg
    assert 'href="#a&quot;b"' in svg and "&lt;t&gt;" in svg
    empty = bar_chart([], title="none", chart_id="e")
    assert "nothing to show" in empty and empty.startswith("<svg")
