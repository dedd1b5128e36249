"""``gpuport hipify PATH``: the typer command (options, help) over :func:`run_hipify`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gpuport.cli.hipify_run import run_hipify
from gpuport.cli.options import FormatOption
from gpuport.hipify.translate import DEFAULT_HIP_VERSION
from gpuport.render.interface import OutputFormat


def hipify(
    path: Annotated[Path, typer.Argument(help="CUDA file or folder to translate.")],
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out-dir",
            "-o",
            help="Write translations here (mirrored layout); needed for a folder.",
        ),
    ] = None,
    hip_version: Annotated[
        str | None,
        typer.Option(
            "--hip-version",
            help="HIP version to translate for (default: the HIP installed here, else "
            f"{DEFAULT_HIP_VERSION}; assess makes the same assumption).",
        ),
    ] = None,
    target: Annotated[
        str, typer.Option("--target", "-t", help="AMD target for the hazard rules.")
    ] = "gfx942",
    check: Annotated[
        bool, typer.Option("--check", help="Compile each translation with hipcc -c (AMD).")
    ] = False,
    offload_arch: Annotated[
        str, typer.Option("--offload-arch", help="Targets for --check, comma-separated.")
    ] = "gfx90a",
    check_include: Annotated[
        str,
        typer.Option(
            "--check-include",
            help="Folders outside the project that the project's own -I flags may lead "
            "--check to (comma-separated; e.g. a shared include folder beside it).",
        ),
    ] = "",
    stats: Annotated[
        bool, typer.Option("--stats", help="Print the per-file counts table instead of the text.")
    ] = False,
    fmt: FormatOption = OutputFormat.TERMINAL,
    output: Annotated[
        Path | None, typer.Option("--output", help="Write the report to this file.")
    ] = None,
    annotate: Annotated[
        bool,
        typer.Option(
            "--annotate", help="Write each hazard into the output as a // gpuport: comment."
        ),
    ] = False,
    diff: Annotated[
        bool,
        typer.Option("--diff", help="Print a unified diff of original vs translated text."),
    ] = False,
    in_place: Annotated[
        bool,
        typer.Option("--in-place", help="Rewrite the inputs (each backed up as FILE.gpuport.bak)."),
    ] = False,
    launch_syntax: Annotated[
        str,
        typer.Option(
            "--launch-syntax",
            help="Kernel launches: keep <<<...>>> (default) or ggl (hipLaunchKernelGGL).",
        ),
    ] = "keep",
    build_files: Annotated[
        bool,
        typer.Option(
            "--build-files",
            help="Also rewrite CMake/Makefile build files (CUDA language, archs, nvcc) to HIP.",
        ),
    ] = False,
    wave64: Annotated[
        str | None,
        typer.Option(
            "--wave64",
            help="32-lane warp code: fix (port it; default for 64-lane CDNA targets) or report.",
        ),
    ] = None,
    unsafe_fixes: Annotated[
        bool,
        typer.Option(
            "--unsafe-fixes",
            help="Also apply wave64 rewrites that are not proven safe (each marked 'unsafe').",
        ),
    ] = False,
    fail_on: Annotated[
        str,
        typer.Option(
            "--fail-on",
            help="Exit 1 on: compile (a translation --check could not compile; the default), "
            "unsupported (an untranslated API, or a failed compile), hazard (a GP3xx finding, "
            "or a failed compile), never.",
        ),
    ] = "compile",
) -> None:
    """Translate CUDA sources to HIP; report what did not translate and what is unsafe on AMD.

    Assumes the HIP version installed here, else 6.4 (the summary says which; assess makes the
    same assumption) unless --hip-version; target gfx942 for the hazard rules and wave64;
    --check compiles for gfx90a and exits 1 when a translation fails to compile. An empty
    folder, or one with no CUDA/C++ source, is exit 2.
    """
    code = run_hipify(
        path,
        out_dir=out_dir,
        hip_version=hip_version,
        target=target,
        check=check,
        offload_arch=offload_arch,
        check_include=check_include,
        stats=stats,
        fmt=fmt,
        output=output,
        annotate=annotate,
        diff=diff,
        in_place=in_place,
        launch_syntax=launch_syntax,
        build_files=build_files,
        wave64=wave64,
        unsafe_fixes=unsafe_fixes,
        fail_on=fail_on,
    )
    if code:
        raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("hipify")(hipify)
