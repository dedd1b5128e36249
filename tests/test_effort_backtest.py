"""benchmarks/effort_backtest.py: the real-range rule, the committed split and the scoring
(issue 27). The backtest itself needs the ports' git histories; these parts do not."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "effort_backtest", REPO / "benchmarks" / "effort_backtest.py"
)
assert _spec is not None and _spec.loader is not None
bt = importlib.util.module_from_spec(_spec)
sys.modules["effort_backtest"] = bt
_spec.loader.exec_module(bt)


def test_real_range_rule() -> None:
    # [A/2, max(A, min(S, 3A))]
    assert bt.real_range(10, 57.9) == (5.0, 30.0)  # causal-conv1d: three days per commit day
    assert bt.real_range(15, 30) == (7.5, 30.0)  # flash-attention: one author's whole span
    assert bt.real_range(1, 0.7) == (0.5, 1.0)  # never below A


def test_the_committed_split_is_the_seeded_one() -> None:
    ports = bt.load_ports()
    assert len(ports) >= 12
    assert {p["name"]: p["split"] for p in ports} == bt.split(ports, 27)
    dev = [p for p in ports if p["split"] == "dev"]
    assert len(dev) == 12 and {p["regime"] for p in dev} == {"build", "hipify", "kernel"}


def test_every_port_says_where_its_figures_come_from() -> None:
    for p in bt.load_ports():
        assert len(p["before"]) == len(p["after"]) == 40, p["name"]
        assert p["url"].startswith("https://github.com/"), p["name"]
        assert ("work" in p) != ("author_days" in p), p["name"]  # commits or the PR thread
        if "author_days" in p:
            assert p["thread"] and p["source"] and p["span_calendar_days"] > 0, p["name"]


def test_scoring() -> None:
    assert bt.off_by((1.8, 7.1), (0.5, 1.4)) == 1.8 / 1.4
    assert bt.off_by((3, 10), (5, 30)) == 1.0
    assert bt.off_by((6, 26), (33, 198)) == 33 / 26
    assert bt.verdict_moved("blocked", "minor work") == (True, False)
    assert bt.verdict_moved("minor work", "minor work") == (True, True)
    assert bt.verdict_moved("major work", "major work") == (False, False)
    assert bt.verdict_moved("blocked", "blocked") == (False, False)
