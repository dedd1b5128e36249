"""What every command shares: consoles, the output convention, exit codes.

No typer here: ``gpuport hipify`` with plain options runs without it (:mod:`gpuport.cli.entry`).
The typer option declarations several commands share are in :mod:`gpuport.cli.options`.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import sys
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar, cast

from gpuport.render.interface import OutputFormat
from gpuport.render.interface import write_atomic as _write_atomic

if TYPE_CHECKING:
    from rich.console import Console

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_ENVIRONMENT = 3
EXIT_BUG = 4


_stderr_console: Console | None = None


def stderr_console() -> Console:
    """The rich console on stderr, made (and rich imported, ~0.07 s) on first use: a command
    writing JSON, or a one-line summary, need not pay for it (start-up, issue 18)."""
    global _stderr_console
    if _stderr_console is None:
        from rich.console import Console

        _stderr_console = Console(stderr=True)
    return _stderr_console


if TYPE_CHECKING:
    err_console: Console
else:

    def __getattr__(name: str) -> Any:  # ``from gpuport.cli.common import err_console``
        if name == "err_console":
            return stderr_console()
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def refuse_empty_file(path: Path, what: str) -> None:
    """An empty file given as the input is nothing to work on: exit 2, as an empty folder is
    (one rule for every command: empty input is a usage error, never a clean result)."""
    try:
        empty = path.is_file() and path.stat().st_size == 0
    except OSError:
        return  # the command's own reading says what is wrong with it
    if empty:
        from gpuport.errors import GpuportError

        raise GpuportError(f"nothing to {what} in {path}: the file is empty")


def say_if_unconfined(compiling: bool) -> None:
    """One stderr line when a compile check will run without confinement because the
    environment says so (``GPUPORT_UNCONFINED_COMPILE=1``, taken only outside any project:
    a project's ``.envrc`` can set it, twenty-fifth re-run F6), or when it is set and not
    taken."""
    from gpuport import sandbox

    if compiling and sandbox.unconfined():
        note(
            f"gpuport: the compile check runs unconfined: {sandbox.UNCONFINED_ENV}=1 is set in "
            "the environment (unset it unless you set it yourself)"
        )
    elif compiling and sandbox.ignored_switch():
        note(
            f"gpuport: {sandbox.UNCONFINED_ENV}=1 is not taken inside a project folder (its "
            "environment manager may have set it); the compile check stays confined"
        )


def note(line: str) -> None:
    """One plain line to stderr (control characters made visible, no markup, no wrapping),
    without importing rich: a command's closing summary (see :func:`stderr_console`)."""
    from gpuport.render.text import clean_line

    sys.stderr.write(clean_line(line) + "\n")
    sys.stderr.flush()


def escape(text: str) -> str:
    """rich's markup escape, imported on first use (see :func:`stderr_console`)."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


class ClosedPipeSafe:
    """``sys.stdout`` that falls silent once its reader has gone (``gpuport ... | head``).

    The first write or flush that meets a broken pipe points the real stream's descriptor at
    the null device (so the interpreter's final flush cannot fail either); every later write
    is dropped. Everything else is the wrapped stream's.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.reader_gone = False

    def write(self, text: str) -> int:
        if not self.reader_gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._gone()
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self.reader_gone:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._gone()

    def _gone(self) -> None:
        self.reader_gone = True
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, self._stream.fileno())
            finally:
                os.close(null)
        except (OSError, ValueError):
            pass  # not a real descriptor (a test's capture): dropping the writes is enough

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def refuse_through_cwd_project(output: Path | None, what: str = "--output") -> None:
    """Refuse a file gpuport would write when the way to it from the project around the
    current folder goes through a link that project ships: ``doctor --save-snapshot
    reports/m.json``, ``cost --output reports/c.md`` with ``reports`` a link to a folder of
    the user's replaced files there (twenty-eighth re-run F8; the commands that name a
    project check against it too, ``refuse_output_into_project``)."""
    if output is None:
        return
    from gpuport import fileio, subproc
    from gpuport.models import GpuportError

    try:
        here = Path(os.getcwd())  # noqa: PTH109 - as the kernel has it
    except OSError:
        return
    _refuse_climb_from_link(output, here, what)
    out = Path(os.path.abspath(output))  # noqa: PTH100 - the links on the way are the point
    tops = {Path(subproc.logical_top(here)), *map(Path, subproc.project_around(here))}
    for top in sorted(tops):
        if out.is_relative_to(top) and top.is_dir():
            link = fileio.link_below(out.parent, top)
            if link is not None:
                raise GpuportError(
                    f"{what} {output} goes through a link in the project around the current "
                    f"folder ({link}); name the folder it leads to if you mean it"
                )


def _refuse_climb_from_link(output: Path, here: Path, what: str) -> None:
    """Refuse ``..`` in a relative output from a folder the shell reached through a link the
    project ships: ``cd P/sub`` (``sub`` -> a folder outside) then ``--output ../x`` means
    ``P/x`` to the user, and the kernel resolves it from the link's target (thirtieth
    re-run, F2). The shell's ``$PWD`` is taken only when it names the current folder."""
    from gpuport import fileio, subproc
    from gpuport.models import GpuportError

    logical = os.environ.get("PWD", "")
    if output.is_absolute() or ".." not in output.parts or not logical.startswith(os.sep):
        return
    if len(logical) > 4096 or Path(logical) == here:
        return
    try:
        if not Path(logical).samefile(here):
            return
    except OSError:
        return
    link = fileio.link_below(Path(logical), Path(subproc.logical_top(logical)))
    if link is not None:
        raise GpuportError(
            f"{what} {output} climbs out of {logical} with '..', and that folder is reached "
            f"through a link the project ships ({link}), so '..' would start from {here}; "
            "name the path without '..'"
        )


def write_atomic(path: Path, text: str, what: str = "--output") -> None:
    """A command's output file, written atomically, never through a link of the project
    around the current folder (:func:`refuse_through_cwd_project`)."""
    refuse_through_cwd_project(path, what)
    _write_atomic(path, text)


def emit(
    fmt: OutputFormat,
    output: Path | None,
    *,
    text: Callable[[], str],
    terminal: Callable[[Console], None],
) -> None:
    """Write the result: to ``output`` atomically, or to stdout.

    The terminal format to a file is written as plain text (no colour codes).
    """
    if fmt is OutputFormat.TERMINAL:
        from rich.console import Console

        if output is None:
            terminal(Console())
            return
        buf = Console(record=True, width=120, file=io.StringIO(), force_terminal=False)
        terminal(buf)
        write_atomic(output, buf.export_text())
        return
    body = text()
    if fmt in (OutputFormat.JSON, OutputFormat.SARIF):
        from gpuport.render.text import json_safe

        body = json_safe(body)  # names from the project: no raw C1 or bidi characters
    if output is None:
        sys.stdout.write(body)
        sys.stdout.flush()
    else:
        write_atomic(output, body)


F = TypeVar("F", bound=Callable[..., Any])


def honours_accept_edited(fn: F) -> F:
    """Run the command with its ``accept_edited`` argument in force for every result file
    it loads (:func:`gpuport.integrity.accepting_edited`)."""
    from gpuport.integrity import accepting_edited

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with accepting_edited(bool(kwargs.get("accept_edited", False))):
            return fn(*args, **kwargs)

    return cast(F, wrapper)


def print_result_warnings() -> None:
    """Show each :class:`~gpuport.integrity.ResultFileWarning` as one stderr line."""
    from gpuport.integrity import ResultFileWarning

    previous = warnings.showwarning

    def show(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
        if isinstance(category, type) and issubclass(category, ResultFileWarning):
            stderr_console().print(
                f"[yellow]gpuport: warning:[/] {escape(str(message))}",
                highlight=False,
                soft_wrap=True,
            )
        else:
            previous(message, category, *args, **kwargs)

    warnings.showwarning = show
    warnings.simplefilter("always", ResultFileWarning)


def refuse_output_into_project(output: Path | None, path: Path, what: str = "--output") -> None:
    """A report's ``--output`` is never a file of the project that gpuport reads (``port p -o
    p/a.cu`` and ``assess p -o p/requirements.txt`` replaced the project's file with the
    report; fourth review), never the project itself, and never reached through a link inside
    the project (``scan p -o p/reports/x.json``, ``reports`` a link the project ships to a
    folder outside, overwrote a file there). A new file, or another report, is fine."""
    from gpuport import fileio
    from gpuport.models import GpuportError
    from gpuport.pathwalk import first_link_in
    from gpuport.scan.project.files import classify

    if output is None:
        return
    if output.name.endswith(fileio.BACKUP_SUFFIX):  # it would replace an original's backup
        raise GpuportError(f"{what} {output}: a name gpuport keeps for its backups")
    with contextlib.suppress(OSError):
        _refuse_climb_from_link(output, Path(os.getcwd()), what)  # noqa: PTH109 - the kernel's
    from gpuport import subproc

    root = Path(os.path.realpath(path))
    out = Path(os.path.abspath(output))  # noqa: PTH100
    link = None
    # the project named, and the project it sits in when a sub-folder or a file is named (a
    # link the project ships above the folder named: twenty-third re-run)
    for top in [Path(os.path.abspath(path)), *map(Path, subproc.project_of(path))]:  # noqa: PTH100
        if link is None and out.is_relative_to(top) and top.is_dir():
            link = fileio.link_below(out.parent, top)
    # the walk as the kernel makes it: ``p/sub/../x.json`` follows ``sub`` before ``..``
    link = link or (first_link_in(output, root) if root.is_dir() else None)
    if link is not None:  # a folder between the project and the file
        raise GpuportError(
            f"{what} {output} goes through a link in the project ({link}); name the "
            "folder it leads to if you mean it"
        )
    if not output.is_file():
        return
    mine = Path(os.path.realpath(output))
    if mine == root:
        raise GpuportError(f"{what} {output} is the file gpuport reads; choose another path")
    if root.is_dir() and mine.is_relative_to(root):
        rel = mine.relative_to(root).as_posix()
        if classify(rel if "/" in rel else f"{root.name}/{rel}") is not None:
            raise GpuportError(
                f"{what} {output} is a file of the project that gpuport reads; choose "
                "another path for the report"
            )


def logical_project(path: Path) -> Path:
    """The project ``path`` sits in, along the path as written (:func:`subproc.logical_top`)."""
    from gpuport import subproc

    return Path(subproc.logical_top(path))


def refuse_links_in_project(target: Path, project: Path, what: str) -> None:
    """Refuse ``target`` (a folder or file gpuport would write) when the way to it from the
    project ``project`` goes through a link the project ships: ``hipify P/csrc --in-place``
    with ``csrc`` a link to a folder outside rewrote files there, ``hipify P/csrc -o
    P/out/x`` with ``out`` such a link wrote there (twenty-third re-run)."""
    from gpuport import fileio, subproc
    from gpuport.models import GpuportError

    with contextlib.suppress(OSError):  # `cd P/link; port .. --apply` means P, not outside
        _refuse_climb_from_link(target, Path(os.getcwd()), what)  # noqa: PTH109 - the kernel's
    top = logical_project(project)
    here = Path(os.path.abspath(target))  # noqa: PTH100
    if not here.is_relative_to(top):
        # a project with no project file: the folder it shares with what was named
        shared = Path(os.path.commonpath([here, Path(os.path.abspath(project))]))  # noqa: PTH100
        if shared in subproc.stops() or any(s.is_relative_to(shared) for s in subproc.stops()):
            return
        top = shared
    # named from a folder above the project (`hipify proj/src/k.cu --in-place` with `src` a
    # link and no project file: twenty-fifth re-run F10): the way from the current folder
    # counts, whatever marks the project
    with contextlib.suppress(OSError):
        cwd = Path(os.getcwd())  # noqa: PTH109 - as the kernel has it
        stops = subproc.stops()
        if (
            here.is_relative_to(cwd)
            and top.is_relative_to(cwd)
            and not any(s.is_relative_to(cwd) for s in stops)
        ):
            top = cwd
    link = fileio.link_below(here, top)
    if link is not None:
        raise GpuportError(
            f"{what} {target} goes through a link in the project ({link}); name the folder it "
            "leads to if you mean it"
        )


def refuse_home_as_output(out_dir: Path, what: str = "-o") -> None:
    """An output folder that is ``/``, the home folder or above it: a project's files copied
    there (``.bashrc``, ``.gitconfig`` with ``core.fsmonitor``) would become the user's own
    (``hipify P -o ~``: twenty-third re-run)."""
    from gpuport import subproc
    from gpuport.models import GpuportError

    real = Path(os.path.realpath(out_dir))
    homes = [*subproc.stops(), Path(os.path.realpath(os.environ.get("HOME") or os.sep))]
    for stop in homes:
        if stop == real or stop.is_relative_to(real):
            raise GpuportError(
                f"{what} {out_dir} is the home folder or holds it: give a folder of its own "
                "for the translated tree"
            )
