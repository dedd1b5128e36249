"""`doctor`'s cause and fix wrap under their own start (issue 29 trial): at 80 columns the
second line of a long fix began at column 0, below the label."""

from __future__ import annotations

import io

from rich.console import Console

from gpuport.doctor.model import CheckStatus, Diagnosis
from gpuport.doctor.snapshot import Layer
from gpuport.models import Severity
from gpuport.render.doctor_render import _diagnosis_terminal


def test_cause_and_fix_continue_indented_at_any_width() -> None:
    long = "Reinstall torch together from one index; " * 6
    diag = Diagnosis(
        rule_id="GP618",
        title="PyTorch is installed but cannot be imported",
        severity=Severity.BLOCKER,
        status=CheckStatus.FAIL,
        layer=Layer.PYTHON,
        evidence=["import torch: ImportError"],
        cause="a shared library it needs is missing " * 4,
        fix=long,
    )
    for width in (60, 80, 120):
        buf = io.StringIO()
        _diagnosis_terminal(diag, Console(file=buf, width=width, color_system=None))
        lines = buf.getvalue().splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("  cause: "))
        end = next(i for i, line in enumerate(lines) if line.startswith("  more:"))
        body = lines[start:end]
        assert len(body) >= 4 and max(len(line) for line in body) <= width
        assert all(line.startswith(("  cause: ", "  fix:   ", " " * 9)) for line in body), body
        assert " ".join(" ".join(body).split()).count("Reinstall torch") == 6
