"""--check: changed native files compiled by hipcc and nvcc; project flags validated first."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.port.helpers import project, run
from tests.security.test_compile_check import (  # the lead's hostile toolchain and projects
    _assert_nothing_ran,
    _compiler_argvs,
    _materialise,
    _script,
    _variants,
    fake_hip,  # noqa: F401  (a fixture)
)

MASKED = "__global__ void k(int* x) { x[0] = __shfl_xor_sync(0xffffffff, x[0], 1); }\n"


@pytest.mark.parametrize("variant", list(_variants(Path("/m"))))
def test_no_project_flag_reaches_a_shell_through_port_check(
    variant: str,
    fake_hip: dict[str, Path],  # noqa: F811
    tmp_path: Path,
    cli: Any,
) -> None:
    """``port --check`` compiles through hipify's hardened path: hipcc only answers gpuport's
    probe, and neither compiler gets a project value holding shell characters, even a nvcc
    that runs its arguments through a shell unescaped."""
    nvcc_log = tmp_path / "nvcc.log"
    tools = Path(fake_hip["clang_log"]).parent / "toolchain" / "bin"
    _script(
        tools / "nvcc",
        "#!/bin/sh\n"
        f'for a in "$@"; do printf \'%s\\037\' "$a"; done >> {nvcc_log}\n'
        f"printf '\\n' >> {nvcc_log}\n"
        'mf=""; unit=""; prev=""\n'  # the list of files read (-MD -MF): the unit only
        'for a in "$@"; do [ "$prev" = -MF ] && mf="$a"; [ "$prev" = -c ] && unit="$a"; '
        'prev="$a"; done\n'
        '[ -n "$mf" ] && printf \'x.o: %s\\n\' "$unit" > "$mf"\n'
        'sh -c "true $*"\n',
    )
    files = {
        k: (MASKED if k == "k.cu" else v) for k, v in _variants(fake_hip["mark"])[variant].items()
    }
    root = _materialise(tmp_path / "proj", files)
    res = cli("port", str(root), "--check", "--format", "json")
    assert res.code in (0, 1), res.err
    _assert_nothing_ran(fake_hip)
    report = json.loads(res.out)
    checks = {(c["path"], c["compiler"]): c for c in report["checks"]}
    assert checks[("k.cu", "hipcc")]["status"] == "ok", checks
    assert checks[("k.cu", "nvcc")]["status"] == "ok", checks
    assert "project flag dropped" in " ".join(checks[("k.cu", "nvcc")]["notes"])
    nvcc_argvs = _compiler_argvs(nvcc_log)
    assert nvcc_argvs, "nvcc was not run"
    for argv in nvcc_argvs:
        unit = argv.index("-c") + 1
        for i, arg in enumerate(argv):
            if i != unit:
                assert not {";", ">", "|", "&", "$", "`"} & set(arg), argv
    assert not (root / "k.cu.gpuport.bak").exists()


def test_check_compiles_the_changed_files_with_both_compilers(tmp_path: Path) -> None:
    for name, env in (("hipcc", "GPUPORT_REQUIRE_HIPCC"), ("nvcc", "GPUPORT_REQUIRE_NVCC")):
        if shutil.which(name) is None:
            if os.environ.get(env) == "1":
                pytest.fail(f"{env}=1 but {name} is not on PATH")
            pytest.skip(f"{name} not on PATH")
    # a warp call takes the mask (a data bitmask no call takes is not rewritten, session 18);
    # Debian's HIP 5.2 has no *_sync functions, so the HIP side brings a stand-in
    src = (
        "#if defined(__HIPCC__)\n#include <hip/hip_runtime.h>\n"
        "__device__ inline int __shfl_sync(unsigned long long m, int v, int l) "
        "{ return __shfl(v, l); }\n#endif\n"
        '#include "mask.h"\n'
        "__global__ void k(int* x) { x[threadIdx.x] = __shfl_sync(FULL_MASK, 1, 0); }\n"
    )
    root = project(
        tmp_path, {"mask.h": "#define FULL_MASK 0xffffffff\n__device__ int f(int);\n", "k.cu": src}
    )
    report = run(root, check=True)  # diff mode: compiled in a throw-away copy
    assert report.written == []
    by = {(c.path, c.compiler): c for c in report.checks}
    assert by[("k.cu", "hipcc")].status == "ok", by[("k.cu", "hipcc")].error
    assert by[("k.cu", "nvcc")].status == "ok", by[("k.cu", "nvcc")].error
    assert not (root / "mask.h.gpuport.bak").exists()


def test_a_flag_that_nvcc_would_hand_to_a_shell_never_reaches_it(
    fake_hip: dict[str, Path],  # noqa: F811
    tmp_path: Path,
    cli: Any,
) -> None:
    """Third review: nvcc builds its host compiler's command lines and runs them through a
    shell. A ``-D`` value ending in ``\\\\`` let the next value's spaces split into ``-B
    /[!p]*/.../DIR/``, globbed by that shell, and gcc ran the project's own ``cc1plus`` from
    DIR. The stand-in nvcc splits and globs its arguments as that shell did and runs
    ``DIR/cc1plus`` for any ``-B DIR``; a value nvcc's shell would read never reaches it."""
    mark = tmp_path / "PWNED"
    tools = Path(fake_hip["clang_log"]).parent / "toolchain" / "bin"
    _script(
        tools / "nvcc",
        "#!/bin/sh\n"
        'eval "set -- $*"\n'  # one string, re-read by a shell: spaces split, globs expand
        "while [ $# -gt 0 ]; do\n"
        '  if [ "$1" = -B ] && [ -x "$2/cc1plus" ]; then "$2/cc1plus"; fi\n'
        "  shift\n"
        "done\n",
    )
    root = tmp_path / "proj"
    evil = root / "gpuport_evil_x9k"
    evil.mkdir(parents=True)
    _script(evil / "cc1plus", f"#!/bin/sh\necho ran > {mark}\n")
    (root / "k.cu").write_text(MASKED)
    payload = "y " + " ".join(
        f"-B {root.parent}/[!q]*/{'*/' * d}gpuport_evil_x9k" for d in range(3)
    )
    entry = {"file": "k.cu", "arguments": ["nvcc", "-DA=x\\\\", f"-DB={payload} -DC=z\\\\", "-DD=w",
                                           "-c", "k.cu"]}  # fmt: skip
    (root / "compile_commands.json").write_text(json.dumps([entry]))
    # the stand-in really is vulnerable: given the value, it runs the project's program
    os.system(f"cd {tmp_path} && {tools / 'nvcc'} '-DB={payload}' >/dev/null 2>&1")  # noqa: S605
    assert mark.exists(), "the stand-in nvcc should run DIR/cc1plus for this value"
    mark.unlink()
    res = cli("port", str(root), "--check", "--format", "json")
    assert res.code in (0, 1), res.err
    assert not mark.exists(), "the project's cc1plus ran"
    checks = {(c["path"], c["compiler"]): c for c in json.loads(res.out)["checks"]}
    notes = " ".join(checks[("k.cu", "nvcc")]["notes"])
    assert "dropped for nvcc" in notes and "-DB=y" in notes


def test_a_unit_whose_path_nvcc_would_split_is_not_compiled_with_it() -> None:
    from gpuport.port.check import _nvcc_args

    kept, why = _nvcc_args(["-DX=1", "-I/p/inc"], Path("/p/a b/k.cu"))
    assert kept == [] and why[0].startswith("not compiled with nvcc")
    kept, why = _nvcc_args(["-DX=1", "-DY=a b", "-I/p/a,/etc", '-DZ="q"'], Path("/p/k.cu"))
    assert kept == ["-DX=1"] and len(why) == 3
