"""Issue 24, fifteenth sample (elpa ``Makefile.am:755``): a ``.cu`` suffix rule that runs
``$(NVCC)`` beside the ``.hip`` rule that runs hipcc is the CUDA side of a build that has a
HIP side: info. Without a HIP rule, the same rule is the build's only way and stays."""

from __future__ import annotations

from pathlib import Path

from gpuport.models import Severity
from tests.scan.project_files import scan_files

_CU_RULE = '.cu.lo:\n\tNVCC="$(NVCC)" $(LIBTOOL) --mode=compile $(NVCCFLAGS) -c $< -o $@\n'
_HIP_RULE = '.hip.lo:\n\tHIPCC="$(HIPCC)" $(LIBTOOL) --mode=compile $(HIPCCFLAGS) -c $< -o $@\n'


def _gp408(root: Path, makefile: str) -> list[Severity]:
    r = scan_files(root, {"Makefile": makefile, "k.cu": "__global__ void k() {}\n"})
    return [f.severity for f in r.findings if f.rule_id == "GP408"]


def test_a_cuda_suffix_rule_beside_the_hip_one_is_info(tmp_path: Path) -> None:
    assert _gp408(tmp_path / "a", "# rules\n" + _CU_RULE + "\n" + _HIP_RULE) == [Severity.INFO]
    assert _gp408(tmp_path / "b", "# rules\n" + _CU_RULE) == [Severity.MAJOR]
