"""Issue 24, thirteenth sample (relion ``environment_blackwell.yml``): with a ROCm route that
counts, the NVIDIA variant of an install manifest beside the plain one is not what the route
reads: counted apart (scope ``extra``, with a note). Without a route, or with no plain
manifest beside it, it stays core."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scan.project_files import scan_files

_README = "Build for AMD GPUs: `cmake -B build -DMYLIB_HIP=ON`.\n"
_ENV = "name: x\ndependencies:\n  - pip:\n    - torch==2.7.1+cu128\n"


_PLAIN = {"environment.yml": "name: x\n"}
_BW = {"environment_blackwell.yml": _ENV}
_REQ = {"requirements.txt": "numpy\n", "requirements-cu128.txt": "torch==2.7.1+cu128\n"}


@pytest.mark.parametrize(
    ("files", "scope"),
    [
        ({"README.md": _README, **_PLAIN, **_BW}, "extra"),
        ({"README.md": _README, **_REQ}, "extra"),
        ({"README.md": "A CUDA library.\n", **_PLAIN, **_BW}, "core"),
        ({"README.md": _README, **_BW}, "core"),
    ],
    ids=["env-variant", "requirements-variant", "no-route", "no-plain-manifest"],
)
def test_an_nvidia_variant_manifest_is_counted_apart_beside_a_route(
    tmp_path: Path, files: dict[str, str], scope: str
) -> None:
    r = scan_files(tmp_path, files)
    gp105 = [f for f in r.findings if f.rule_id == "GP105"]
    assert gp105 and {f.scope for f in gp105} == {scope}
