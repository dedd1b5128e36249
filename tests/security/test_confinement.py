"""Issue 23: a compiler gpuport starts reads only the project, the output tree and the
toolchain, writes only its throw-away folder, and runs only the toolchain's programs
(:mod:`gpuport.sandbox`, Landlock).

The fifth review's channel: an inline ``asm(".include \\"/outside/file\\"")`` with
``.if NAME > 5`` / ``.error`` is read by the *assembler*, which no ``-MD`` list names; the
outside value came back in the message at a project line and, a bit per unit, in the
statuses. Confined, the assembler cannot open the file: the unit fails the same way
whatever the file holds.

Where the kernel has no Landlock these tests fail when ``GPUPORT_REQUIRE_LANDLOCK=1``
(``.ci/run`` sets it) and are skipped, saying why, otherwise; the refusal path is tested on
every kernel.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from gpuport import sandbox, subproc
from gpuport.hipify import check as hipify_check
from gpuport.hipify import compiler
from gpuport.hipify.run import CompileResult
from gpuport.port import check as port_check
from tests.conftest import require_tool


def _need_landlock() -> None:
    if sandbox.abi() > 0:
        return
    if os.environ.get("GPUPORT_REQUIRE_LANDLOCK") == "1":
        pytest.fail("GPUPORT_REQUIRE_LANDLOCK=1 but this kernel has no Landlock")
    pytest.skip("this kernel has no Landlock (CI sets GPUPORT_REQUIRE_LANDLOCK=1)")


_tool = require_tool


@pytest.fixture
def confined(monkeypatch: pytest.MonkeyPatch) -> None:
    _need_landlock()
    monkeypatch.delenv(sandbox.UNCONFINED_ENV, raising=False)


def _cage(tmp_path: Path) -> tuple[sandbox.Confinement, Path, Path, Path]:
    proj, work, outside = tmp_path / "proj", tmp_path / "work", tmp_path / "outside"
    for d in (proj, work, outside):
        d.mkdir()
    cage = sandbox.compile_confinement(read=[proj], run=[], work=work)
    return cage, proj, work, outside


def test_a_confined_program_reads_only_what_it_is_given(tmp_path: Path, confined: None) -> None:
    cage, proj, _, outside = _cage(tmp_path)
    (outside / "secret").write_text("SECRET=7\n")
    (proj / "source.cu").write_text("int x;\n")
    home = Path.home()
    script = (
        f"cat {outside}/secret; cat {proj}/source.cu; ls {home} >/dev/null && echo HOME-LISTED; "
        "cat /etc/hostname /proc/self/environ 2>/dev/null | head -c 20; echo END"
    )
    done = subproc.run(["/bin/sh", "-c", script], timeout_s=30, confine=cage)
    out = done.stdout.decode()
    assert "SECRET" not in out
    assert "int x;" in out  # the project is readable
    assert "HOME-LISTED" not in out
    assert out.rstrip().endswith("END") and out.count("\n") <= 2, out


def test_a_confined_program_writes_only_its_work_folder_and_runs_no_project_file(
    tmp_path: Path, confined: None
) -> None:
    cage, proj, work, outside = _cage(tmp_path)
    tool = proj / "cc1plus"
    tool.write_text("#!/bin/sh\necho RAN\n")
    tool.chmod(0o755)
    script = (
        f"echo a > {work}/ok; echo b > {outside}/bad; echo c > {proj}/bad; "
        f"cp {tool} {work}/copy; chmod +x {work}/copy; {work}/copy; {tool}; true"
    )
    done = subproc.run(["/bin/sh", "-c", script], timeout_s=30, confine=cage)
    assert (work / "ok").read_text() == "a\n"
    assert not (outside / "bad").exists() and not (proj / "bad").exists()
    assert b"RAN" not in done.stdout, done.text()


def test_a_program_gets_a_file_size_limit(tmp_path: Path) -> None:
    out = tmp_path / "big"
    subproc.run(
        ["/bin/sh", "-c", f"head -c 3000000 /dev/zero > {out}"],
        timeout_s=30,
        max_file=1_000_000,
    )
    assert out.stat().st_size <= 1_000_000


ASM_LEAK = (
    "__global__ void k(float* x) {{ x[threadIdx.x] = 1.0f; }}\n"
    'asm(".include \\"{secret}\\"\\n.if SECRET > 5\\n.error \\"big\\"\\n.endif\\n");\n'
)


def _hipify_statuses(root: Path, out: Path, cli: Any) -> list[dict[str, Any]]:
    res = cli("hipify", str(root), "-o", str(out), "--check", "--format", "json",
              "--hip-version", "5.2", "--fail-on", "never")  # fmt: skip
    assert res.code == 0, res.err
    return [f["compile"] for f in json.loads(res.out)["files"]]


def test_an_assembler_include_tells_nothing_of_an_outside_file(
    tmp_path: Path, confined: None, cli: Any
) -> None:
    """The same status and words whether the outside value is 1 or 7, and never the value."""
    _tool("hipcc", "GPUPORT_REQUIRE_HIPCC")
    secret = tmp_path / "secret.txt"
    root = tmp_path / "proj"
    root.mkdir()
    (root / "k.cu").write_text(ASM_LEAK.format(secret=secret))
    seen = []
    for value in (1, 7):
        secret.write_text(f"SECRET={value}\n")
        compiler._CACHE.clear()
        got = _hipify_statuses(root, tmp_path / f"out{value}", cli)
        seen.append([(c["status"], c["error"]) for c in got])
        assert "SECRET" not in json.dumps(got) and "big" not in json.dumps(got)
    assert seen[0] == seen[1], seen


def test_port_nvcc_check_is_confined(tmp_path: Path, confined: None) -> None:
    nvcc = _tool("nvcc", "GPUPORT_REQUIRE_NVCC")
    secret = tmp_path / "secret.txt"
    root = tmp_path / "proj"
    root.mkdir()
    unit = root / "k.cu"
    unit.write_text(ASM_LEAK.format(secret=secret))
    seen = []
    for value in (1, 7):
        secret.write_text(f"SECRET={value}\n")
        status, error, _ = port_check._nvcc(nvcc, unit, [], [root], [root])
        seen.append((status, error))
        assert "SECRET" not in str(error) and "big" not in str(error)
    assert seen[0] == seen[1], seen
    (root / "ok.cu").write_text("__global__ void k(float* x) { x[0] = 1.0f; }\n")
    assert port_check._nvcc(nvcc, root / "ok.cu", [], [root], [root])[0] == "ok"


def test_without_landlock_the_compile_check_does_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No Landlock and no word from the user: the program is not started, and the check
    says why for every unit; the user's ``GPUPORT_UNCONFINED_COMPILE=1`` lets it run when
    gpuport starts outside any project."""
    monkeypatch.setattr(sandbox, "abi", lambda: 0)
    monkeypatch.delenv(sandbox.UNCONFINED_ENV, raising=False)
    mark = tmp_path / "ran"
    cage = sandbox.compile_confinement(read=[tmp_path], run=[], work=tmp_path)
    with pytest.raises(PermissionError, match="no Landlock"):
        subproc.run(["/bin/sh", "-c", f"touch {mark}"], timeout_s=10, confine=cage)
    assert not mark.exists()
    reason = sandbox.refusal()
    assert reason is not None and sandbox.UNCONFINED_ENV in reason
    results = port_check._compile_all(tmp_path, tmp_path, ["a.cu"], "/x/hipcc", None, ["gfx90a"])
    assert {r.status for r in results} == {"skipped"}
    assert all(r.error == reason for r in results)
    monkeypatch.setenv(sandbox.UNCONFINED_ENV, "1")
    # inside a project (a project's .envrc may have set it) the switch is not taken (F6)
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / ".envrc").write_text(f"export {sandbox.UNCONFINED_ENV}=1\n")
    monkeypatch.chdir(tmp_path / "proj")
    assert sandbox.refusal() == reason and sandbox.ignored_switch()
    with pytest.raises(PermissionError, match="no Landlock"):
        subproc.run(["/bin/sh", "-c", f"touch {mark}"], timeout_s=10, confine=cage)
    assert not mark.exists()
    monkeypatch.chdir(tmp_path)  # outside any project: the user's own switch
    assert sandbox.refusal() is None
    subproc.run(["/bin/sh", "-c", f"touch {mark}"], timeout_s=10, confine=cage)
    assert mark.exists()


def test_units_stop_after_two_ran_into_a_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``.rept`` bomb in every unit costs two units' limits, not one per unit."""
    from gpuport.hipify.run import FileResult, HipifyReport

    calls: list[Path] = []

    def bomb(chain: Any, unit: Path, *a: Any, **k: Any) -> compiler.Compiled:
        calls.append(unit)
        return compiler.Compiled(False, "timed out after 120 s", [], limited=True)

    monkeypatch.setattr(hipify_check, "run_compile", bomb)
    monkeypatch.setattr(sandbox, "abi", lambda: 7)
    root = tmp_path / "proj"
    root.mkdir()
    files = []
    for i in range(5):
        (root / f"u{i}.cu").write_text("int x;\n")
        files.append(FileResult(path=f"u{i}.cu", text="int x;\n", output=str(root / f"u{i}.cu")))
    report = HipifyReport(root=str(root), files=files, hip_version="5.2", target="gfx90a")
    chain = compiler.Toolchain("/x/hipcc", "/x/clang", (), ())
    hipify_check.check_report(report, offload_archs=["gfx90a"], chain=chain, in_place=True)
    assert len(calls) == compiler.LIMITED_UNITS_MAX
    stopped = [f.compile for f in report.files[compiler.LIMITED_UNITS_MAX :]]
    assert all(isinstance(c, CompileResult) and c.status == "not compiled" for c in stopped)
    assert all("limits" in (c.error or "") for c in stopped if c is not None)


def test_a_project_holding_a_pipe_is_not_compiled(tmp_path: Path) -> None:
    """An ``#include`` of a pipe in the project (which the compiler may read) waits 120 s per
    unit: a project holding one is not compiled, and each unit says why."""
    root = tmp_path / "proj"
    (root / "sub").mkdir(parents=True)
    (root / "a.cu").write_text('#include "sub/p"\n')
    (root / "link").symlink_to("/dev/null")  # a link is not followed: not the project's
    assert sandbox.special_file(root) is None
    os.mkfifo(root / "sub" / "p")
    assert sandbox.special_file(root) == "sub/p"
    results = port_check._compile_all(root, root, ["a.cu"], "/x/hipcc", None, ["gfx90a"])
    assert {r.status for r in results} == {"skipped"}
    assert all("pipe or device" in (r.error or "") and "sub/p" in (r.error or "") for r in results)


def test_hipify_check_of_a_project_holding_a_pipe_compiles_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpuport.hipify import run as hipify_run

    root = tmp_path / "proj"
    root.mkdir()
    (root / "a.cu").write_text("__global__ void k() {}\n")
    os.mkfifo(root / "p")
    calls: list[object] = []
    monkeypatch.setattr(hipify_check, "run_compile", lambda *a, **k: calls.append(a))
    report = hipify_run.hipify_path(root, out_dir=tmp_path / "out")
    chain = compiler.Toolchain("/x/hipcc", "/x/clang", (), ())
    hipify_check.check_report(report, offload_archs=["gfx90a"], chain=chain)
    assert not calls
    done = [f.compile for f in report.files if f.compile is not None]
    assert done and all(c.status == "not compiled" and "pipe" in (c.error or "") for c in done)


def _need_hiding(work: Path) -> None:
    """The private view (user and mount namespaces) exists where the kernel lets an
    unprivileged process make them; CI requires it where ``unshare -rm`` works."""
    _need_landlock()
    work.mkdir(exist_ok=True)
    probe = sandbox.compile_confinement(read=[], run=[], work=work)
    done = subproc.run(
        ["/bin/sh", "-c", "test -e /etc/passwd"], timeout_s=30, confine=probe, cwd=work
    )
    if done.returncode != 0:
        return
    if os.environ.get("GPUPORT_REQUIRE_HIDE") == "1":
        pytest.fail("GPUPORT_REQUIRE_HIDE=1 but the confined program still sees /etc/passwd")
    pytest.skip("no unprivileged user namespaces here: outside paths are refused, not hidden")


def test_outside_paths_do_not_exist_for_a_confined_program(tmp_path: Path, confined: None) -> None:
    _need_hiding(tmp_path / "probe")
    cage, proj, work, outside = _cage(tmp_path)
    (outside / "secret").write_text("x")
    (proj / "a.cu").write_text("int x;\n")
    script = (
        f"for p in {outside}/secret {outside} /etc/passwd {Path.home()}; do "
        'test -e "$p" && echo "SEEN $p"; done; '
        f"cat /proc/1/environ /proc/self/environ && echo SEEN-ENV; "
        f"echo b > {proj}/bad; cat {proj}/a.cu; echo w > {work}/f; cat {work}/f"
    )
    done = subproc.run(["/bin/sh", "-c", script], timeout_s=30, confine=cage, cwd=work)
    out = done.stdout.decode()
    assert "SEEN" not in out, out
    assert "int x;" in out and "w" in out.split()
    assert not (proj / "bad").exists()


def test_has_include_tells_nothing_of_an_outside_path(
    tmp_path: Path, confined: None, cli: Any
) -> None:
    """``__has_include`` of an outside path, or an ``#include`` of it, gives the same words
    whether the path exists or not."""
    _need_hiding(tmp_path / "probe")
    _tool("hipcc", "GPUPORT_REQUIRE_HIPCC")
    secret = tmp_path / "secret.h"
    root = tmp_path / "proj"
    root.mkdir()
    kernel = "__global__ void k(float* x) { x[0] = 1.0f; }\n"
    (root / "a.cu").write_text(f'#if __has_include("{secret}")\n#error there\n#endif\n{kernel}')
    (root / "b.cu").write_text(f'#include "{secret}"\n{kernel}')
    (root / "c.cu").write_text(f'#include "inc.h"\n{kernel}')
    (root / "inc.h").symlink_to(secret)
    seen = []
    for exists in (False, True):
        if exists:
            secret.write_text("int secret_value;\n")
        compiler._CACHE.clear()
        got = _hipify_statuses(root, tmp_path / f"out{exists}", cli)
        seen.append([(c["status"], c["error"]) for c in got])
    assert seen[0] == seen[1], seen
    assert all(status == "ok" for status, _ in seen[0][:1]), seen  # a.cu: not there


def test_a_wrapper_in_the_home_folder_does_not_let_the_home_folder_in(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Sixth review: ``~/bin/nvcc`` made ``$HOME`` the toolchain's folder (read and run)."""
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "nvcc").write_text("#!/bin/sh\n")
    monkeypatch.setenv("HOME", str(home))
    assert compiler.install_root(str(home / "bin" / "nvcc")) == home / "bin"
    assert compiler.install_root("/usr/lib/llvm-15/bin/clang") == Path("/usr/lib/llvm-15")


def test_hipify_check_of_a_lone_file_beside_a_pipe_says_why_and_exits_1(
    cli,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    """Issue 29's trial: ``hipify FILE.cu -o OUT --check`` in a folder holding a pipe (``/tmp``)
    compiled nothing, called the unit "1 header(s) not compiled on their own" and exited 0. A
    unit --check could not compile is unchecked: its reason is shown and the exit is 1."""
    require_tool("hipcc", "GPUPORT_REQUIRE_HIPCC")
    monkeypatch.setenv("HIP_PLATFORM", "amd")
    calls: list[object] = []
    monkeypatch.setattr(hipify_check, "run_compile", lambda *a, **k: calls.append(a))
    (tmp_path / "one.cu").write_text("__global__ void k(float* x) { x[0] = 1; }\n")
    os.mkfifo(tmp_path / "pipe")
    one = str(tmp_path / "one.cu")
    res = cli("hipify", one, "-o", str(tmp_path / "out"), "--check")
    assert not calls
    assert res.code == 1
    said = res.out + res.err
    assert "header(s)" not in said
    assert "pipe or device" in said and "1 not compiled" in said
    res = cli("hipify", one, "-o", str(tmp_path / "o2"), "--check", "--fail-on", "never")
    assert res.code == 0


def test_a_header_checked_through_its_includer_does_not_fail_the_check(tmp_path: Path) -> None:
    from gpuport.cli.hipify_run import fails
    from gpuport.hipify.run import FileResult, HipifyReport, finish, unchecked

    header = FileResult(path="a.cuh", output=None)
    header.compile = CompileResult(
        ok=False,
        status="not compiled",
        offload_archs=["gfx90a"],
        error="a header: checked through the files that include it",
    )
    unit = FileResult(path="b.cu", output=None)
    unit.compile = CompileResult(
        ok=False, status="not compiled", offload_archs=["gfx90a"], error="not compiled: budget"
    )
    assert not unchecked(header) and unchecked(unit)
    report = HipifyReport(root=str(tmp_path), files=[header], hip_version="5.2", target="gfx90a")
    finish(report)
    assert not fails(report, "compile")
    report = HipifyReport(
        root=str(tmp_path), files=[header, unit], hip_version="5.2", target="gfx90a"
    )
    finish(report)
    assert report.totals["units_not_compiled"] == 1
    assert fails(report, "compile") and not fails(report, "never")
