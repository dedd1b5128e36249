"""Scopes: what part of the project a file belongs to, by its path only.

``core`` (the library or application, its packaging and build), ``test``,
``example``, ``benchmark``, ``docs``, ``tooling`` (scripts, CI, dev tools),
``extra`` (an optional extra or a platform-variant manifest) and ``other-vendor``
(another vendor's backend: Intel Gaudi/HPU/XPU, Ascend NPU, AWS Neuron, Apple
MPS/Metal, ggml's other backends ...). The verdict and the effort come from core
findings; the others are counted and shown apart (``--scope all`` judges all).
"""

from __future__ import annotations

import enum
import functools
import re
from pathlib import Path

from gpuport import textre

__all__ = ["Scope", "nvidia_variant_manifest", "optional_requirements", "scope_of"]


class Scope(enum.StrEnum):
    CORE = "core"
    TEST = "test"
    EXAMPLE = "example"
    BENCHMARK = "benchmark"
    DOCS = "docs"
    TOOLING = "tooling"
    EXTRA = "extra"
    OTHER_VENDOR = "other-vendor"


_DIRS: tuple[tuple[Scope, re.Pattern[str]], ...] = (
    (
        Scope.OTHER_VENDOR,
        textre.compile(
            r"^(?:habana|gaudi\d?|hpu|xpu|intel|ipex|ascend|npu|neuron|inferentia|trainium|tpu|"
            r"xla|mps|metal|sycl|oneapi|vulkan|opencl|musa|mlu|cann|openvino|hexagon|kompute|"
            r"webgpu|ipu|rbln|gaudi_backend|intel_gaudi|"
            r"ggml-(?!cuda|hip|cpu|common|base|backend)[\w-]+)$",
            re.I,
        ),
    ),
    (Scope.TEST, textre.compile(r"^(?:tests?|testing|unittests?|test_\w+|\w+_tests?)$", re.I)),
    (
        Scope.EXAMPLE,
        textre.compile(
            r"^(?:examples?|demos?|tutorials?|notebooks?|samples?|recipes|cookbook)$", re.I
        ),
    ),
    (
        Scope.BENCHMARK,
        textre.compile(
            r"^(?:benchmarks?|bench|benchmarking|perf|perf[-_]?tests?|profiling)$", re.I
        ),
    ),
    (Scope.DOCS, textre.compile(r"^(?:docs?|documentation|website|blogs?|assets)$", re.I)),
    (
        Scope.TOOLING,
        textre.compile(r"^(?:scripts?|tools?|tooling|ci|\.ci|\.github|dev|utils_ci)$", re.I),
    ),
)
#: tests, and bug reproductions (repro_x.py, racecheck_repro_1d.py): they run once, by hand
_TEST_FILE = textre.compile(
    r"^(?:test_.*|.*_test|conftest|(?:.*[_-])?repro(?:[_-].*)?)\.py$|^.*_test\.(?:cu|cpp|cc)$",
    re.I,
)
_BENCH_FILE = textre.compile(r"^bench(?:mark)?_.*\.py$", re.I)
#: a container image or compose file, by name: one named for CI, linting or tests builds the
#: project's CI machine, not what its users run (a plain Dockerfile, or one named for a
#: platform or a dev setup, keeps the scope of its folder)
_CONTAINER_FILE = textre.compile(r"dockerfile|containerfile|compose[-_.\w]*\.ya?ml$", re.I)
_CI_WORDS = frozenset({"ci", "cicd", "lint", "linting", "jenkins", "buildkite", "gitlab"})
_TEST_WORDS = frozenset({"test", "tests", "testing"})
#: A requirements file named for what it serves (a word of its name, or its name in a
#: ``requirements/`` folder)
_REQ_FILE = textre.compile(r"^requirements[-_.].*\.(?:txt|in)$", re.I)
_REQ_WORDS: tuple[tuple[Scope, frozenset[str]], ...] = (
    (Scope.DOCS, frozenset({"doc", "docs", "documentation", "mkdocs", "sphinx"})),
    (Scope.TEST, frozenset({"test", "tests", "testing", "ci"})),
    (Scope.TOOLING, frozenset({"dev", "lint", "linting", "typing", "mypy", "style", "format"})),
    (Scope.BENCHMARK, frozenset({"bench", "benchmark", "benchmarks"})),
)


@functools.lru_cache(maxsize=4096)
def scope_of(rel: str) -> Scope:
    """The scope of a file from its path relative to the scanned root (asked once per
    finding: 40,000 findings of one compose file took 3.9 s)."""
    parts = rel.split("/")
    for part in parts[:-1]:
        for scope, pattern in _DIRS:
            if pattern.match(part):
                return scope
    name = parts[-1]
    stem = name.rsplit(".", 1)[0] if "." in name else name
    stem_words = textre.split(r"[-_.]", stem.lower())
    if any(_DIRS[0][1].match(w) for w in stem_words[1:]):  # requirements_intel.txt
        return Scope.OTHER_VENDOR
    if _CONTAINER_FILE.search(name):
        words = set(textre.split(r"[-_.]", name.lower()))
        if words & _CI_WORDS:  # Dockerfile.ci.dev, ci.Dockerfile, docker-compose.ci.yml
            return Scope.TOOLING
        if words & _TEST_WORDS:  # Dockerfile.test
            return Scope.TEST
    if _REQ_FILE.match(name) or "requirements" in (p.lower() for p in parts[:-1]):
        # requirements-docs.txt, requirements/test.txt, requirements_dev.txt: not what the
        # package needs to run
        words = set(stem_words)
        for scope, named in _REQ_WORDS:
            if words & named:
                return scope
    if _TEST_FILE.match(name):
        return Scope.TEST
    if _BENCH_FILE.match(name):
        return Scope.BENCHMARK
    return Scope.CORE


#: words of a requirements file's name that make it the GPU install itself, not an option
_GPU_WORDS = textre.compile(
    r"^(?:gpu|gpus|cuda|nvidia|cu\d+|accel\w*|base|core|main|prod\w*|run\w*)$"
)


def optional_requirements(path: str, root: Path) -> str | None:
    """``requirements/requirements-moe.txt`` beside ``requirements/requirements.txt``: a
    feature's optional dependency set, like a pip extra (issue 24: optional backends are not
    core). Asked only for a project whose ROCm route counts; one named for the GPU install
    (``requirements-gpu.txt``, ``-cuda``, ``-cu121``) stays core. The note, or None."""
    folder, _, name = path.rpartition("/")
    m = textre.match(r"(?i)^requirements[-_.](\w[\w.-]*)\.(?:txt|in)$", name)
    if m is None:
        return None
    words = textre.split(r"[-_.]", m.group(1).lower())
    if any(_GPU_WORDS.match(w) for w in words):
        return None
    plain = f"{folder}/requirements.txt" if folder else "requirements.txt"
    if not (root / plain).is_file():
        return None
    return f"an optional dependency set beside {plain}: counted apart"


#: words of a manifest's name that make it an NVIDIA variant: the toolkit, a CUDA build
#: label, an NVIDIA architecture or card
_NV_VARIANT = textre.compile(
    r"^(?:cuda\d*|nvidia|cu\d{2,3}|blackwell|hopper|ampere|ada|volta|turing|"
    r"[abhl]\d{2,3}|gb\d{3}|b\d{3}|sm_?\d{2,3}a?)$"
)
_MANIFEST = textre.compile(r"(?i)^(environment|requirements|env)[-_.](\w[\w.-]*)\.(ya?ml|txt|in)$")


def nvidia_variant_manifest(path: str, root: Path) -> str | None:
    """``environment_blackwell.yml`` beside ``environment.yml``, ``requirements-cu128.txt``
    beside ``requirements.txt``: the NVIDIA variant of an install manifest, which a project's
    ROCm route does not read (issue 24, thirteenth sample: relion). Asked only for a project
    whose ROCm route counts. The note, or None."""
    folder, _, name = path.rpartition("/")
    m = _MANIFEST.match(name)
    if m is None:
        return None
    words = textre.split(r"[-_.]", m.group(2).lower())
    if not any(_NV_VARIANT.match(w) for w in words):
        return None
    kind = m.group(1).lower()
    plain_names = (
        ("environment.yml", "environment.yaml") if kind != "requirements" else ("requirements.txt",)
    )
    for plain in plain_names:
        rel = f"{folder}/{plain}" if folder else plain
        if (root / rel).is_file():
            return f"the NVIDIA variant of {rel}, which the ROCm route does not read: counted apart"
    return None
