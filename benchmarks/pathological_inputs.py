"""Benchmark for issue 14 item 4: scan and hipify time on generated pathological inputs.

Each form is one short unit repeated until the file reaches the size asked for: a `.cu` made
of `<`, of `asm(`, of `__shfl_sync(`, of `k<<<`; a Python file of imports; a Dockerfile of
continuation lines; ... Each is run in-process through the same per-file step the CLI uses
(`check_text` for scan and assess, `translate_source` with `--launch-syntax ggl` for hipify and
assess's dry run), at n and 2n bytes. The bound (issue 14): at most 1 s per 100 KB, and doubling
the input at most doubles the time (a ratio near 2 is linear, near 4 is quadratic).

    python benchmarks/pathological_inputs.py [--kb 100] [--forms lt,asm] [--repeat 1] [--cli]

``--cli`` also times the real commands (``gpuport scan``, ``hipify --launch-syntax ggl``,
``assess``) in a subprocess on an n-byte file of each C++ form of the issue's report.

``tests/security/test_linear_time.py`` imports :data:`FORMS` from this file, so the test and
the benchmark measure the same inputs.
"""

from __future__ import annotations

import argparse
import gc
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Form:
    name: str
    kind: str  # a FileKind value
    rel: str  # the file name it is scanned as
    unit: str  # repeated to the size asked for
    head: str = ""
    tail: str = ""
    hipify: bool = False  # also run hipify's per-file step

    def text(self, size: int) -> str:
        reps = max(1, (size - len(self.head) - len(self.tail)) // len(self.unit))
        return self.head + self.unit * reps + self.tail


PEP621_HEAD = "[project]\ndependencies = [\n"
POETRY_HEAD = "[tool.poetry.dependencies]\n"
SETUP_TAIL = "]\nfrom setuptools import setup\nsetup(install_requires=X)\n"
FORMS: tuple[Form, ...] = (
    Form("lt", "cuda/c++", "k.cu", "<", hipify=True),
    Form("asm", "cuda/c++", "k.cu", "asm(", hipify=True),
    Form("shfl", "cuda/c++", "k.cu", "__shfl_sync(", hipify=True),
    Form("launch", "cuda/c++", "k.cu", "k<<<", hipify=True),
    Form("launch_no_close", "cuda/c++", "k.cu", "k<<<1,1>>>(", hipify=True),
    Form("launch_no_end", "cuda/c++", "k.cu", "k<<<1,", hipify=True),
    Form("template", "cuda/c++", "k.cu", "f<a<", hipify=True),
    Form("paren", "cuda/c++", "k.cu", "f(", hipify=True),
    Form("shared", "cuda/c++", "k.cu", "__shared__ float s[1];\n", hipify=True),
    Form(
        "kernel",
        "cuda/c++",
        "k.cu",
        "__global__ void k(float*a){a[0]=__shfl_sync(0xffffffff,a[0],1);}\n",
        hipify=True,
    ),
    Form("raw_string", "cuda/c++", "k.cu", 'R"x(', hipify=True),
    Form("comment", "cuda/c++", "k.cu", "/*", hipify=True),
    Form("ifdef", "cuda/c++", "k.cu", "#ifdef __HIP_PLATFORM_AMD__\n", hipify=True),
    Form("cuda_call", "cuda/c++", "k.cu", "cudaMalloc(", hipify=True),
    Form("hash", "cuda/c++", "k.cu", "# ", hipify=True),
    Form("quote", "cuda/c++", "k.cu", "'", hipify=True),
    Form("digit_sep", "cuda/c++", "k.cu", "1'", hipify=True),
    Form("dquote", "cuda/c++", "k.cu", '"', hipify=True),
    Form("backslash", "cuda/c++", "k.cu", "\\\n", hipify=True),
    Form("global_head", "cuda/c++", "k.cu", "__global__ void k(", hipify=True),
    Form("global_bare", "cuda/c++", "k.cu", "__global__ ", hipify=True),
    Form("tmpl_launch", "cuda/c++", "k.cu", ")>k<<<", hipify=True),
    Form("launch_args", "cuda/c++", "k.cu", "k<<<1,1,0,s>>>(f(", hipify=True),
    Form("py_import", "python", "m.py", "import torch\n"),
    Form("py_import_many", "python", "m.py", "import m{i}\n"),
    Form("py_import_alias", "python", "m.py", "import pynvml as p{i}\n"),
    Form("py_import_use", "python", "m.py", "import pynvml as p{i}; p{i}.nvmlInit()\n"),
    Form("py_from_many", "python", "m.py", "from pynvml import x{i}\n"),
    Form("py_capability", "python", "m.py", "c{i} = torch.cuda.get_device_capability()\n"),
    Form("py_flag", "python", "m.py", "hip{i} = torch.version.hip is not None\n"),
    Form("py_from", "python", "m.py", "from a import b\n"),
    Form("py_cuda", "python", "m.py", "x = torch.cuda.is_available()\n"),
    Form("py_paren", "python", "m.py", "f(", head="x = ", tail=""),
    Form("docker_cont", "dockerfile", "Dockerfile", "  pip install torch \\\n", head="RUN \\\n"),
    Form("docker_run", "dockerfile", "Dockerfile", "RUN pip install torch\n", head="FROM x\n"),
    Form("req_cont", "requirements", "requirements.txt", "torch \\\n"),
    Form("req_lines", "requirements", "requirements.txt", "torch==2.1\n"),
    Form("setup_cfg", "setup.cfg", "setup.cfg", "  torch\n", head="[options]\ninstall_requires=\n"),
    Form("pyproject", "pyproject", "pyproject.toml", '"p{i}",\n', head=PEP621_HEAD),
    Form("poetry", "pyproject", "pyproject.toml", 'p{i}="1"\n', head=POETRY_HEAD),
    Form("setup_py", "setup.py", "setup.py", '"p{i}",\n', head="X = [\n", tail=SETUP_TAIL),
    Form("cmake", "cmake", "CMakeLists.txt", "set(A ${B} CUDA)\n"),
    Form("cmake_paren", "cmake", "CMakeLists.txt", "f("),
    Form("makefile_cont", "makefile", "Makefile", "\tnvcc -o a a.cu \\\n", head="all:\n"),
    Form("conda", "conda-env", "environment.yml", "  - p{i}\n", head="dependencies:\n"),
    Form("conda_pip", "conda-env", "environment.yml", "  - p{i}\n", head="dependencies:\n- pip:\n"),
    Form("compose", "compose", "docker-compose.yml", "  - x\n", head="services:\n a:\n  c:\n"),
)


def _text(form: Form, size: int) -> str:
    if "{i}" not in form.unit:
        return form.text(size)
    out: list[str] = [form.head]
    total = len(form.head) + len(form.tail)
    i = 0
    while total < size:
        line = form.unit.format(i=i)
        out.append(line)
        total += len(line)
        i += 1
    return "".join(out) + form.tail


def runner(form: Form) -> Callable[[int], float]:
    """A function that times ``form`` at ``size`` bytes (scan, plus hipify where it applies)."""
    from gpuport.hipify.run import translate_source
    from gpuport.knowledge import load_packages, resolve_target
    from gpuport.scan.engine import check_text
    from gpuport.scan.rules import FileKind

    target = resolve_target("gfx942")
    packages = load_packages()
    kind = FileKind(form.kind)

    def run(size: int) -> float:
        text = _text(form, size)
        gc.collect()  # start each timing from the same heap: less noise between n and 2n
        started = time.perf_counter()
        check_text(form.rel, text, kind, target, packages)
        if form.hipify:
            translate_source(
                form.rel,
                text,
                target=target,
                packages=packages,
                hip_version="5.2",
                annotate=True,
                launch_syntax="ggl",
            )
        return time.perf_counter() - started

    return run


#: What :func:`calibrate` takes on the 2-core dev VM when it is not loaded by other work.
REFERENCE_CALIBRATION_S = 0.08


def calibrate() -> float:
    """Seconds a fixed pure-Python loop takes here: tests scale their absolute bound by it."""
    started = time.perf_counter()
    acc = 0
    for i in range(1_000_000):
        acc += i % 7
    return time.perf_counter() - started


CLI_FORMS = ("lt", "asm", "shfl", "launch")


def cli_table(size: int) -> None:
    """Wall time of the real commands on one generated ``.cu`` of ``size`` bytes per form."""
    import subprocess
    import tempfile
    from pathlib import Path

    commands = {
        "scan": ["scan", "{dir}", "--format", "json"],
        "hipify": ["hipify", "{file}", "--launch-syntax", "ggl", "--format", "json"],
        "assess": ["assess", "{dir}", "--format", "json", "--no-progress"],
    }
    print(f"\n# CLI, {size // 1000} KB .cu (wall seconds, process start included)")
    print(f"{'form':<10} " + " ".join(f"{c:>8}" for c in commands))
    for name in CLI_FORMS:
        form = next(f for f in FORMS if f.name == name)
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "proj"
            folder.mkdir()
            path = folder / "k.cu"
            path.write_text(_text(form, size))
            row = []
            for args in commands.values():
                argv = [a.format(dir=folder, file=path) for a in args]
                started = time.perf_counter()
                subprocess.run(
                    [sys.executable, "-m", "gpuport", *argv],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    check=False,
                )
                row.append(time.perf_counter() - started)
        print(f"{name:<10} " + " ".join(f"{t:8.2f}" for t in row))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kb", type=int, default=100, help="size n in KB (2n is run too)")
    ap.add_argument("--forms", default="", help="comma-separated form names (default: all)")
    ap.add_argument("--repeat", type=int, default=1, help="best of N runs per size")
    ap.add_argument("--cli", action="store_true", help="also time the real commands")
    args = ap.parse_args(argv)
    wanted = {f for f in args.forms.split(",") if f}
    forms = [f for f in FORMS if not wanted or f.name in wanted]
    if wanted - {f.name for f in forms}:
        ap.error(f"unknown form(s): {', '.join(sorted(wanted - {f.name for f in forms}))}")
    n = args.kb * 1000
    calib = min(calibrate() for _ in range(3))
    norm = REFERENCE_CALIBRATION_S / calib
    print(f"# {platform.machine()}, Python {platform.python_version()}, calibration loop")
    print(f"# {calib:.3f} s; n = {args.kb} KB; time is scan (+ hipify where marked)")
    print(f"# 'quiet' = s/100KB x {REFERENCE_CALIBRATION_S} / calibration (an unloaded dev VM)")
    print(
        f"{'form':<18} {'kind':<13} {'t(n) s':>8} {'t(2n) s':>8} {'ratio':>6} {'s/100KB':>8}"
        f" {'quiet':>6}"
    )
    worst = 0.0
    for form in forms:
        run = runner(form)
        run(1000)  # warm caches (knowledge, API map, regexes)
        t1 = min(run(n) for _ in range(args.repeat))
        t2 = min(run(2 * n) for _ in range(args.repeat))
        per100 = t2 / (2 * n / 100_000)
        worst = max(worst, per100, t1 / (n / 100_000))
        kind = form.kind + ("+hip" if form.hipify else "")
        ratio = t2 / t1 if t1 > 0 else float("nan")
        print(
            f"{form.name:<18} {kind:<13} {t1:8.3f} {t2:8.3f} {ratio:6.2f} {per100:8.3f}"
            f" {per100 * norm:6.3f}"
        )
        sys.stdout.flush()
    print(f"# worst: {worst:.3f} s per 100 KB (bound: 1 s)")
    if args.cli:
        cli_table(n)
    return 0 if worst <= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
