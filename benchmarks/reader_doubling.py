"""Benchmark for issue 23 item 4: every reader of project or result files takes linear time.

Each *reader* is one thing gpuport does with a file it did not write: the whole scan of a
project made of that one file (the checkers of its kind and the project view: build model,
routes, extras, scopes), hipify's per-file translation and build-file rewrite, the
``hipify --check`` flag readers (compile_commands.json, Makefile/CMake flags), the git index
and ``.gitignore``, assess's settings, and the result files (bench and validate JSON, ``.gpv``
headers, doctor snapshots, ``--knowledge`` TOML, ``--model-config``). Each reader has a few
*forms*: one short unit repeated to the size asked for (many lines, one long line, one long
token, a valid file with many entries and its digest recomputed so the checks behind the
parser run). Each form is timed at n, 2n, 4n and 8n bytes (50/100/200/400 KB by default):
a linear reader takes about twice as long per doubling, a quadratic one four times.

    python benchmarks/reader_doubling.py [--kb 50] [--steps 4] [--readers scan-makefile,...]
        [--forms ...] [--repeat 1]

Prints, per form, the CPU seconds at each size (this process's: other work on a shared machine
does not count) and the ratio of each doubling, and exits 1 when a ratio is over 2.5 (the
issue's bound). A ``quiet`` column rescales the time at the largest
size by the calibration loop of ``benchmarks/pathological_inputs.py`` (a loaded machine is
slower, not less linear). ``tests/security/test_reader_doubling.py`` runs one form per
reader at smaller sizes.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import platform
import shutil
import struct
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO / "benchmarks") not in sys.path:
    sys.path.insert(0, str(REPO / "benchmarks"))

from pathological_inputs import REFERENCE_CALIBRATION_S, calibrate  # noqa: E402

Make = Callable[[int], bytes]
#: prepare(folder, data) writes what the reader needs and returns the call that is timed
Prepare = Callable[[Path, bytes], Callable[[], object]]


@dataclass(frozen=True)
class Form:
    name: str
    make: Make


@dataclass(frozen=True)
class Reader:
    name: str
    what: str
    prepare: Prepare
    forms: tuple[Form, ...]


def repeat(unit: str, head: str = "", tail: str = "") -> Make:
    """``head + unit * k + tail`` of about n bytes; ``{i}`` in the unit is numbered."""

    def make(n: int) -> bytes:
        if "{i}" not in unit:
            k = max(1, (n - len(head) - len(tail)) // len(unit))
            return (head + unit * k + tail).encode()
        out, size, i = [head], len(head) + len(tail), 0
        while size < n:
            line = unit.format(i=i)
            out.append(line)
            size += len(line)
            i += 1
        return ("".join(out) + tail).encode()

    return make


# --- project files: the whole scan of a project made of one file -------------------------


def _scan(name: str) -> Prepare:
    def prepare(folder: Path, data: bytes) -> Callable[[], object]:
        from gpuport.scan.engine import ScanOptions, scan_path

        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
        return lambda: scan_path(folder, ScanOptions(jobs=1, max_bytes=16 << 20))

    return prepare


def _scan_with(name: str, others: dict[str, str]) -> Prepare:
    """The scan of a project with ``name`` (the form) and a few small files beside it."""

    def prepare(folder: Path, data: bytes) -> Callable[[], object]:
        for other, text in others.items():
            (folder / other).parent.mkdir(parents=True, exist_ok=True)
            (folder / other).write_text(text)
        return _scan(name)(folder, data)

    return prepare


_EMPTY_CU = "__global__ void k(float* a) { a[0] = 0; }\n"
_ONE_LINE = "[project]\nname='x'\ndependencies = ["
SETUP_TAIL = "]\nfrom setuptools import setup\nsetup(install_requires=X)\nif IS_ROCM: pass\n"
PROJECT_READERS = (
    Reader(
        "scan-requirements",
        "scan of requirements.txt",
        _scan("requirements.txt"),
        (
            Form("pins", repeat("torch=={i}.1\n")),
            Form("one-line", repeat("torch ", tail="\n")),
            Form("continuations", repeat("torch \\\n")),
            Form("options", repeat("-r r{i}.txt --index-url https://x/cu121 \\\n")),
        ),
    ),
    Reader(
        "scan-pyproject",
        "scan of pyproject.toml (PEP 621, Poetry)",
        _scan("pyproject.toml"),
        (
            Form("pep621", repeat('"p{i}",\n', head="[project]\ndependencies = [\n", tail="]\n")),
            Form("poetry", repeat('p{i}="1"\n', head="[tool.poetry.dependencies]\n")),
            Form("one-string", repeat("a", head='[project]\nname = "', tail='"\n')),
            Form("extras", repeat('e{i} = ["torch"]\n', head="[project.optional-dependencies]\n")),
            Form(
                "rocm-extras",
                repeat('rocm{i} = ["torch"]\n', head="[project.optional-dependencies]\n"),
            ),
            # red team F3: was 44 s CPU at 100 KB (the whole line rescanned per item)
            Form("one-line-deps", repeat("'torch>=2',", head=_ONE_LINE, tail="]\n")),
        ),
    ),
    Reader(
        "scan-setup-py",
        "scan of setup.py (requirements and build model)",
        _scan("setup.py"),
        (
            Form("list", repeat('"p{i}",\n', head="X = [\n", tail=SETUP_TAIL)),
            Form("concat", repeat(' + ["a.cu"]', head='X = ["a.cu"]', tail="\n" + SETUP_TAIL[2:])),
            Form(
                "doubling",
                repeat(
                    "a{i} = a + a\na = a{i}\n",
                    head='a = ["k.cu"]\n',
                    tail=SETUP_TAIL[2:].replace("=X", "=a"),
                ),
            ),
            Form(
                "fstring",
                repeat('f"{{d}}/{{d}}"+', head='d = ["a", "b"]\nX = [', tail='"k.cu"' + SETUP_TAIL),
            ),
            Form(  # six readers each parsed it and walked the whole tree again
                "rebind",
                repeat(
                    'R = R + ["torch"]\n', head="R = []\n", tail=SETUP_TAIL[2:].replace("=X", "=R")
                ),
            ),
        ),
    ),
    Reader(
        "scan-setup-cfg",
        "scan of setup.cfg",
        _scan("setup.cfg"),
        (
            Form("requires", repeat("  torch{i}\n", head="[options]\ninstall_requires=\n")),
            Form("one-line", repeat("x", head="[options]\ninstall_requires = ", tail="\n")),
        ),
    ),
    Reader(
        "scan-conda",
        "scan of environment.yml",
        _scan("environment.yml"),
        (
            Form("block", repeat("  - p{i}\n", head="dependencies:\n")),
            Form("flow", repeat("p{i}, ", head="dependencies: [", tail="x]\n")),
            Form("string", repeat("a", head="name: x\ndependencies: ", tail="\n")),
            Form("pip", repeat("    - p{i}\n", head="dependencies:\n  - pip:\n")),
        ),
    ),
    Reader(
        "scan-dockerfile",
        "scan of a Dockerfile",
        _scan("Dockerfile"),
        (
            Form("continuations", repeat("  pip install torch \\\n", head="FROM x\nRUN \\\n")),
            Form("runs", repeat("RUN pip install t{i}\n", head="FROM nvidia/cuda:12.1\n")),
            Form("heredoc", repeat("<<EOF{i} ", head="FROM x\nRUN cat ", tail="\n")),
            Form("env", repeat("A{i}=b ", head="FROM x\nENV ", tail="\n")),
        ),
    ),
    Reader(
        "scan-compose",
        "scan of docker-compose.yml",
        _scan("docker-compose.yml"),
        (
            Form("list", repeat("  - x{i}\n", head="services:\n a:\n  c:\n")),
            Form("services", repeat(" s{i}:\n  image: nvidia/cuda\n", head="services:\n")),
        ),
    ),
    Reader(
        "scan-python",
        "scan of a Python file",
        _scan("m.py"),
        (
            Form("imports", repeat("import pynvml as p{i}; p{i}.nvmlInit()\n")),
            Form("one-line", repeat("x+", head="y = ", tail="1\n")),
            Form("strings", repeat("'cuda' ", head="s = (", tail=")\n")),
            Form(
                "if-chain",
                repeat(
                    "if torch.version.hip:\n  x = {i}\nelse:\n"
                    "  c = torch.cuda.get_device_capability()\n",
                    head="import torch\n",
                ),
            ),
            Form(
                "flags",
                repeat(
                    "IS_ROCM = torch.version.hip is not None\nif not IS_ROCM:\n"
                    "  c{i} = torch.cuda.get_device_capability()\n",
                    head="import torch\n",
                ),
            ),
        ),
    ),
    Reader(
        "scan-cuda",
        "scan of a .cu file",
        _scan("k.cu"),
        (
            Form("lt", repeat("<")),
            Form("launch", repeat("k<<<")),
            Form(
                "kernel",
                repeat("__global__ void k{i}(float*a){{a[0]=__shfl_sync(0xffffffff,a[0],1);}}\n"),
            ),
            Form("defines", repeat("#define W{i} 32\n")),
            Form("if-arch", repeat("#if __CUDA_ARCH__ >= {i}\n", tail="#endif\n")),
            Form(  # each mask's declaration was searched for in the whole file
                "masks",
                repeat(
                    "unsigned m{i} = m{i} & __ballot_sync(m{i}, 1);\n",
                    head="__global__ void k(){ unsigned m = 0xffffffff;\n",
                    tail="}\n",
                ),
            ),
            # sixteenth re-run: per finding, a whole-file pass of the vendor-switch, #if-chain
            # and HIP-mark checks (40 KB past two minutes)
            Form(
                "vendor-switches",
                repeat(
                    "switch(v){{case 0x1002: cudaMallocManaged(&p,1);}}\n",
                    head="__global__ void k(){\n",
                    tail="}\n",
                ),
            ),
            Form(
                "hip-marked",
                repeat(
                    "cudaMallocManaged(&p, 1);\n",
                    head="void f(){ hipMalloc(0); }\n__global__ void k(){\n",
                    tail="}\n",
                ),
            ),
            Form(
                "nested-ifs-hip",
                lambda n: (
                    b"__global__ void k(){\n"
                    + b"#if A\ncudaMallocManaged(&p,1);\n" * (n // 34)
                    + b"#endif\n" * (n // 34)
                    + b"}\nvoid g(){ hipMalloc(0); }\n"
                ),
            ),
            Form(  # each test looked for its closing bracket up to 16,000 characters on
                "warp-tests",
                repeat(
                    "if (threadIdx.x % 32 == 0 && warpSize == 32) {{",
                    head="__global__ void k(){",
                    tail="}\n",
                ),
            ),
        ),
    ),
    Reader(
        "scan-cmake",
        "scan of CMakeLists.txt (checkers and build model)",
        _scan("CMakeLists.txt"),
        (
            Form("sets", repeat("set(A{i} ${{B}} CUDA)\n")),
            Form("paren", repeat("f(")),
            Form("comment", repeat("x", head="# ", tail="\nproject(x LANGUAGES CUDA)\n")),
            Form("sources", repeat(" k{i}.cu", head="add_library(x", tail=")\n")),
            Form("bracket", repeat("[=[", head="set(a ", tail=")\n")),
            Form("paren-lines", repeat("f(\n")),
            Form("nested", lambda n: b"a(\n" * (n // 8) + b")\n" * (n // 8)),
            # red team F4: an unterminated quote, was 4.4 s CPU at 100 KB and > 150 s at 400 KB
            Form("open-quote", repeat('\\"', head='set(x "', tail=")\n")),
            Form("open-quote-if", repeat('\\"', head='if(x "', tail=")\n")),
            # sixteenth re-run: every open if() walked per command (800 KB: 82 s)
            Form("open-ifs", repeat("if(FOO)\na()\n")),
        ),
    ),
    Reader(
        "scan-makefile",
        "scan of a Makefile (checkers and build model)",
        _scan("Makefile"),
        (
            Form("comment", repeat("x", head="all:\n\tnvcc -o a a.cu\n# ", tail="\n")),
            Form("continuations", repeat("\tnvcc -o a a.cu \\\n", head="all:\n")),
            Form("token", repeat("y", head="all:\n\tnvcc ", tail=" -o a a.cu\n")),
            Form("conditionals", repeat("ifeq ($(X),{i})\nA=1\nendif\n")),
            Form("open-ifdefs", repeat("ifdef FOO\nx:=1\n")),  # sixteenth re-run: 52 s at 800 KB
            Form("spaces", repeat(" ", head="all:\n\tnvcc", tail="x\n")),
        ),
    ),
    Reader(
        "scan-readme",
        "scan's ROCm routes: README (and docs/)",
        _scan_with("README.md", {"k.cu": _EMPTY_CU}),
        (
            Form("headings", repeat("# ROCm {i}\n")),
            Form("installs", repeat("pip install torch --index-url https://x/rocm{i}\n")),
            Form("one-line", repeat("pip install x ", tail="rocm\n")),
        ),
    ),
    Reader(
        "scan-ci-workflow",
        "scan's ROCm routes: .github/workflows/*.yml",
        _scan_with(".github/workflows/ci.yml", {"k.cu": _EMPTY_CU}),
        (
            Form(
                "runs-on",
                repeat(
                    "  j{i}:\n    runs-on: ubuntu\n",
                    head="jobs:\n",
                    tail="  z:\n    runs-on: [amd]\n",
                ),
            ),
            Form("one-line", repeat("x", head="name: ", tail="\n")),
        ),
    ),
    Reader(
        "scan-gitignore",
        "scan with a .gitignore (matched against every path)",
        _scan_with(
            ".gitignore", {"k.cu": "__global__ void k(){}\n", "a/b/c/" + "d" * 200 + ".cu": "x\n"}
        ),
        (
            Form("lines", repeat("build{i}/\n")),
            Form("stars", repeat("*a*b{i}\n")),
            Form("negations", repeat("!keep{i}\n*.o\n")),
            Form("long-line", repeat("*a", tail="\n")),
        ),
    ),
    Reader(
        "scan-git-index",
        "scan of a git work tree: .git/index and .gitmodules",
        lambda folder, data: _git_project(folder, data),
        (
            Form("entries", lambda n: _index(n, lambda i: f"src/d{i % 50}/f{i}.cu")),
            Form("deep-path", lambda n: _index(n, None)),
            Form(
                "gitmodules", lambda n: repeat('[submodule "s{i}"]\n\tpath = third_party/s{i}\n')(n)
            ),
        ),
    ),
)


def _index(n: int, name_of: Callable[[int], str] | None) -> bytes:
    """A git index (``GITIDX`` + about n bytes, version 2, written here: dulwich refuses long
    names): many files, or many paths 4 KB deep (``i/a/a/.../k.cu``)."""
    import hashlib

    names: list[str] = []
    size = 0
    while size < n:
        i = len(names)
        names.append(name_of(i) if name_of else f"{i}/" + "a/" * 2040 + "k.cu")
        size += 64 + len(names[-1])
    out = b"DIRC" + struct.pack(">LL", 2, len(names))
    for name in sorted(names):
        raw = name.encode()
        entry = struct.pack(">10L", 0, 0, 0, 0, 0, 0, 0o100644, 0, 0, 0) + b"0" * 20
        entry += struct.pack(">H", min(len(raw), 0xFFF)) + raw
        out += entry + b"\0" * (8 - len(entry) % 8)
    return b"GITIDX" + out + hashlib.sha1(out).digest()  # noqa: S324 - git's own checksum


def _git_project(folder: Path, data: bytes) -> Callable[[], object]:
    from gpuport.scan.engine import ScanOptions, scan_path
    from gpuport.scan.project.gitindex import git_facts

    (folder / ".git").mkdir(exist_ok=True)
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (folder / "k.cu").write_text(_EMPTY_CU)
    if data.startswith(b"GITIDX"):
        (folder / ".git" / "index").write_bytes(data[6:])
        return lambda: git_facts(folder)
    (folder / ".gitmodules").write_bytes(data)
    return lambda: scan_path(folder, ScanOptions(jobs=1))


# --- hipify -------------------------------------------------------------------------------


def _translate(folder: Path, data: bytes) -> Callable[[], object]:
    from gpuport.hipify.run import translate_source
    from gpuport.knowledge import load_packages, resolve_target

    target, packages = resolve_target("gfx942"), load_packages()
    text = data.decode("utf-8", "surrogateescape")
    return lambda: translate_source(
        "k.cu", text, target=target, packages=packages, hip_version="5.2", annotate=True,
        launch_syntax="ggl",
    )  # fmt: skip


def _rewrite(kind: str) -> Prepare:
    def prepare(folder: Path, data: bytes) -> Callable[[], object]:
        from gpuport.hipify.buildfiles import rewrite_build_file
        from gpuport.scan.rules.base import FileKind

        text = data.decode("utf-8", "surrogateescape")
        return lambda: rewrite_build_file(text, FileKind(kind), "gfx942", wave64=True)

    return prepare


def _check_flags(name: str) -> Prepare:
    """``hipify --check``'s flag readers: compile_commands.json, or the Makefile/CMake."""

    def prepare(folder: Path, data: bytes) -> Callable[[], object]:
        from gpuport.hipify import check

        (folder / name).write_bytes(data)
        (folder / "k.cu").write_text(_EMPTY_CU)
        if name == "compile_commands.json":

            def run() -> object:
                check._DB_CACHE.clear()
                return check._compile_db(folder, folder / name)

            return run
        return lambda: check._from_build_files(folder, folder / "k.cu")

    return prepare


def _commands(n: int) -> bytes:
    entries, size = [], 0
    while size < n:
        i = len(entries)
        cmd = f"nvcc -DX{i}=1 -I/inc/{i} -isystem /s{i} -c k{i}.cu -o k{i}.o"
        entries.append({"directory": "/src", "file": f"k{i}.cu", "command": cmd})
        size += len(cmd) + 60
    return json.dumps(entries).encode()


HIPIFY_READERS = (
    Reader(
        "hipify-translate",
        "hipify's per-file step (+hazards, annotations, ggl)",
        _translate,
        (
            Form("lt", repeat("<")),
            Form("asm", repeat("asm(")),
            Form("shfl", repeat("__shfl_sync(")),
            Form("launch-args", repeat("k<<<1,1,0,s>>>(f(")),
            Form("raw-string", repeat('R"x(')),
            Form(
                "warp-code",
                repeat(
                    "for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);\n"
                ),
            ),
        ),
    ),
    Reader(
        "hipify-makefile",
        "hipify -o --build-files on a Makefile",
        _rewrite("makefile"),
        (
            Form("token", repeat("y", head="all:\n\tnvcc ", tail=" -o a a.cu\n")),
            Form("spaces", repeat(" ", head="all:\n\tnvcc", tail="x -arch=sm_80\n")),
            Form("slashes", repeat("a/", head="all:\n\t", tail="nvcc\n")),
            Form(
                "flags", repeat(" -arch=sm_80 -lcudart -DWARP=32", head="all:\n\tnvcc", tail="\n")
            ),
            Form("lines", repeat("\tnvcc -arch=sm_{i} -o a{i} a.cu\n", head="all:\n")),
        ),
    ),
    Reader(
        "hipify-cmake",
        "hipify -o --build-files on CMakeLists.txt",
        _rewrite("cmake"),
        (
            Form(
                "sources",
                repeat(" k{i}.cu", head="project(x LANGUAGES CUDA)\nadd_library(x", tail=")\n"),
            ),
            Form("words", repeat("CUDA ", head="set(L ", tail=")\n")),
            Form("archs", repeat("set(CMAKE_CUDA_ARCHITECTURES {i})\n")),
            Form("paren", repeat("find_package(", tail="CUDAToolkit)\n")),
        ),
    ),
    Reader(
        "hipify-check-compile-db",
        "hipify --check: compile_commands.json",
        _check_flags("compile_commands.json"),
        (
            Form("entries", _commands),
            Form(
                "one-command",
                lambda n: json.dumps(
                    [{"directory": "/", "file": "k.cu", "command": "nvcc " + "-DX=1 " * (n // 6)}]
                ).encode(),
            ),
        ),
    ),
    Reader(
        "hipify-check-makefile",
        "hipify --check: Makefile flags",
        _check_flags("Makefile"),
        (
            Form("flags", repeat(" -DX{i}=1 -I/inc{i}", head="CFLAGS =", tail="\n")),
            Form("token", repeat("-I", head="CFLAGS = ", tail="x\n")),
        ),
    ),
    Reader(
        "hipify-check-cmake",
        "hipify --check: CMake flags",
        _check_flags("CMakeLists.txt"),
        (
            Form("defs", repeat(" X{i}=1", head="add_compile_definitions(", tail=")\n")),
            Form("calls", repeat("include_directories(i{i})\n")),
        ),
    ),
)


# --- assess settings ----------------------------------------------------------------------


def _settings(name: str) -> Prepare:
    def prepare(folder: Path, data: bytes) -> Callable[[], object]:
        from gpuport.assess.config import load_settings
        from gpuport.models import GpuportError

        (folder / name).write_bytes(data)

        def run() -> object:
            try:
                return load_settings(folder)
            except GpuportError as exc:  # refusing a bad file is a reader's answer too
                return exc

        return run

    return prepare


SETTINGS_READERS = (
    Reader(
        "assess-gpuport-toml",
        "assess: gpuport.toml",
        _settings("gpuport.toml"),
        (
            Form("gpus", repeat('"mi300x",', head="gpus = [", tail="]\n")),
            Form("string", repeat("a", head='target = "', tail='"\n')),
            Form("comments", repeat("# gpuport\n", tail='target = "gfx942"\n')),
        ),
    ),
    Reader(
        "assess-tool-table",
        "assess: [tool.gpuport] in pyproject.toml",
        _settings("pyproject.toml"),
        (
            Form(
                "keys",
                repeat(
                    '"p{i}",\n',
                    head="[project]\ndependencies = [\n",
                    tail='][tool.gpuport]\ntarget = "gfx942"\n',
                ),
            ),
            Form("headers", repeat("[tool.x{i}]\n", tail='[tool.gpuport]\ntarget = "gfx942"\n')),
        ),
    ),
)


# --- result files ----------------------------------------------------------------------


def _with_digest(data: dict[str, Any]) -> bytes:
    from gpuport.integrity import digest_of

    data = {k: v for k, v in data.items() if k != "digest"}
    data["digest"] = digest_of(data)
    return json.dumps(data).encode()


def _bench_run(n: int) -> bytes:
    run = json.loads((REPO / "examples" / "bench" / "cpu-1-thread.json").read_text())
    one = json.dumps(run["results"][0])
    results = []
    while len(results) * len(one) < n:
        r = json.loads(one)
        r["case"] = f"{r['case']} #{len(results)}"
        results.append(r)
    run["results"] = results
    return _with_digest(run)


def _bench_samples(n: int) -> bytes:
    run = json.loads((REPO / "examples" / "bench" / "cpu-1-thread.json").read_text())
    from gpuport.bench.timing import summarize

    r = run["results"][0]
    base = r["samples"]  # each sample k times: the median (and so the value) stays
    r["samples"] = base * max(1, n // (22 * len(base)))
    r["time"] = summarize(r["samples"]).model_dump(mode="json")
    run["results"] = [r]
    return _with_digest(run)


def _load(model: str) -> Prepare:
    def prepare(folder: Path, data: bytes) -> Callable[[], object]:
        from gpuport.models import GpuportError, load_result

        path = folder / "result.json"
        path.write_bytes(data)
        if model == "bench":
            from gpuport.bench.model import BenchRun as cls
        else:
            from gpuport.validate.model import ParityReport as cls  # type: ignore[assignment]

        def run() -> object:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    return load_result(path, cls)
                except GpuportError as exc:
                    return exc

        return run

    return prepare


def _validate_report(n: int) -> bytes:
    seed = json.loads((REPO / "tests" / "security" / "seeds" / "validate-report.json").read_text())
    row = json.dumps(seed["rows"][0])
    rows = []
    while len(rows) * len(row) < n:
        r = json.loads(row)
        r["order"] = len(rows)
        r["path"] = f"layers.{len(rows)}"
        rows.append(r)
    seed["rows"] = rows  # all "same" (the seed's first row): the verdict follows
    seed["counts"] = {**{k: 0 for k in seed["counts"]}, "same": len(rows)}
    seed["counts"]["not-checked"] = len(seed.get("left_out") or [])
    seed["verdict"] = "same"
    seed["verdict_reason"] = f"all {len(rows)} compared tensor(s) within tolerance"
    seed["first_divergence"] = seed["first_divergence_order"] = None
    return _with_digest(seed)


def _snapshot(key: str) -> Make:
    """The h100_healthy snapshot with one part grown to n bytes (its id left for the load)."""

    def make(n: int) -> bytes:
        snap = json.loads((REPO / "tests/doctor/snapshots/h100_healthy.json").read_text())
        snap["id"] = ""  # a hand-written snapshot: its id is computed on load
        if key == "nvidia-smi":
            out = snap["tools"]["nvidia-smi"]["stdout"]
            snap["tools"]["nvidia-smi"]["stdout"] = out * max(1, n // len(out))
        elif key == "pci":
            snap["pci"] = snap["pci"] * max(1, n // max(1, len(json.dumps(snap["pci"]))))
        else:
            snap["dmesg"] = [
                f"[{i}.0] NVRM: Xid 79 GPU has fallen off the bus" for i in range(n // 48)
            ]
        return json.dumps(snap).encode()

    return make


def _load_snapshot(folder: Path, data: bytes) -> Callable[[], object]:
    from gpuport.doctor import diagnose, load_snapshot
    from gpuport.models import GpuportError

    path = folder / "snap.json"
    path.write_bytes(data)

    def run() -> object:  # doctor --from-snapshot: the load, the facts and every check
        try:
            return diagnose(load_snapshot(path), replayed=True)
        except GpuportError as exc:
            return exc

    return run


def _gpv(part: str) -> Make:
    """A real capture's header (tests/security/seeds) with one part grown to n bytes."""

    def make(n: int) -> bytes:
        header = json.loads((REPO / "tests/security/seeds/capture-header.json").read_text())
        manifest = json.loads(header["__metadata__"]["gpuport.validate"])
        if part == "left-out":
            manifest["left_out"] = [f"layers.{i}.extra" for i in range(n // 20)]
        else:  # tensors the manifest does not name
            for i in range(n // 80):
                header[f"in/{i:06d}/x/0"] = {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}
        header["__metadata__"]["gpuport.validate"] = json.dumps(manifest)
        raw = json.dumps(header).encode()
        end = max(v["data_offsets"][1] for k, v in header.items() if k != "__metadata__")
        return struct.pack("<Q", len(raw)) + raw + b"\0" * end  # the tensors: zeros

    return make


def _read_gpv(folder: Path, data: bytes) -> Callable[[], object]:
    from gpuport.models import GpuportError
    from gpuport.validate import gpv

    path = folder / "cap.gpv"
    path.write_bytes(data)

    def run() -> object:
        try:
            header = gpv._read_header(path)
            meta = header.get("__metadata__") or {}
            manifest = gpv._parse_manifest(path, meta.get(gpv.META_KEY, "{}"))
            gpv._check_manifest(path, manifest, header)
            return manifest
        except GpuportError as exc:
            return exc

    return run


def _knowledge(name: str) -> Prepare:
    def prepare(folder: Path, data: bytes) -> Callable[[], object]:
        from gpuport import knowledge
        from gpuport.knowledge import gpus, models
        from gpuport.models import GpuportError

        (folder / name).write_bytes(data)
        load = {
            "packages.toml": knowledge.load_packages,
            "gpus.toml": gpus.load_gpus,
            "models.toml": models.load_models,
            "targets.toml": knowledge.load_targets,
        }[name]

        def run() -> object:
            load.cache_clear()  # type: ignore[attr-defined]
            try:
                got = load(folder)
                if name == "packages.toml":
                    got.by_dist("nvidia-cublas-cu12-unknown")  # the alias globs are matched
                return got
            except GpuportError as exc:
                return exc

        return run

    return prepare


_PACKAGE = (
    '[[package]]\nname = "p{i}"\naliases = ["p{i}-*-x*y*z"]\nimports = ["p{i}"]\nstatus = "works"\n'
    'category = "library"\nsummary = "s"\nsources = ["https://example.org/{i}"]\n'
    "checked = 2026-11-20\n"
)


def _model_config(folder: Path, data: bytes) -> Callable[[], object]:
    from gpuport.knowledge.models import shape_from_hf_config
    from gpuport.models import GpuportError

    path = folder / "config.json"
    path.write_bytes(data)

    def run() -> object:
        try:
            return shape_from_hf_config(path)
        except GpuportError as exc:
            return exc

    return run


_CONFIG = {
    "model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
    "vocab_size": 128256, "max_position_embeddings": 8192, "torch_dtype": "bfloat16",
}  # fmt: skip


def _config_with(key: str, value: Callable[[int], Any]) -> Make:
    return lambda n: json.dumps({**_CONFIG, key: value(n)}).encode()


RESULT_READERS = (
    Reader(
        "result-bench-json",
        "bench run JSON (digest and derived figures checked)",
        _load("bench"),
        (
            Form("results", _bench_run),
            Form("samples", _bench_samples),
            Form(
                "long-label",
                lambda n: _with_digest(
                    {
                        **json.loads((REPO / "examples/bench/cpu-1-thread.json").read_text()),
                        "label": "x" * n,
                    }
                ),
            ),
        ),
    ),
    Reader(
        "result-validate-json",
        "validate report JSON (rows, counts, verdict re-derived)",
        _load("validate"),
        (
            Form("rows", _validate_report),
            Form(
                "warnings",
                lambda n: _with_digest(
                    {
                        **json.loads(
                            (REPO / "tests/security/seeds/validate-report.json").read_text()
                        ),
                        "warnings": ["w"] * (n // 4),
                    }
                ),
            ),
        ),
    ),
    Reader(
        "result-gpv-header",
        ".gpv capture header and manifest",
        _read_gpv,
        (
            Form("left-out", _gpv("left-out")),
            Form("tensors", _gpv("tensors")),
        ),
    ),
    Reader(
        "result-doctor-snapshot",
        "doctor --from-snapshot",
        _load_snapshot,
        (
            Form("tool-output", _snapshot("nvidia-smi")),
            Form("pci", _snapshot("pci")),
            Form("dmesg", _snapshot("dmesg")),
        ),
    ),
    Reader(
        "knowledge-packages",
        "--knowledge packages.toml (and its alias globs)",
        _knowledge("packages.toml"),
        (Form("entries", repeat(_PACKAGE, head="schema_version = 1\n")),),
    ),
    Reader(
        "knowledge-gpus",
        "--knowledge gpus.toml",
        _knowledge("gpus.toml"),
        (
            Form("comments", repeat("# gpu\n", head="schema_version = 1\n")),
            Form("string", repeat("a", head='schema_version = 1\n[gpu.x]\nname = "', tail='"\n')),
        ),
    ),
    Reader(
        "model-config",
        "cost --model-config config.json",
        _model_config,
        (
            Form(
                "long-list",
                _config_with("architectures", lambda n: ["LlamaForCausalLM"] * (n // 19)),
            ),
            Form("long-string", _config_with("model_type", lambda n: "l" * n)),
            Form(
                "many-keys",
                lambda n: json.dumps({**{f"k{i}": i for i in range(n // 12)}, **_CONFIG}).encode(),
            ),
        ),
    ),
)

READERS: tuple[Reader, ...] = PROJECT_READERS + HIPIFY_READERS + SETTINGS_READERS + RESULT_READERS


def runner(reader: Reader, form: Form) -> Callable[[int], float]:
    """A function that times ``form`` of ``reader`` at about n bytes (fresh scratch folder),
    in CPU seconds of this process."""

    def run(n: int) -> float:
        folder = Path(tempfile.mkdtemp(prefix="gpuport-doubling-"))
        try:
            call = reader.prepare(folder, form.make(n))
            gc.collect()
            started = time.process_time()  # CPU time: other work on the machine adds none
            call()
            return time.process_time() - started
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    return run


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kb", type=int, default=50, help="smallest size n in KB")
    ap.add_argument("--steps", type=int, default=4, help="sizes n, 2n, 4n ... (4: up to 8n)")
    ap.add_argument("--readers", default="", help="comma-separated reader names (default all)")
    ap.add_argument("--forms", default="", help="comma-separated form names (default all)")
    ap.add_argument("--repeat", type=int, default=1, help="best of N runs per size")
    ap.add_argument("--bound", type=float, default=2.5, help="largest ratio per doubling")
    args = ap.parse_args(argv)
    wanted = {r for r in args.readers.split(",") if r}
    forms = {f for f in args.forms.split(",") if f}
    readers = [r for r in READERS if not wanted or r.name in wanted]
    if wanted - {r.name for r in readers}:
        ap.error(f"unknown reader(s): {', '.join(sorted(wanted - {r.name for r in readers}))}")
    sizes = [args.kb * 1000 * 2**k for k in range(args.steps)]
    calib = min(calibrate() for _ in range(3))
    when = time.strftime("%Y-%m-%d %H:%M %Z")
    print(f"# {platform.machine()}, Python {platform.python_version()}, {when}")
    print(f"# calibration loop {calib:.3f} s (quiet = x {REFERENCE_CALIBRATION_S} / calibration)")
    head = " ".join(f"{s // 1000:>6}K" for s in sizes)
    print(f"{'reader':<26} {'form':<14} {head}  ratios{'':<14} quiet/100KB")
    worst = 0.0
    warnings.simplefilter("ignore")
    for reader in readers:
        for form in reader.forms:
            if forms and form.name not in forms:
                continue
            run = runner(reader, form)
            run(2000)  # warm: knowledge, API map, compiled patterns
            times = [min(run(n) for _ in range(args.repeat)) for n in sizes]
            ratios = [b / a if a > 0 else float("nan") for a, b in itertools.pairwise(times)]
            # ratios of timings under 10 ms are noise, not growth
            judged = [r for r, a in zip(ratios, times, strict=False) if a >= 0.01]
            worst = max([worst, *judged])
            quiet = times[-1] / (sizes[-1] / 100_000) * REFERENCE_CALIBRATION_S / calib
            cols = " ".join(f"{t:7.3f}" for t in times)
            rcols = " ".join(f"{r:5.2f}" for r in ratios)
            flag = "  <-- over" if any(r > args.bound for r in judged) else ""
            print(f"{reader.name:<26} {form.name:<14} {cols}  {rcols:<19} {quiet:6.3f}{flag}")
            sys.stdout.flush()
    print(f"# worst ratio per doubling: {worst:.2f} (bound {args.bound})")
    return 0 if worst <= args.bound else 1


if __name__ == "__main__":
    sys.exit(main())
