"""The seeded spot-check sample (benchmarks/kb_spotcheck.py) and what the 2026-11-25 check fixed."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from gpuport.knowledge import load_packages

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "kb_spotcheck.py"
POOL = SCRIPT.parent / "kb_spotcheck_pool_20261127.txt"
DOCS = SCRIPT.parents[1] / "docs" / "knowledge.md"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> list[tuple[str, str]]:
    spec = importlib.util.spec_from_file_location("kb_spotcheck", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["kb_spotcheck"] = module
    spec.loader.exec_module(module)
    assert module.main(list(argv)) == 0
    return re.findall(r"^\s*\d+\. (\S+?):(\S+)$", capsys.readouterr().out, flags=re.M)


def test_the_sample_is_reproducible_and_spans_the_four_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    first = _run(capsys, "--pool", str(POOL))
    assert len(first) == 30 and len(set(first)) == 30
    assert first == _run(capsys, "--seed", "20261125", "--pool", str(POOL))
    assert {f for f, _ in first} == {"packages.toml", "gpus.toml", "models.toml", "targets.toml"}
    assert first != _run(capsys, "--seed", "1", "--pool", str(POOL))
    # The pool file is the files' pool before the 2026-11-27 fixes added entries
    _run(capsys, "--write-pool", str(tmp_path / "now.txt"))
    current = (tmp_path / "now.txt").read_text(encoding="utf-8").split()
    frozen = [ln for ln in POOL.read_text(encoding="utf-8").splitlines() if ":" in ln]
    frozen = [ln for ln in frozen if not ln.startswith("#")]
    assert len(frozen) == 241 and set(frozen) <= set(current) and len(current) > 241


@pytest.mark.parametrize(
    ("seed", "heading"), [("20261125", "2026-11-25"), ("20261127", "2026-11-27")]
)
def test_the_recorded_samples_are_the_seeded_draws(
    capsys: pytest.CaptureFixture[str], seed: str, heading: str
) -> None:
    drawn = _run(capsys, "--seed", seed, "--pool", str(POOL))
    docs = DOCS.read_text(encoding="utf-8")
    section = docs.split(f"## Spot check {heading}", 1)[1].split("\n## ", 1)[0]
    recorded = re.findall(r"^\| \d+ \| (\w+):(\S+) \|", section, flags=re.M)
    assert [(f.removesuffix(".toml"), k) for f, k in drawn] == recorded


def test_every_package_entry_is_rechecked_and_the_spot_check_fix_holds() -> None:
    db = load_packages()
    assert all(p.verified for p in db.packages)
    hqq = db.by_dist("hqq")
    assert hqq is not None and "gemlite" in hqq.summary and "ROCm" in hqq.summary
    assert "Marlin/BitBLAS/gemlite kernels target NVIDIA" not in hqq.summary
    migraphx = db.by_dist("migraphx")
    assert migraphx is not None and "placeholder" in migraphx.route.how
    fa3 = db.by_dist("flash-attn-3")
    assert fa3 is not None and "placeholder" in fa3.caveats["all"]
    torchaudio = db.by_dist("torchaudio")
    assert torchaudio is not None and "2.11" in torchaudio.caveats["all"]
