"""Issue 23, items 1-2: no value from a project reaches a shell through the compile check, a
project cannot turn the check on, and the check never quotes files outside the project.

Debian's ``hipcc`` (``hipcc.pl``) joins its arguments into one string for a shell and pastes
an argument ending in ``.a`` or ``.lo`` raw: ``-DX;id>MARK;.a`` from a Makefile ran ``id``.
Here the project's flags come through every door the check reads (Makefile, CMake,
``compile_commands.json`` as arguments and as a command string, folder names) and the
toolchain is a stand-in that behaves like ``hipcc.pl`` at its worst: a ``hipcc`` that runs
everything it is given through ``sh -c`` unescaped, naming a compiler that records the argv
it gets. No marker file may appear, ``hipcc`` may only ever see gpuport's own probe, and no
value holding shell characters may reach the compiler as a flag. The same attacks then run
against the real Debian ``hipcc`` and clang where they are installed (CI).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from gpuport import sandbox
from gpuport.hipify import compiler

EVIL = "X;id>{mark};.a"  # a value hipcc.pl would paste into its shell command raw


def _script(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


@pytest.fixture
def fake_hip(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Path]:
    """A shell-interpreting ``hipcc`` and an argv-recording compiler, first on PATH."""
    tools = tmp_path / "toolchain" / "bin"
    tools.mkdir(parents=True)
    hipcc_log = tmp_path / "hipcc.log"
    clang_log = tmp_path / "clang.log"
    clang = _script(
        tools / "clang++",
        "#!/bin/sh\n"
        f'for a in "$@"; do printf \'%s\\037\' "$a"; done >> {clang_log}\n'
        f"printf '\\n' >> {clang_log}\n"
        # the list of files read, as clang writes it with -MD -MF: the unit only
        'mf=""; unit=""; prev=""\n'
        'for a in "$@"; do [ "$prev" = -MF ] && mf="$a"; [ "$prev" = -c ] && unit="$a"; '
        'prev="$a"; done\n'
        '[ -n "$mf" ] && printf \'x.o: %s\\n\' "$unit" > "$mf"\n'
        "exit 0\n",
    )
    _script(
        tools / "hipcc",
        "#!/bin/sh\n"
        f'printf "%s\\n" "$*" >> {hipcc_log}\n'
        f'cmd="{clang} -std=c++11 -O3 $*"\n'
        'if [ "$HIPCC_VERBOSE" = 1 ]; then echo "hipcc-cmd: $cmd" >&2; fi\n'
        'sh -c "$cmd"\n',  # every argument through a shell, unescaped: worse than hipcc.pl
    )
    monkeypatch.setenv("PATH", os.pathsep.join([str(tools), "/usr/bin", "/bin"]))
    monkeypatch.delenv("ROCM_PATH", raising=False)
    # the stand-ins log what they get into tmp_path, which a confined compiler may not write:
    # these tests hold the argv grammar; tests/security/test_confinement.py the confinement
    monkeypatch.setenv(sandbox.UNCONFINED_ENV, "1")
    monkeypatch.chdir(tmp_path_factory.mktemp("outside"))  # taken only outside a project
    compiler._CACHE.clear()
    return {"hipcc_log": hipcc_log, "clang_log": clang_log, "mark": tmp_path / "MARK"}


def _compiler_argvs(log: Path) -> list[list[str]]:
    if not log.exists():
        return []
    return [line.split("\x1f")[:-1] for line in log.read_text().splitlines() if line]


def _project(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        dest = root / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text, encoding="utf-8")
    return root


KERNEL = "#include <cuda_runtime.h>\n__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n"


def _variants(mark: Path) -> dict[str, dict[str, str]]:
    evil = EVIL.format(mark=mark)
    cc = lambda args: json.dumps(  # noqa: E731
        [{"directory": "{root}", "file": "k.cu", "arguments": ["nvcc", *args, "-c", "k.cu"]}]
    )
    return {
        "make -D": {"Makefile": f"CFLAGS = -D{evil}\n", "k.cu": KERNEL},
        "make -I": {"Makefile": f"CFLAGS = -I/{evil}\n", "k.cu": KERNEL},
        "make -U": {"Makefile": f"CFLAGS = -U{evil}\n", "k.cu": KERNEL},
        "make -isystem": {"Makefile": f"CFLAGS = -isystem {evil}\n", "k.cu": KERNEL},
        "make -std": {"Makefile": f"CFLAGS = -std=c++17;id>{mark};.a\n", "k.cu": KERNEL},
        "cmake include_directories": {
            "CMakeLists.txt": f"include_directories({evil})\n",
            "k.cu": KERNEL,
        },
        "cmake target_compile_definitions": {
            "CMakeLists.txt": f"target_compile_definitions(k PRIVATE {evil})\n",
            "k.cu": KERNEL,
        },
        "cmake add_definitions": {"CMakeLists.txt": f"add_definitions(-D{evil})\n", "k.cu": KERNEL},
        "cmake add_compile_definitions": {
            "CMakeLists.txt": f"add_compile_definitions(Y=1;id>{mark};.a)\n",
            "k.cu": KERNEL,
        },
        "compile_commands -D": {"compile_commands.json": cc([f"-D{evil}"]), "k.cu": KERNEL},
        "compile_commands command": {
            "compile_commands.json": json.dumps(
                [
                    {
                        "directory": "{root}",
                        "file": "k.cu",
                        "command": f"nvcc '-D{evil}' -c k.cu",
                    }
                ]
            ),
            "k.cu": KERNEL,
        },
        "compile_commands -include": {
            "compile_commands.json": cc(["-include", f"/{evil}"]),
            "k.cu": KERNEL,
        },
        "compile_commands -iquote": {
            "compile_commands.json": cc(["-iquote", evil]),
            "k.cu": KERNEL,
        },
    }


def _materialise(root: Path, files: dict[str, str]) -> Path:
    return _project(root, {k: v.replace("{root}", str(root)) for k, v in files.items()})


def _assert_nothing_ran(fake: dict[str, Path]) -> None:
    assert not fake["mark"].exists(), "a project value ran as a shell command"
    for line in fake["hipcc_log"].read_text().splitlines() if fake["hipcc_log"].exists() else []:
        # hipcc only ever sees gpuport's own probe: nothing of the project
        assert ("probe.hip" in line and "-###" in line) or line == "--version", line
    for argv in _compiler_argvs(fake["clang_log"]):
        unit = argv.index("-c") + 1 if "-c" in argv else -1
        for i, arg in enumerate(argv):
            if i != unit:
                assert not {";", ">", "|", "&", "$", "`"} & set(arg), argv


@pytest.mark.parametrize("variant", list(_variants(Path("/m"))))
def test_no_project_flag_reaches_a_shell(
    variant: str, fake_hip: dict[str, Path], tmp_path: Path, cli: Any
) -> None:
    files = _variants(fake_hip["mark"])[variant]
    root = _materialise(tmp_path / "proj", files)
    res = cli("hipify", str(root), "-o", str(tmp_path / "out"), "--check", "--format", "json",
              "--hip-version", "5.2", "--fail-on", "never")  # fmt: skip
    assert res.code in (0, 1), res.err
    _assert_nothing_ran(fake_hip)
    report = json.loads(res.out)
    (unit,) = [f for f in report["files"] if f["path"] == "k.cu"]
    assert unit["compile"]["status"] == "ok"  # the stand-in compiler accepts everything
    notes = " ".join(unit["compile"]["notes"])
    assert "project flag dropped" in notes, unit["compile"]
    assert len(_compiler_argvs(fake_hip["clang_log"])) >= 1


def test_a_folder_name_with_shell_characters_reaches_no_shell(
    fake_hip: dict[str, Path], tmp_path: Path, cli: Any
) -> None:
    """One file to stdout: its own folder goes on the include path (was ``-I<folder>``)."""
    folder = tmp_path / "proj" / f"x;id>{fake_hip['mark']};.a"
    src = _project(folder, {"k.cu": KERNEL}) / "k.cu"
    res = cli("hipify", str(src), "--check", "--hip-version", "5.2", "--format", "json")
    assert res.code in (0, 1), res.err
    _assert_nothing_ran(fake_hip)
    (argv,) = _compiler_argvs(fake_hip["clang_log"])[-1:]
    assert not any(a.startswith("-I") and "id>" in a for a in argv)


def test_assess_compile_check_with_a_hostile_folder_name(
    fake_hip: dict[str, Path], tmp_path: Path, cli: Any
) -> None:
    root = _project(tmp_path / "proj", {f"x;id>{fake_hip['mark']};.a/k.cu": KERNEL})
    res = cli("assess", str(root), "--hipify-check", "--format", "json", "--no-progress")
    assert res.code in (0, 1), res.err
    _assert_nothing_ran(fake_hip)
    assert _compiler_argvs(fake_hip["clang_log"]), "the compile check did not run"


def test_a_project_setting_never_starts_the_compiler(
    fake_hip: dict[str, Path], tmp_path: Path, cli: Any
) -> None:
    root = _project(
        tmp_path / "proj",
        {"gpuport.toml": "hipify_check = true\ndoctor = true\n", "k.cu": KERNEL},
    )
    res = cli("assess", str(root), "--format", "json", "--no-progress")
    assert res.code in (0, 1), res.err
    assert not fake_hip["hipcc_log"].exists() and not fake_hip["clang_log"].exists()
    data = json.loads(res.out)
    assert data["hipify"]["check_note"] == "compile check not run (pass --hipify-check)"
    assert "not run" in json.dumps(data["doctor"])


def test_include_paths_outside_the_project_are_dropped_and_said(
    fake_hip: dict[str, Path], tmp_path: Path, cli: Any
) -> None:
    root = _materialise(
        tmp_path / "proj",
        {
            "compile_commands.json": json.dumps(
                [
                    {
                        "directory": "{root}",
                        "file": "k.cu",
                        "arguments": [
                            "nvcc",
                            "-include",
                            "/etc/hostname",
                            "-isystem",
                            "/home",
                            "-I",
                            "inc",
                            "-iquote",
                            "../..",
                            "-c",
                            "k.cu",
                        ],
                    }
                ]
            ),
            "inc/a.h": "",
            "k.cu": KERNEL,
        },
    )
    res = cli("hipify", str(root), "-o", str(tmp_path / "out"), "--check", "--format", "json",
              "--hip-version", "5.2", "--fail-on", "never")  # fmt: skip
    argv = _compiler_argvs(fake_hip["clang_log"])[-1]
    assert "/etc/hostname" not in argv and "/home" not in argv
    assert f"-I{tmp_path / 'out' / 'inc'}" in argv
    unit = next(f for f in json.loads(res.out)["files"] if f["path"] == "k.cu")
    notes = unit["compile"]["notes"]
    assert sum("outside the project" in n for n in notes) == 3, notes


def _depfile(tmp_path: Path, *deps: str) -> Path:
    out = tmp_path / "x.d"
    out.write_text("x.o: " + " \\\n  ".join(d.replace(" ", "\\ ") for d in deps) + "\n")
    return out


def test_compiler_messages_from_outside_files_are_not_quoted(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    allowed = [proj]
    unit = f"{proj}/k.cu"
    dep = _depfile(tmp_path, unit)
    leak = "/home/me/.aws/credentials:1:1: error: unknown type name 'AKIAIOSFODNN7EXAMPLE'"
    out = f"In file included from {unit}:1:\n{leak}\n"
    shown = compiler.shown_error(out, allowed, dep)
    assert "AKIA" not in shown and "not located in a file of the project" in shown
    inside = f"{unit}:3:5: error: use of undeclared identifier 'y'"
    assert compiler.shown_error(inside + "\n", allowed, dep) == inside
    # a link inside the project that leads out is judged where it leads
    (proj / "inc.h").symlink_to("/etc/hostname")
    linked = f"{proj}/inc.h:1:1: error: unknown type name 'host'"
    assert "host'" not in compiler.shown_error(
        linked, allowed, _depfile(tmp_path, unit, f"{proj}/inc.h")
    )
    dep = _depfile(tmp_path, unit)
    assert compiler.shown_error("clang: error: no input files", allowed, dep).startswith("clang:")
    assert "missing" in compiler.shown_error(inside, allowed, tmp_path / "none.d")


def test_a_message_is_quoted_only_at_a_file_the_compile_listed(tmp_path: Path) -> None:
    """Third review: an assembler's ``.include`` reads a file no ``-MD`` list names, and a
    folder named ``d:1: error: z`` made its message about that file look located at ``d``
    (inside the project): the secret's first line came back as an "invalid instruction". A
    message is quoted only when it starts with a file the compile listed as read, followed by
    its line, and names one error."""
    proj = tmp_path / "proj"
    (proj / "d:1: error: z").mkdir(parents=True)
    (proj / "d").write_text("")
    unit = f"{proj}/k.cu"
    allowed = [proj]
    message = "d:1: error: z/../../../secret.txt:1:1: error: invalid instruction mnemonic 'sekrit'"
    for deps in ([unit], [unit, f"{proj}/d"]):
        shown = compiler.shown_error(message + "\n", allowed, _depfile(tmp_path, *deps))
        assert "sekrit" not in shown, deps
    dep = _depfile(tmp_path, unit)
    assert "sekrit" not in compiler.shown_error("<inline asm>:1:1: error: x 'sekrit'", allowed, dep)
    assert "sekrit" not in compiler.shown_error(
        "/tmp/x.s:3: Error: no such instruction: `sekrit'", allowed, dep
    )  # gas, under nvcc's host compiler: no "error:" at all
    assert "sekrit" not in compiler.shown_error(
        f"{unit}:1:1: error: x: error: 'sekrit'", allowed, dep
    )
    nv = f'{unit}(3): error: identifier "y" is undefined'
    assert compiler.shown_error(nv, allowed, dep) == nv  # nvcc's front end


@pytest.mark.parametrize(
    ("flag", "value", "kept"),
    [
        ("-D", "SCALE=2", ["-DSCALE=2"]),
        ("-D", 'VERSION="1.2"', ['-DVERSION="1.2"']),
        ("-D", "F(a,b)=a+b", ["-DF(a,b)=a+b"]),
        ("-D", "X;id>m;.a", None),
        ("-D", "1X", None),
        ("-D", "X=$(shell id)", None),
        ("-U", "X=1", None),
        ("-std=", "c++17", ["-std=c++17"]),
        ("-std=", "gnu++14", ["-std=gnu++14"]),
        ("-std=", "c++17 -fplugin=x.so", None),
        ("-I", "/p/inc", ["-I/p/inc"]),
        ("-I", "/p/../etc", None),
        ("-I", "-fplugin=/p/x.so", None),
        ("-isystem", "/p/third", ["-isystem", "/p/third"]),
        ("-include", "/etc/hostname", None),
        ("-include", "/p/pre.h", ["-include", "/p/pre.h"]),
        ("-fplugin=", "/p/x.so", None),
    ],
)
def test_the_flag_grammar(flag: str, value: str, kept: list[str] | None) -> None:
    args, why = compiler.project_flag(flag, value, [Path("/p")])
    assert args == kept, why
    assert (why is None) == (kept is not None)


# ------------------------------------------------------------------ the real toolchain (CI)


def _real_hipcc() -> str:
    exe = shutil.which("hipcc")
    if exe is None:
        if os.environ.get("GPUPORT_REQUIRE_HIPCC") == "1":
            pytest.fail("GPUPORT_REQUIRE_HIPCC=1 but hipcc is not on PATH")
        pytest.skip("hipcc not on PATH (install Debian's hipcc; CI sets GPUPORT_REQUIRE_HIPCC=1)")
    return exe


@pytest.mark.hipcc
@pytest.mark.parametrize("variant", ["make -D", "compile_commands -D", "cmake add_definitions"])
def test_real_hipcc_runs_nothing_of_the_project(
    variant: str, tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _real_hipcc()
    monkeypatch.setenv("HIP_PLATFORM", "amd")
    mark = tmp_path / "MARK"
    root = _materialise(tmp_path / "proj", _variants(mark)[variant])
    res = cli("hipify", str(root), "-o", str(tmp_path / "out"), "--check", "--format", "json",
              "--hip-version", "5.2", "--fail-on", "never")  # fmt: skip
    assert res.code in (0, 1), res.err
    assert not mark.exists()
    unit = next(f for f in json.loads(res.out)["files"] if f["path"] == "k.cu")
    assert unit["compile"]["status"] == "ok", unit["compile"]
    assert unit["compile"]["command"][0] != shutil.which("hipcc")  # the compiler, directly


@pytest.mark.hipcc
def test_real_compiler_never_quotes_a_file_outside_the_project(
    tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _real_hipcc()
    monkeypatch.setenv("HIP_PLATFORM", "amd")
    secret = tmp_path / "secret.txt"
    secret.write_text("AKIAIOSFODNN7EXAMPLE\n", encoding="utf-8")
    root = _project(
        tmp_path / "proj",
        {"k.cu": f'#include "{secret}"\n' + KERNEL, "l.cu": '#include "inc.h"\n' + KERNEL},
    )
    (root / "inc.h").symlink_to(secret)
    res = cli("hipify", str(root), "--in-place", "--check", "--format", "json",
              "--hip-version", "5.2", "--fail-on", "never")  # fmt: skip
    assert "AKIA" not in res.out + res.err
    files = {f["path"]: f for f in json.loads(res.out)["files"]}
    for unit in ("k.cu", "l.cu"):  # compiled or not, the same words (fourth review's oracle)
        assert files[unit]["compile"]["status"] == "inconclusive", files[unit]["compile"]
        assert files[unit]["compile"]["error"].startswith("not judged: the unit reads a file")


@pytest.mark.hipcc
def test_a_message_at_a_project_line_never_quotes_an_included_outside_file(
    tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Red team: ``struct`` + ``#include "/secret"`` + ``{} obj; int x = obj;`` made the error
    at the project's own line name the secret as a type. A compile that read any file outside
    the project and the toolchain (its ``-MD`` list) shows no message at all."""
    _real_hipcc()
    monkeypatch.setenv("HIP_PLATFORM", "amd")
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRETTOKEN_q7Zx91\n", encoding="utf-8")
    leak = f'#include <cuda_runtime.h>\nstruct\n#include "{secret}"\n{{}} obj;\nint x = obj;\n'
    plain = "#include <cuda_runtime.h>\n#include <vector>\nint y = undefined_name;\n"
    root = _project(tmp_path / "proj", {"a.cu": leak + KERNEL, "b.cu": plain + KERNEL})
    res = cli("hipify", str(root), "-o", str(tmp_path / "out"), "--check", "--format", "json",
              "--hip-version", "5.2", "--fail-on", "never")  # fmt: skip
    assert "SECRETTOKEN" not in res.out + res.err
    files = {f["path"]: f for f in json.loads(res.out)["files"]}
    assert files["a.cu"]["compile"]["status"] == "inconclusive"
    assert "reads a file outside the project" in files["a.cu"]["compile"]["error"]
    # system and toolchain headers do not hide a project's own message
    assert "undefined_name" in files["b.cu"]["compile"]["error"]
    assert "x.d" in files["b.cu"]["compile"]["command"]


def test_the_files_a_compile_read(tmp_path: Path) -> None:
    """The make rule of ``-MD``: continuation lines, escaped spaces, ``$$``, nvcc's ``x.o :``;
    a missing list hides the message."""
    dep = tmp_path / "x.d"
    dep.write_text("x.o : a.cu /usr/include/stdio.h \\\n  /p/my\\ dir/h.h /p/$$x.h\n")
    assert compiler.dependencies(dep) == [
        "a.cu",
        "/usr/include/stdio.h",
        "/p/my dir/h.h",
        "/p/$x.h",
    ]
    assert compiler.read_outside(dep, [tmp_path, Path("/usr/include"), Path("/p")]) is None
    assert compiler.read_outside(dep, [tmp_path, Path("/usr/include")]) == "h.h"
    assert compiler.read_outside(tmp_path / "none.d", [tmp_path]) == "?"
    line = f"{tmp_path}/a.cu:1:1: error: x"
    assert "not shown" in compiler.shown_error(line, [tmp_path], tmp_path / "none.d")


def test_compile_commands_is_parsed_once_per_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 55 MB compile_commands.json took 8 s per unit: it was parsed again for every unit."""
    from gpuport.hipify import check

    entries = [
        {"directory": str(tmp_path), "file": f"k{i}.cu", "arguments": ["nvcc", f"-DK={i}"]}
        for i in range(50)
    ]
    (tmp_path / "compile_commands.json").write_text(json.dumps(entries), encoding="utf-8")
    calls: list[int] = []
    real = check.json_value

    def counting(text: str) -> Any:
        calls.append(len(text))
        return real(text)

    monkeypatch.setattr(check, "json_value", counting)
    check._DB_CACHE.clear()
    flags = [check.project_flags(tmp_path, tmp_path / f"k{i}.cu", None).flags for i in range(50)]
    assert flags[7] == ["-DK=7"] and flags[49] == ["-DK=49"]
    assert len(calls) == 1


@pytest.mark.hipcc
def test_an_include_of_dev_stdin_does_not_wait(
    tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compiler got the caller's stdin: ``#include "/dev/stdin"`` waited 120 s per unit."""
    import time

    _real_hipcc()
    monkeypatch.setenv("HIP_PLATFORM", "amd")
    root = _project(tmp_path / "proj", {"k.cu": '#include "/dev/stdin"\n' + KERNEL})
    r, w = os.pipe()  # a stdin that never ends, on fd 0: the compile must not inherit it
    saved = os.dup(0)
    os.dup2(r, 0)
    try:
        start = time.monotonic()
        res = cli("hipify", str(root), "-o", str(tmp_path / "out"), "--check", "--hip-version",
                  "5.2", "--fail-on", "never")  # fmt: skip
    finally:
        os.dup2(saved, 0)
        for fd in (saved, r, w):
            os.close(fd)
    assert res.code in (0, 1), res.err
    assert time.monotonic() - start < 60


def test_port_nvcc_check_never_quotes_an_included_outside_file(tmp_path: Path) -> None:
    """``port --check`` compiles the CUDA side with nvcc: the same shape names the secret in
    nvcc's message at the project's line, so the same ``-MD`` list hides it."""
    from gpuport.port import check

    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not on PATH")
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRETTOKEN_q7Zx91\n", encoding="utf-8")
    leak = f'struct\n#include "{secret}"\n{{}} obj;\nint x = obj;\n'
    root = _project(tmp_path / "proj", {"a.cu": leak, "b.cu": "int y = undefined_name;\n"})
    status, error, argv = check._nvcc(nvcc, root / "a.cu", [], [root], [])
    assert status == "inconclusive" and error is not None
    assert "SECRETTOKEN" not in error and "outside the project" in error
    assert argv[-3:] == ["-MD", "-MF", "x.d"]
    status, error, _ = check._nvcc(nvcc, root / "b.cu", [], [root], [])
    assert error is not None and "undefined_name" in error


@pytest.mark.hipcc
def test_an_assembler_include_of_an_outside_file_is_never_quoted(
    tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The third review's leak, end to end through the real hipcc and clang."""
    _real_hipcc()
    monkeypatch.setenv("HIP_PLATFORM", "amd")
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRETMARKER_q7Zx_outside_bytes\n")
    proj = tmp_path / "p"
    (proj / "d:1: error: z").mkdir(parents=True)
    (proj / "d:1: error: z" / "j.cu").write_text("__global__ void j(){}\n")
    depth = "../" * (len(proj.parts) + 1)
    (proj / "k.cu").write_text(
        "#include <hip/hip_runtime.h>\n__global__ void k(float* x){ x[0]=1.0f; }\n"
        f'__asm__(".include \\"d:1: error: z/{depth}{str(secret)[1:]}\\"");\n'
    )
    for args in (
        ["hipify", str(proj / "k.cu"), "--check"],
        ["hipify", str(proj), "-o", str(tmp_path / "out"), "--check"],
        ["assess", str(proj), "--hipify-check"],
    ):
        res = cli(*args)
        assert "SECRETMARKER" not in res.out + res.err and "secretmarker" not in res.out + res.err


@pytest.mark.hipcc
def test_the_status_of_a_compile_that_reads_an_outside_file_tells_nothing(
    tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fourth review: units that compile iff bit J of byte I of an outside file is set
    (``struct`` + ``#include "/secret"``, its name from ``__PRETTY_FUNCTION__``, a
    ``static_assert`` on one bit) read the secret back from the ok/failed statuses. A unit
    that read a file outside the project gets the same status and words either way; so does
    one stopped by a fatal error before clang wrote its list (the preprocessor is asked)."""
    _real_hipcc()
    monkeypatch.setenv("HIP_PLATFORM", "amd")
    secret = tmp_path / "secret.txt"
    secret.write_text("hunter2\n", encoding="utf-8")
    head = f'#include <hip/hip_runtime.h>\nstruct\n#include "{secret}"\n{{}} v;\n'
    files = {  # one compiles, one does not, one stops on a missing header after the read
        "yes.cu": head + 'static_assert(sizeof(v) > 0, "");\n',
        "no.cu": head + 'static_assert(sizeof(v) == 0, "");\n',
        "fatal.cu": head + '#include "not_there.h"\n',
    }
    root = _project(tmp_path / "proj", files)
    res = cli("hipify", str(root), "-o", str(tmp_path / "out"), "--check", "--format", "json",
              "--hip-version", "5.2", "--fail-on", "never")  # fmt: skip
    got = {f["path"]: f["compile"] for f in json.loads(res.out)["files"]}
    assert {(c["status"], c["error"]) for c in got.values()} == {
        ("inconclusive", compiler.NOT_JUDGED)
    }, got
