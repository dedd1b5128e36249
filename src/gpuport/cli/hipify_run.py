"""``gpuport hipify PATH`` once its options are parsed: run the hipify core, write the
outputs, render the report. No typer here: :mod:`gpuport.cli.entry` runs a plain
``gpuport hipify`` command line without it (start-up, issue 18); the typer command that
declares the options and their help is :mod:`gpuport.cli.hipify_cmd`."""

from __future__ import annotations

import difflib
import os
import sys
from pathlib import Path
from typing import Any

from gpuport import fileio, subproc
from gpuport.cli.common import (
    EXIT_FINDINGS,
    emit,
    note,
    refuse_empty_file,
    refuse_home_as_output,
    refuse_links_in_project,
    say_if_unconfined,
    stderr_console,
)
from gpuport.hipify.buildfiles import build_kind, rewrite_build_file
from gpuport.hipify.hipheaders import HipHeaders, local_headers
from gpuport.hipify.io import read_source, write_source, write_stdout
from gpuport.hipify.run import HipifyReport, hipify_path, resolve_hip_version
from gpuport.hipify.translate import LAUNCH_SYNTAXES
from gpuport.hipify.tree import other_files
from gpuport.hipify.wave64 import WAVE64_MODES
from gpuport.models import GpuportError
from gpuport.render.interface import OutputFormat
from gpuport.render.text import clean, clean_line
from gpuport.scan.finding import SkippedFile

FAIL_ON_CHOICES = ("compile", "unsupported", "hazard", "never")


def fails(report: HipifyReport, fail_on: str) -> bool:
    """Exit 1 on the --fail-on condition: a failed --check for every choice but ``never``
    (``compile``, the default, only that), an untranslated API (``unsupported``) or a GP3xx
    finding (``hazard``)."""
    if fail_on == "never":
        return False
    if report.totals.get("compile_failed", 0) or report.totals.get("units_not_compiled", 0):
        return True  # a unit --check could not compile is not a checked one
    if fail_on == "compile":
        return False
    if fail_on == "unsupported":
        return report.totals.get("unsupported", 0) > 0
    return report.totals.get("hazards", 0) > 0


def _headers(version: str) -> HipHeaders | None:
    """The installed HIP's headers when they are ``version`` (a bad version: None, the core
    refuses it with its own message)."""
    try:
        return local_headers(version)
    except (OSError, ValueError):
        return None


def _archs(value: str) -> tuple[str, ...]:
    return tuple(a.strip() for a in value.split(",") if a.strip())


def _check_include(value: str, check: bool) -> list[Path]:
    """The folders of ``--check-include`` (comma-separated): the user's choice of where the
    project's own ``-I`` flags may lead the compile check outside the project."""
    folders = [Path(v.strip()) for v in value.split(",") if v.strip()]
    if folders and not check:
        raise GpuportError("--check-include needs --check")
    for folder in folders:
        if not folder.is_dir():
            raise GpuportError(f"--check-include: no such folder {str(folder)!r}")
    return [folder.resolve() for folder in folders]


BuildEdit = tuple[str, str, str]  # (rel path, original text, rewritten text)


def build_edits(path: Path, target: str, *, wave64: bool = False) -> list[BuildEdit]:
    """The CMake/Makefile build files under the folder ``path`` that the rewrite changes
    (``wave64``: also ``-DWARP_SIZE=32`` -> 64 for a 64-lane target)."""
    if not path.is_dir():
        return []
    edits: list[BuildEdit] = []
    for rel in other_files(path):
        kind = build_kind(rel)
        if kind is None:
            continue
        text = read_source(path / rel, path)
        if not isinstance(text, str):
            continue
        new, changes = rewrite_build_file(text, kind, target, wave64=wave64)
        if changes:
            edits.append((rel, text, new))
    return edits


def _write_in_place(
    report: HipifyReport, root: Path | None = None, builds: list[BuildEdit] | None = None
) -> None:
    """Back up each changed input as FILE.gpuport.bak, then replace it atomically.

    Every file and backup is checked before anything is written: a backup that is a symbolic
    link, or a different file, stops the run (exit 2, nothing written). A backup that is a copy
    of the current file is kept, and an empty or cut-off one (a killed run, a full disk) is
    written again from the original. A source that is itself a symbolic link is not rewritten
    (listed as skipped). ``builds`` (rewritten build files, relative to ``root``) are written
    the same way. Backups and sources are written through :mod:`gpuport.fileio`.
    """
    base = root if root is not None and root.is_dir() else None
    todo: list[tuple[Path, str]] = []
    for f in report.files:
        if not f.output or f.text is None:
            continue
        if Path(f.output).is_symlink():
            report.skipped.append(SkippedFile(path=f.path, reason=_LINK_NOT_REWRITTEN))
            f.output = None
            continue
        todo.append((Path(f.output), f.text))
    report.totals["skipped"] = len(report.skipped)
    if base is not None and builds:
        todo += [(base / rel, new) for rel, _, new in builds if not (base / rel).is_symlink()]
    plan: list[tuple[Path, str, bytes, str]] = []
    for src, text in todo:
        original = fileio.read_bytes(src, limit=fileio.LIMIT_SOURCE, root=base)
        plan.append((src, text, original, fileio.backup_state(src, original)))
    taken = [fileio.backup_path(src) for src, _, _, state in plan if state == "other"]
    if taken:
        names = ", ".join(str(b) for b in taken)
        raise GpuportError(
            f"--in-place: a different backup already exists ({names}); move it away first "
            "(nothing written)"
        )
    for src, text, original, state in plan:
        if state != "same":
            fileio.backup(src, original, root=base)
        write_source(src, text, root=base)


_LINK_NOT_REWRITTEN = "symbolic link: not rewritten in place (gpuport never writes through a link)"


def unified_diff(report: HipifyReport, builds: list[BuildEdit] | None = None) -> str:
    """A unified diff (a/PATH, b/PATH) of original vs translated text for every changed file
    (and every rewritten build file in ``builds``)."""
    chunks: list[str] = []
    items = [(f.path, f.original or "", f.text or "") for f in report.files]
    for rel, before, after in [*items, *(builds or [])]:
        if before == after:
            continue
        for line in difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{clean_line(rel)}",  # a name from the project: no escape sequences
            tofile=f"b/{clean_line(rel)}",
        ):
            chunks.append(
                line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
            )
    return "".join(chunks)


def _check_report_path(output: Path | None, report: HipifyReport, builds: list[Any]) -> None:
    """``--output`` may not be a file this run reads or writes: the report once replaced the
    CUDA source it was about (``--output p/a.cu``), or the translation it had just written."""
    if output is None:
        return
    from gpuport.cli.common import refuse_output_into_project

    root = Path(report.root)
    touched = [root / f.path for f in report.files] + [root / rel for rel in report.copied]
    touched += [Path(f.output) for f in report.files if f.output]
    touched += [root / rel for rel, *_ in builds]
    if root.is_file():
        touched.append(root)
    mine = os.path.realpath(output)
    if any(os.path.realpath(t) == mine for t in touched):
        raise GpuportError(
            f"--output {output} is a file this run reads or writes; choose another path "
            "for the report"
        )
    refuse_output_into_project(output, root if root.is_dir() else root.parent)  # links too


def _write_outputs(report: HipifyReport) -> None:
    """Write each translation (and copy each other file) into the output folder, never through
    a link already there and never outside it, and never into the input: an output folder
    that holds the input (``hipify p -o ..`` with ``../p/p/a.cu``) once wrote the translation
    of ``p/p/a.cu`` over ``p/a.cu``."""
    dest = Path(report.out_dir) if report.out_dir is not None else None
    if dest is not None:  # every destination checked before the first is written
        outs = [Path(f.output) for f in report.files if f.output and f.text is not None]
        source = os.path.realpath(report.root)
        for out in [*outs, *(dest / rel for rel in report.copied)]:
            fileio.check_destination(out, dest)
            real = os.path.realpath(out)
            if real == source or real.startswith(source.rstrip(os.sep) + os.sep):
                raise GpuportError(
                    f"output folder {dest} holds the input {report.root}: {out} would be "
                    "written into the input; choose a folder outside it"
                )
    for f in report.files:
        if f.output is None or f.text is None:
            continue
        out = Path(f.output)
        _mkdir(out.parent)
        write_source(out, f.text, root=dest)
    if dest is not None:
        root = Path(report.root)
        for rel in report.copied:
            target = dest / rel
            _mkdir(target.parent)
            fileio.copy_atomic(root / rel, target, src_root=root, root=dest)


def _mkdir(folder: Path) -> None:
    fileio.make_dirs(folder)


def run_hipify(
    path: Path,
    *,
    out_dir: Path | None = None,
    hip_version: str | None = None,
    target: str = "gfx942",
    check: bool = False,
    offload_arch: str = "gfx90a",
    stats: bool = False,
    fmt: OutputFormat = OutputFormat.TERMINAL,
    output: Path | None = None,
    annotate: bool = False,
    diff: bool = False,
    in_place: bool = False,
    launch_syntax: str = "keep",
    build_files: bool = False,
    wave64: str | None = None,
    unsafe_fixes: bool = False,
    fail_on: str = "compile",
    check_include: str = "",
) -> int:
    """Translate CUDA sources to HIP; report what did not translate and what is unsafe on AMD.

    The ``gpuport hipify`` command itself, its options already parsed (by typer in
    :mod:`gpuport.cli.hipify_cmd`, or by :mod:`gpuport.cli.entry` without typer). Returns the
    exit code: 0, or 1 on the ``--fail-on`` condition."""
    allowed = _check_include(check_include, check)
    fail_on = fail_on.lower()
    if fail_on not in FAIL_ON_CHOICES:
        raise GpuportError(
            f"--fail-on must be one of {', '.join(FAIL_ON_CHOICES)}, not {fail_on!r}"
        )
    syntax = launch_syntax.lower()
    if syntax not in LAUNCH_SYNTAXES:
        raise GpuportError(
            f"--launch-syntax must be one of {', '.join(LAUNCH_SYNTAXES)}, not {launch_syntax!r}"
        )
    wave_mode = wave64.lower() if wave64 is not None else None
    if wave_mode is not None and wave_mode not in WAVE64_MODES:
        raise GpuportError(f"--wave64 must be one of fix, report, not {wave64!r}")
    if fmt is OutputFormat.SARIF:
        raise GpuportError("hipify has no SARIF output; use terminal, json or markdown")
    if in_place and out_dir is not None:
        raise GpuportError("--in-place and -o/--out-dir cannot be used together")
    if diff and (output is None and (stats or fmt is not OutputFormat.TERMINAL)):
        raise GpuportError(
            "--diff prints the diff to stdout; write the report (--stats, --format) with --output"
        )
    if path.is_dir() and out_dir is None and not diff and not in_place:
        raise GpuportError(f"{path} is a folder: give an output folder with -o OUTDIR")
    refuse_empty_file(path, "translate")
    if in_place:  # what is rewritten is reached through no link the project ships
        refuse_links_in_project(path, path, "--in-place")
    if out_dir is not None:
        refuse_home_as_output(out_dir)
        refuse_links_in_project(out_dir, path, "-o")
    # every lookup and program of this run leaves the project out, and the output folder too:
    # the project's files are copied there, and its .envrc can put that folder on PATH or
    # LD_LIBRARY_PATH (twenty-fifth re-run F12)
    shunned: tuple[Path, ...] = (path,) if out_dir is None else (path, out_dir)
    subproc.avoid_always(shunned)
    subproc.forget_imports_from([path])  # a project's module on PYTHONPATH (twenty-fifth F1)
    say_if_unconfined(check)
    subproc.neutral_tempdir(shunned)
    version, origin = resolve_hip_version(hip_version, avoid=shunned)
    report = hipify_path(
        path,
        out_dir=out_dir,
        hip_version=version,
        target=target,
        check=check,
        offload_archs=_archs(offload_arch),
        annotate=annotate,
        in_place=in_place,
        launch_syntax="ggl" if syntax == "ggl" else "keep",
        wave64="fix" if wave_mode == "fix" else "report" if wave_mode == "report" else None,
        headers=_headers(version),
        unsafe=unsafe_fixes,
        hip_version_origin=origin,
    )
    if not report.files:  # nothing translated: an error, before anything is written
        first = report.skipped[0] if report.skipped else None
        unread = (
            f"; {len(report.skipped)} could not be read ({clean_line(first.path)}: "
            f"{clean_line(first.reason)})"
            if first is not None
            else ""
        )
        raise GpuportError(
            f"nothing to translate in {path}: no CUDA/C++ source found{unread} "
            "(an empty or mistyped folder?)"
        )
    # -DWARP_SIZE=32 -> 64 is right only where every use of the macro means the hardware
    # wavefront, which the build file cannot show: an unsafe fix
    builds = build_edits(path, target, wave64=report.wave64 == "fix" and unsafe_fixes)
    _check_report_path(output, report, builds)
    if in_place:
        _write_in_place(report, path, builds if build_files else None)
    else:
        _write_outputs(report)
        if build_files and out_dir is not None:
            for rel, _, new in builds:
                _mkdir((out_dir / rel).parent)
                write_source(out_dir / rel, new, root=out_dir)
    if check:  # after the writes: compile the written tree as a build would
        from gpuport.hipify.check import check_report
        from gpuport.hipify.compiler import toolchain
        from gpuport.hipify.run import finish

        hipcc = subproc.which("hipcc", avoid=shunned)
        if hipcc is None:
            raise GpuportError("hipcc disappeared from PATH during the run")
        chain = toolchain(hipcc, avoid=shunned)
        check_report(
            report,
            offload_archs=_archs(offload_arch),
            chain=chain,
            in_place=in_place,
            allowed=allowed,
        )
        finish(report)
    if builds and not build_files:
        n = len(builds)
        note(f"{n} build file{'s' if n != 1 else ''} would change; --build-files rewrites them")
    to_stdout = out_dir is None and not in_place and not stats and fmt is OutputFormat.TERMINAL
    if diff:
        patch = unified_diff(report, builds if build_files else None)
        # to a terminal, the project's own bytes (an OSC 52 in a comment) are shown, not
        # obeyed; piped, the diff stays exact for `patch` and `git apply`
        write_stdout(sys.stdout, clean(patch) if sys.stdout.isatty() else patch)
        sys.stdout.flush()
    if diff and output is None:
        from gpuport.render import hipify_terminal

        note(hipify_terminal.summary(report))
    elif to_stdout and output is None:
        # one file, no -o: the translated text is the result; the report goes to stderr
        # to a terminal, the project's control characters are shown, not obeyed (as for
        # --diff); redirected, the translation stays byte for byte
        tty = sys.stdout.isatty()
        for f in report.files:
            write_stdout(sys.stdout, clean(f.text or "") if tty else f.text or "")
        sys.stdout.flush()
        from gpuport.render import hipify_terminal

        if report.totals.get("unsupported") or report.totals.get("hazards") or check:
            hipify_terminal.render(report, stderr_console())
        else:
            note(hipify_terminal.summary(report))
    else:

        def text() -> str:
            if fmt is OutputFormat.JSON:
                from gpuport.plainjson import dumps

                return dumps(report) + "\n"
            from gpuport.render import hipify_terminal

            return hipify_terminal.render_markdown(report)

        def terminal(console: object) -> None:
            from gpuport.render import hipify_terminal

            hipify_terminal.render(report, console)  # type: ignore[arg-type]

        emit(fmt, output, text=text, terminal=terminal)
        if output is not None or fmt is not OutputFormat.TERMINAL:
            from gpuport.render import hipify_terminal

            note(
                hipify_terminal.summary(report)
                + (f"; report written to {output}" if output else "")
            )
    failed = fails(report, fail_on)
    if failed and report.totals.get("compile_failed"):
        n = report.totals["compile_failed"]
        note(f"gpuport hipify: {n} translation(s) failed to compile (exit 1; --fail-on never: 0)")
    if failed and report.totals.get("units_not_compiled"):
        n = report.totals["units_not_compiled"]
        note(
            f"gpuport hipify: {n} translation unit(s) not compiled, so not checked "
            "(exit 1; --fail-on never: 0)"
        )
    return EXIT_FINDINGS if failed else 0
