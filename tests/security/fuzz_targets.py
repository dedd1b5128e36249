"""One fuzz target per parser gpuport runs on files it did not write (issue 14).

Each target takes raw bytes and feeds them to one parser the way the CLI does; the only
exceptions it may raise are the ones the CLI turns into a one-line error or a skipped
file (:data:`ALLOWED`). Anything else is a crash. Two drivers use these targets:
``tests/security/test_fuzz.py`` (hypothesis, a few seconds inside the test suite) and
``tools/fuzz.py`` (``make fuzz``: a seeded mutation fuzzer for long runs, with a hang
timeout). :func:`seeds` gives each target a small corpus of real inputs to mutate.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import shutil
import struct
import tempfile
import warnings
from collections.abc import Callable
from functools import cache
from pathlib import Path

from gpuport.models import GpuportError
from gpuport.safeparse import ParseError

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
#: A folder that does not exist: `-r` includes and the like resolve against it, so a
#: fuzzed include never reads a real file.
NOWHERE = Path("/nonexistent-gpuport-fuzz")

Target = Callable[[bytes], None]


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


@cache
def _knowledge() -> tuple[object, object]:
    from gpuport.knowledge import load_packages, resolve_target

    return resolve_target("gfx942"), load_packages()


def _check(kind: str, rel: str, data: bytes) -> None:
    from gpuport.scan.engine import check_text
    from gpuport.scan.rules import FileKind

    target, packages = _knowledge()
    # RecursionError: the engine skips such a file with "nested too deeply to analyse"
    with contextlib.suppress(RecursionError):
        check_text(
            rel,
            _text(data),
            FileKind(kind),
            target,  # type: ignore[arg-type]
            packages,  # type: ignore[arg-type]
            path=NOWHERE / rel,
            root=NOWHERE,
        )


def requirements(data: bytes) -> None:
    _check("requirements", "requirements.txt", data)


def dockerfile(data: bytes) -> None:
    _check("dockerfile", "Dockerfile", data)


def cxx(data: bytes) -> None:
    """The C++ lexer, the scan's native rules, and hipify's launch parser and translation."""
    from gpuport.hipify.launch import rewrite_launches
    from gpuport.hipify.translate import translate
    from gpuport.scan.cxx import lex

    text = _text(data)
    rewrite_launches(lex(text))
    translate(text, hip_version="5.2", launch_syntax="ggl")
    _check("cuda/c++", "k.cu", data)


def python_imports(data: bytes) -> None:
    _check("python", "m.py", data)


@cache
def _scratch() -> Path:
    """One private folder per process for the files the targets write (reused: fast)."""
    path = Path(tempfile.mkdtemp(prefix="gpuport-fuzz-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def _load(data: bytes, model: type) -> None:
    from gpuport.models import load_result

    path = _scratch() / "result.json"
    path.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with contextlib.suppress(GpuportError):
            load_result(path, model)


def bench_json(data: bytes) -> None:
    from gpuport.bench.model import BenchRun

    _load(data, BenchRun)


def validate_json(data: bytes) -> None:
    from gpuport.validate.model import ParityReport

    _load(data, ParityReport)


def toml_config(data: bytes) -> None:
    """A project's gpuport.toml through assess's settings loader, and --knowledge TOML."""
    from gpuport.assess.config import load_settings
    from gpuport.knowledge import load_packages

    root = _scratch() / "project"
    root.mkdir(exist_ok=True)
    (root / "gpuport.toml").write_bytes(data)
    with contextlib.suppress(GpuportError):
        load_settings(root)
    (root / "gpuport.toml").unlink()
    (root / "packages.toml").write_bytes(data)
    with contextlib.suppress(GpuportError):
        load_packages(root)
    (root / "packages.toml").unlink()


def gpv_header(data: bytes) -> None:
    """A `.gpv` capture's safetensors header and the gpuport manifest inside it."""
    from gpuport.validate import gpv

    path = _scratch() / "cap.gpv"
    path.write_bytes(struct.pack("<Q", len(data)) + data + b"\0" * 64)
    with contextlib.suppress(GpuportError):
        header = gpv._read_header(path)
        meta = header.get("__metadata__")
        text = meta.get(gpv.META_KEY) if isinstance(meta, dict) else None
        if isinstance(text, str):
            manifest = gpv._parse_manifest(path, text)
            gpv._check_manifest(path, manifest, header)


def safeparse(data: bytes) -> None:
    from gpuport.safeparse import json_value, toml_table

    for parse in (json_value, toml_table):
        with contextlib.suppress(ParseError):
            parse(data)


TARGETS: dict[str, Target] = {
    "requirements": requirements,
    "dockerfile": dockerfile,
    "cxx": cxx,
    "python": python_imports,
    "bench-json": bench_json,
    "validate-json": validate_json,
    "toml-config": toml_config,
    "gpv-header": gpv_header,
    "safeparse": safeparse,
}

#: Exceptions a target may raise: none (each target catches what the CLI catches).
ALLOWED: tuple[type[BaseException], ...] = ()


def _files(*globs: str) -> list[bytes]:
    out = []
    for pattern in globs:
        out += [p.read_bytes() for p in sorted(FIXTURES.glob(pattern)) if p.is_file()]
    return out


@cache
def seeds(name: str) -> tuple[bytes, ...]:
    """Real inputs to start mutating from, per target."""
    tokens = {
        "requirements": [b"torch==2.1\n-r other.txt\n--index-url https://x/cu121\nflash-attn\n"],
        "dockerfile": [b'FROM nvidia/cuda:12.1-devel\nRUN ["pip", "install", "torch"]\n'],
        "cxx": [b"__global__ void k(float*a){a[0]=__shfl_sync(0xffffffff,a[0],1);}\n"],
        "python": [b"import pynvml as p\nimport torch\nc = torch.cuda.get_device_capability()\n"],
        "toml-config": [b'target = "gfx942"\n[tool.gpuport]\nbench = ["a.json"]\n'],
    }
    if name == "requirements":
        found = _files("rules/deps/**/requirements*.txt", "assess/*/requirements.txt")
    elif name == "dockerfile":
        found = _files("rules/containers/Dockerfile", "rules/containers/*.dockerfile")
    elif name == "cxx":
        found = _files("rules/native/**/*.cu", "hipify/**/*.cu", "rules/native/**/*.cpp")
    elif name == "python":
        found = _files("rules/python/**/*.py")
    elif name == "toml-config":
        found = _files("assess/*/gpuport.toml", "rules/deps/**/pyproject.toml")
    elif name == "bench-json":
        found = [p.read_bytes() for p in sorted((REPO / "examples" / "bench").glob("*.json"))]
    elif name == "validate-json":
        found = [_validate_report()]
    elif name == "gpv-header":
        found = [_gpv_header()]
    else:
        found = [b'{"a": [1, 2.5, "x", null, {"b": true}]}', b'a = 1\n[t]\nb = [1, "x"]\n']
    return tuple(tokens.get(name, []) + found)


def _validate_report() -> bytes:
    report = {
        "kind": "gpuport.validate",
        "schema_version": "1.0",
        "mode": "check",
        "a": {"device": "cpu"},
        "b": {"device": "cpu"},
        "rows": [],
        "counts": {"same": 0, "equivalent": 0, "different": 0, "wrong": 0, "not-checked": 0},
        "verdict": "nothing-compared",
        "verdict_reason": "no tensor could be compared",
    }
    return json.dumps(report).encode()


def _gpv_header() -> bytes:
    manifest = {"kind": "gpuport.validate.capture", "schema_version": "1.0", "checksums": {}}
    header = {
        "__metadata__": {"gpuport.validate": json.dumps(manifest)},
        "t": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
    }
    return json.dumps(header).encode()
