"""Issue 23, the thirty-second re-run's F3 (low): the probe names of a forged doctor snapshot
reached the terminal and markdown raw (an OSC 52 sequence sets the clipboard). Fails on the
code before."""

from __future__ import annotations

from pathlib import Path


def test_a_replayed_snapshots_probe_names_carry_no_escapes(  # type: ignore[no-untyped-def]
    doctor_cli, tmp_path: Path
) -> None:
    """F3 (low): probe names of a forged snapshot reached the terminal and markdown raw (OSC
    52 sets the clipboard)."""
    import json

    from tests.doctor.test_snapshots import SNAPSHOTS

    data = json.loads((SNAPSHOTS / "mi300x_numa_balancing_on.json").read_text())
    data["probes"][0]["name"] = "system\x1b]52;c;Y3VybCBldmlsIHwgc2gK\x1b\\"
    data["id"] = ""  # a hand-edited snapshot replays with its id cleared
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(data))
    for fmt in ("terminal", "markdown"):
        res = doctor_cli("--from-snapshot", str(forged), "--verbose", "--format", fmt)
        assert "\x1b]52" not in res.out, fmt
