"""`assess`'s terminal conclusions name their evidence with a rule's folder written once
(issue 29): a long package path repeated per place filled a narrow terminal."""

from __future__ import annotations

from gpuport.assess.model import Evidence
from gpuport.models import Location
from gpuport.render.assess_terminal import evidence_text

FOLDER = "src/acme_fused_kernels/ops/cute_dsl/ops"


def _finding(rule: str, path: str, line: int) -> Evidence:
    loc = Location(path=path, line=line, column=8)
    return Evidence(
        kind="finding", ref=rule, label=f"{rule} {loc.display()}", anchor="f", location=loc
    )


def test_a_rules_places_in_one_folder_name_the_folder_once() -> None:
    evidence = [_finding("GP201", f"{FOLDER}/kernel_{i}.py", i + 1) for i in range(9)]
    evidence.insert(2, _finding("GP301", "csrc/k.cu", 27))
    evidence.append(Evidence(kind="cost", ref="h100", label="h100: $0.08/Mtok", anchor="g"))
    text = evidence_text(evidence)
    assert text == (
        f"GP201 {FOLDER}/: kernel_0.py:1:8, kernel_1.py:2:8, kernel_2.py:3:8, "
        "kernel_3.py:4:8, kernel_4.py:5:8; GP301 csrc/k.cu:27:8 (+5)"
    )
    assert text.count(FOLDER) == 1
    assert evidence_text(evidence[-1:]) == "h100: $0.08/Mtok"
    assert evidence_text([_finding("GP102", "pyproject.toml", 3)]) == "GP102 pyproject.toml:3:8"
