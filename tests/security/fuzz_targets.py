"""One fuzz target per reader of project or result files (issues 14 and 23).

Each target takes raw bytes and feeds them to one reader the way the CLI does: the scan of a
project made of that one file (the checkers of its kind and the project view: build model,
routes, extras, scopes, .gitignore and git index), hipify's translation, build-file rewrite
and ``--check`` flag readers, assess's settings, ``--knowledge`` TOML, and the result files.
The only exception a target may let through is none: each catches what the CLI turns into a
one-line error (``GpuportError``, exit 2); anything else is a crash. ``GPUPORT_DEBUG`` is set,
so the scan raises what it would otherwise list as "internal error, please report".

Result files are fed by :mod:`tests.security.fuzz_structured`: the bytes are a mutation
program for a valid document whose digest is then recomputed, so the checks behind the
parser and the digest run (a first byte that is odd feeds the rest as the raw file instead).

Three drivers use these targets: ``tests/security/test_fuzz.py`` (hypothesis, a few seconds
in the test suite), ``tools/fuzz.py`` (``make fuzz``: coverage-guided with atheris, per-target
coverage recorded; or a seeded mutation fuzzer) and ``tools/fuzz_atheris.py`` (one target in
one process). :func:`seeds` gives each target its committed seed inputs.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from gpuport.models import GpuportError
from gpuport.safeparse import ParseError
from tests.security.fuzz_structured import program_input, with_digest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
RULE_FIXTURES = REPO / "src" / "gpuport" / "scan" / "rules"
SEEDS = Path(__file__).resolve().parent / "seeds"

Target = Callable[[bytes], None]
KERNEL = "__global__ void k(float* a) { a[threadIdx.x] = 0; }\n"


def _text(data: bytes) -> str:
    """As hipify reads a source: undecodable bytes kept as surrogates."""
    return data.decode("utf-8", "surrogateescape")


def _utf8(data: bytes) -> str:
    """As the scan reads a file: UTF-8 (a file that is not is skipped; here its bad bytes
    become U+FFFD, so the input still reaches the readers)."""
    return data.decode("utf-8", "replace").removeprefix("\ufeff")


@cache
def _scratch() -> Path:
    """One private folder per process for the files the targets write (reused: fast; in
    memory where /dev/shm is there, as file systems under load are slow to create files)."""
    shm = Path("/dev/shm")
    path = Path(tempfile.mkdtemp(prefix="gpuport-fuzz-", dir=shm if shm.is_dir() else None))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def _folder(name: str) -> Path:
    folder = _scratch() / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@cache
def _knowledge() -> tuple[Any, Any]:
    from gpuport.knowledge import load_packages, resolve_target

    return resolve_target("gfx942"), load_packages()


#: Where a fuzzed file claims to be: no such folder, so an include never reads a real file.
NOWHERE = Path("/nonexistent-gpuport-fuzz")


def _view(rel: str, kind: Any, text: str) -> None:
    """What the project view reads from one file (``scan.project.view.view_of`` without the
    disk): the build model, the preprocessor facts, the extras and the ROCm routes."""
    from gpuport.scan.project import extras, view
    from gpuport.scan.project.build_model import build_model
    from gpuport.scan.project.cxx_facts import cxx_facts, includes_of
    from gpuport.scan.project.routes import find_routes
    from gpuport.scan.rules.base import FileKind

    native = {rel: text} if kind is FileKind.NATIVE else {}
    builds = {rel: text} if kind in view._BUILD_KINDS else {}
    includes = {r: includes_of(t) for r, t in native.items()}
    model = build_model(builds, native, includes)
    cxx_facts(native, includes)
    readers = {
        FileKind.PYPROJECT: extras.pyproject_extra_lines,
        FileKind.SETUP_PY: extras.setup_py_extra_lines,
        FileKind.SETUP_CFG: extras.setup_cfg_extra_lines,
    }
    if kind in readers:
        readers[kind](text)
    if kind in view._ROUTE_KINDS:
        find_routes(NOWHERE, {rel: (kind.value, text)}, model.rocm_builds)


def _project(rel: str) -> Target:
    """A file as the scan reads it: its kind's checkers and the project view."""

    def target(data: bytes) -> None:
        from gpuport.scan.engine import check_text
        from gpuport.scan.project.files import classify

        kind = classify(rel)
        text = _utf8(data)
        tgt, packages = _knowledge()
        try:  # the engine lists RecursionError as "nested too deeply to analyse"
            check_text(rel, text, kind, tgt, packages, path=NOWHERE / rel, root=NOWHERE)
            _view(rel, kind, text)
        except RecursionError:
            pass

    return target


def _scan(folder: Path) -> None:
    from gpuport.scan.engine import ScanOptions, scan_path

    with contextlib.suppress(GpuportError):  # NothingToScan, a refused root: exit 2
        scan_path(folder, ScanOptions(jobs=1))


_PROJECT_FILES = (
    "k.cu", "setup.py", "CMakeLists.txt", "Makefile", "requirements.txt", ".gitignore",
    "pyproject.toml", "README.md", "Dockerfile", "environment.yml", "sub/k.cuh", ".gitmodules",
)  # fmt: skip


def project(data: bytes) -> None:
    """A whole project on disk (the bytes split at NUL NUL into its files): the walk,
    .gitignore, the project view across files, every checker and the verdict."""
    folder = _folder("project")
    parts = data.split(b"\0\0")
    for i, name in enumerate(_PROJECT_FILES):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(parts[i] if i < len(parts) else b"")
    _scan(folder)


def port(data: bytes) -> None:
    """``gpuport port --unsafe-fixes --apply`` on a whole project (as ``project`` builds it):
    every fix family's reader of setup.py, CMake, Makefiles, sources, containers and
    requirements, the diff, the write and the re-scan that verifies it."""
    from gpuport.port import PortOptions, port_path

    folder = _folder("port")
    shutil.rmtree(folder)  # the last input's applied fixes and backups
    folder.mkdir()
    parts = data.split(b"\0\0")
    for i, name in enumerate(_PROJECT_FILES):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(parts[i] if i < len(parts) else b"")
    with contextlib.suppress(GpuportError):  # nothing to port, a refused root: exit 2
        port_path(folder, PortOptions(unsafe_fixes=True, apply=True, jobs=1))


def _docs(name: str) -> Target:
    """A README or a CI workflow, read by the scan's ROCm routes from the project folder."""

    def target(data: bytes) -> None:
        from gpuport.scan.project import routes, routes_docs

        folder = _folder("docs")
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
        routes_docs.doc_routes(folder)
        routes._ci(folder)

    return target


# --- project files and hipify ------------------------------------------------------------


def cxx(data: bytes) -> None:
    """The C++ lexer, hipify's launch parser and per-file translation, and the scan."""
    from gpuport.hipify.launch import rewrite_launches
    from gpuport.hipify.run import translate_source
    from gpuport.scan.cxx import lex

    text = _text(data)
    target, packages = _knowledge()
    rewrite_launches(lex(text))
    for syntax in ("ggl", "keep"):
        translate_source(
            "k.cu", text, target=target, packages=packages, hip_version="5.2", annotate=True,
            launch_syntax=syntax,  # type: ignore[arg-type]
        )  # fmt: skip
    _project("k.cu")(data)


def _build_file(name: str, kind: str) -> Target:
    """A CMakeLists.txt or Makefile: the scan, hipify's rewrite and --check's flag reader."""

    def target(data: bytes) -> None:
        from gpuport.hipify import check
        from gpuport.hipify.buildfiles import rewrite_build_file
        from gpuport.scan.rules.base import FileKind

        text = _text(data)
        for wave64 in (False, True):
            rewrite_build_file(text, FileKind(kind), "gfx942", wave64=wave64)
        _project(name)(data)
        folder = _folder("flags-" + kind)
        (folder / "k.cu").write_text(KERNEL)
        (folder / name).write_bytes(data)
        with contextlib.suppress(GpuportError):
            check._from_build_files(folder, folder / "k.cu")

    return target


def pyproject(data: bytes) -> None:
    _project("pyproject.toml")(data)
    _settings("pyproject.toml", data)


def gitignore(data: bytes) -> None:
    from gpuport.scan.project.files import gitignore_spec

    lines = _utf8(data).splitlines()
    spec, _ = gitignore_spec(lines)
    for path in ("k.cu", "build/", "a/b/c.o", "x/" * 50 + "k.cu", *lines[:20]):
        spec.match_file(path)


def _git(name: str) -> Target:
    def target(data: bytes) -> None:
        from gpuport.scan.project.gitindex import git_facts

        folder = _folder("git-" + name)
        (folder / ".git").mkdir(exist_ok=True)
        (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        (folder / "k.cu").write_text(KERNEL)
        (folder / (".git/index" if name == "index" else ".gitmodules")).write_bytes(data)
        facts = git_facts(folder)
        "k" in facts.tracked_dirs  # noqa: B015 - the lookup is what is tested

    return target


def compile_db(data: bytes) -> None:
    """``compile_commands.json`` as hipify --check reads it (raw, or a mutated real one)."""
    from gpuport.hipify import check

    folder = _folder("cdb")
    raw = data[1:] if data[:1] and data[0] & 1 else program_input(_seed_db(), data, None)
    (folder / "compile_commands.json").write_bytes(raw)
    (folder / "k.cu").write_text(KERNEL)
    check._DB_CACHE.clear()
    with contextlib.suppress(GpuportError):
        db = check._compile_db(folder, folder / "compile_commands.json")
        if db:
            for entry in list(db.values())[:5]:
                assert isinstance(entry[0], list)


def _seed_db() -> list[dict[str, Any]]:
    return [
        {"directory": "/src", "file": "k.cu", "command": "nvcc -DX=1 -I/inc -std=c++17 -c k.cu"},
        {"directory": "/src", "file": "m.cu", "arguments": ["nvcc", "-isystem", "/s", "m.cu"]},
    ]


def _settings(name: str, data: bytes) -> None:
    from gpuport.assess.config import load_settings

    folder = _folder("settings-" + name)
    (folder / name).write_bytes(data)
    with contextlib.suppress(GpuportError):
        load_settings(folder)


def settings(data: bytes) -> None:
    _settings("gpuport.toml", data)


def _fresh_knowledge() -> Path:
    folder = _folder("knowledge")
    for old in folder.iterdir():  # one file at a time: the others would be read too
        old.unlink()
    return folder


def knowledge(data: bytes) -> None:
    """A ``--knowledge`` folder: the first byte picks the file (packages, gpus, models, targets)."""
    from gpuport import knowledge as kb
    from gpuport.knowledge import gpus, models

    names = ("packages.toml", "gpus.toml", "models.toml", "targets.toml")
    name = names[data[0] % 4] if data else names[0]
    folder = _fresh_knowledge()
    (folder / name).write_bytes(data[1:])
    load = {
        "packages.toml": kb.load_packages,
        "gpus.toml": gpus.load_gpus,
        "models.toml": models.load_models,
        "targets.toml": kb.load_targets,
    }[name]
    load.cache_clear()  # type: ignore[attr-defined]
    with contextlib.suppress(GpuportError):
        got = load(folder)
        if name == "packages.toml":
            got.by_dist("nvidia-cublas-cu12")  # type: ignore[attr-defined]
            got.by_import("torch.cuda")  # type: ignore[attr-defined]


# --- result files ------------------------------------------------------------------------


def _file(data: bytes, seed: Callable[[], Any], seal: Callable[[Any], Any] | None) -> bytes:
    if data[:1] and data[0] & 1:
        return data[1:]
    return program_input(seed(), data[1:], seal)


def _load(data: bytes, model: type) -> None:
    from gpuport.models import load_result

    path = _scratch() / "result.json"
    path.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with contextlib.suppress(GpuportError):
            load_result(path, model)


@cache
def _json(path: Path) -> Any:
    return json.loads(path.read_text())


def _bench_seed() -> Any:
    return _json(REPO / "examples" / "bench" / "cpu-1-thread.json")


def _validate_seed() -> Any:
    return _json(SEEDS / "validate-report.json")


def bench_json(data: bytes) -> None:
    from gpuport.bench.model import BenchRun

    _load(_file(data, _bench_seed, with_digest), BenchRun)


def validate_json(data: bytes) -> None:
    from gpuport.validate.model import ParityReport

    _load(_file(data, _validate_seed, with_digest), ParityReport)


def gpv_header(data: bytes) -> None:
    """A ``.gpv`` capture's safetensors header and the gpuport manifest inside it."""
    import struct

    from gpuport.validate import gpv

    def seed() -> Any:
        header = dict(_json(SEEDS / "capture-header.json"))
        header["__metadata__"] = dict(header["__metadata__"])
        manifest = json.loads(header["__metadata__"][gpv.META_KEY])
        return {"header": header, "manifest": manifest}

    if data[:1] and data[0] & 1:
        raw = data[1:]
    else:  # the manifest travels as a string inside the header: mutated as a document
        doc = json.loads(program_input(seed(), data[1:], None))
        header = doc.get("header") if isinstance(doc, dict) else None
        if isinstance(header, dict):
            meta = header.get("__metadata__")
            if isinstance(meta, dict):
                meta[gpv.META_KEY] = json.dumps(doc.get("manifest"), allow_nan=True)
        raw = json.dumps(header, allow_nan=True).encode("utf-8", "surrogatepass")
    path = _scratch() / "cap.gpv"
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * 4096)
    with contextlib.suppress(GpuportError):
        header = gpv._read_header(path)
        meta = header.get("__metadata__")
        text = meta.get(gpv.META_KEY) if isinstance(meta, dict) else None
        if isinstance(text, str):
            manifest = gpv._parse_manifest(path, text)
            gpv._check_manifest(path, manifest, header)


def _snapshot_seed() -> Any:
    return _json(REPO / "tests" / "doctor" / "snapshots" / "h100_healthy.json")


def _seal_snapshot(doc: Any) -> Any:
    if isinstance(doc, dict):
        doc = dict(doc)
        doc["id"] = ""  # a hand-written snapshot: its id is computed on load
    return doc


def doctor_snapshot(data: bytes) -> None:
    """``doctor --from-snapshot``: the load, the facts and every check."""
    from gpuport.doctor import diagnose, load_snapshot

    path = _scratch() / "snap.json"
    path.write_bytes(_file(data, _snapshot_seed, _seal_snapshot))
    with contextlib.suppress(GpuportError):
        diagnose(load_snapshot(path), replayed=True)


def _config_seed() -> Any:
    return {
        "model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
        "vocab_size": 128256, "max_position_embeddings": 8192, "torch_dtype": "bfloat16",
        "text_config": {"model_type": "gemma3_text", "hidden_size": 2560},
    }  # fmt: skip


def model_config(data: bytes) -> None:
    from gpuport.knowledge.models import shape_from_hf_config

    path = _scratch() / "config.json"
    path.write_bytes(_file(data, _config_seed, None))
    with contextlib.suppress(GpuportError):
        shape_from_hf_config(path)


def safeparse(data: bytes) -> None:
    from gpuport.safeparse import json_value, toml_table

    for parse in (json_value, toml_table):
        with contextlib.suppress(ParseError):
            parse(data)


def _debugging(target: Target) -> Target:
    """TARGET with ``GPUPORT_DEBUG`` set while it runs (the scan raises a checker's crash instead
    of listing it), and only then: importing these targets leaves the environment of the other
    tests as it was."""

    def run(data: bytes) -> None:
        before = os.environ.get("GPUPORT_DEBUG")
        os.environ["GPUPORT_DEBUG"] = "1"
        try:
            target(data)
        finally:
            if before is None:
                del os.environ["GPUPORT_DEBUG"]
            else:
                os.environ["GPUPORT_DEBUG"] = before

    run.__name__ = getattr(target, "__name__", "target")
    return run


_TARGETS: dict[str, Target] = {
    "requirements": _project("requirements.txt"),
    "pyproject": pyproject,
    "setup-py": _project("setup.py"),
    "setup-cfg": _project("setup.cfg"),
    "conda": _project("environment.yml"),
    "dockerfile": _project("Dockerfile"),
    "compose": _project("docker-compose.yml"),
    "python": _project("m.py"),
    "cxx": cxx,
    "cmake": _build_file("CMakeLists.txt", "cmake"),
    "makefile": _build_file("Makefile", "makefile"),
    "readme": _docs("README.md"),
    "ci-workflow": _docs(".github/workflows/ci.yml"),
    "gitignore": gitignore,
    "git-index": _git("index"),
    "gitmodules": _git("gitmodules"),
    "compile-db": compile_db,
    "settings": settings,
    "knowledge": knowledge,
    "bench-json": bench_json,
    "validate-json": validate_json,
    "gpv-header": gpv_header,
    "doctor-snapshot": doctor_snapshot,
    "model-config": model_config,
    "safeparse": safeparse,
    "project": project,
    "port": port,
}
TARGETS: dict[str, Target] = {name: _debugging(t) for name, t in _TARGETS.items()}

#: Exceptions a target may raise: none (each target catches what the CLI catches).
ALLOWED: tuple[type[BaseException], ...] = ()

#: Where each target's committed seeds come from: globs under the rule fixtures, the test
#: fixtures and tests/security/seeds (real files gpuport wrote or the tests keep).
_GLOBS: dict[str, tuple[str, ...]] = {
    "requirements": ("deps/fixtures/**/requirements*.txt", "fixtures:assess/*/requirements.txt"),
    "pyproject": ("deps/fixtures/**/pyproject.toml", "fixtures:**/pyproject.toml"),
    "setup-py": ("**/fixtures/**/setup.py", "fixtures:projects/**/setup.py"),
    "setup-cfg": ("deps/fixtures/**/setup.cfg",),
    "conda": ("deps/fixtures/**/environment*.yml", "fixtures:**/environment*.yml"),
    "dockerfile": ("containers/fixtures/**/Dockerfile*", "containers/fixtures/**/*.dockerfile"),
    "compose": ("containers/fixtures/**/*compose*.yml",),
    "python": ("python/fixtures/**/*.py",),
    "cxx": ("native/fixtures/**/*.cu", "native/fixtures/**/*.cpp", "fixtures:hipify/**/*.cu"),
    "cmake": ("build/fixtures/**/CMakeLists.txt", "build/fixtures/**/*.cmake"),
    "makefile": ("build/fixtures/**/Makefile", "build/fixtures/**/*.mk"),
    "readme": ("native/fixtures/README.md", "fixtures:projects/**/README.md"),
    "settings": ("fixtures:assess/*/gpuport.toml",),
}
_TOKENS: dict[str, list[bytes]] = {
    "requirements": [b"torch==2.1\n-r other.txt\n--index-url https://x/cu121\nflash-attn\n"],
    "dockerfile": [b'FROM nvidia/cuda:12.1-devel\nRUN ["pip", "install", "torch"]\n'],
    "cxx": [b"__global__ void k(float*a){a[0]=__shfl_sync(0xffffffff,a[0],1);}\n"],
    "python": [b"import pynvml as p\nimport torch\nc = torch.cuda.get_device_capability()\n"],
    "settings": [b'target = "gfx942"\ngpus = ["mi300x", "h100"]\nhipify_check = true\n'],
    "pyproject": [b'[project]\ndependencies = ["torch"]\n[tool.gpuport]\ntarget = "gfx942"\n'],
    "conda": [b"channels: [nvidia]\ndependencies:\n  - cudatoolkit=11.8\n  - pip:\n    - torch\n"],
    "compose": [b"services:\n a:\n  image: nvidia/cuda\n  runtime: nvidia\n"],
    "setup-cfg": [b"[options]\ninstall_requires =\n    torch\n    cupy-cuda12x\n"],
    "setup-py": [b"from setuptools import setup\nif IS_ROCM:\n    S = ['a.hip']\nelse:\n"
                 b"    S = ['a.cu']\nsetup(install_requires=['torch'],\n"
                 b"      ext_modules=[CUDAExtension('x', S)])\n"],
    "cmake": [b"project(x LANGUAGES CXX CUDA)\nset(CMAKE_CUDA_ARCHITECTURES 80)\n"
              b"add_library(x k.cu)\ntarget_link_libraries(x CUDA::cublas)\n"],
    "makefile": [b"CFLAGS = -DX=1 -I inc\nall:\n\tnvcc -arch=sm_80 -o a a.cu -lcudart\n"],
    "readme": [b"# ROCm\npip install torch --index-url https://download.pytorch.org/whl/rocm6.2\n"],
    "ci-workflow": [b"jobs:\n  t:\n    runs-on: [self-hosted, amd, mi300]\n"],
    "gitignore": [b"build/\n*.o\n!keep.o\n/dist\n**/tmp\n\\#x\na/**/b\n"],
    "gitmodules": [b'[submodule "t"]\n\tpath = third_party/t\n\turl = https://x/t\n'],
    "knowledge": [b'\x00schema_version = 1\n[[package]]\nname = "p"\nstatus = "works"\n'],
    "safeparse": [b'{"a": [1, 2.5, "x", null, {"b": true}]}', b'a = 1\n[t]\nb = [1, "x"]\n'],
}  # fmt: skip


def _files(globs: tuple[str, ...]) -> list[bytes]:
    out: list[bytes] = []
    for pattern in globs:
        base, pattern = (FIXTURES, pattern[9:]) if pattern.startswith("fixtures:") else (
            RULE_FIXTURES, pattern)  # fmt: skip
        out += [p.read_bytes() for p in sorted(base.glob(pattern)) if p.is_file()]
    return [b for b in out if len(b) < 64_000]


@cache
def seeds(name: str) -> tuple[bytes, ...]:
    """Committed inputs to start from, per target (``make fuzz`` adds real repositories')."""
    found = list(_TOKENS.get(name, [])) + _files(_GLOBS.get(name, ()))
    if name in ("project", "port"):
        found.append(b"\0\0".join(t[0] for t in (_TOKENS["cxx"], _TOKENS["setup-py"],
                     _TOKENS["cmake"], _TOKENS["makefile"], _TOKENS["requirements"],
                     _TOKENS["gitignore"])))  # fmt: skip
    if name == "git-index":
        found.append(_index(["src/k.cu", "third_party/t", "a/b/c.cu"]))
    if name == "compile-db":
        found.append(b"\x01" + json.dumps(_seed_db()).encode())
    if name in ("bench-json", "validate-json", "gpv-header", "doctor-snapshot", "model-config"):
        found += [b"", b"\x00\x03\x05\x07", b"\x02\x01\x00\x00\x09"]  # programs: few steps
    return tuple(found) or (b"",)


def _index(paths: list[str]) -> bytes:
    import io

    from dulwich.index import IndexEntry, write_index_dict

    out = io.BytesIO()
    entry = IndexEntry((0, 0), (0, 0), 0, 0, 0o100644, 0, 0, 0, b"0" * 40)
    write_index_dict(out, {p.encode(): entry for p in paths})
    return out.getvalue()
