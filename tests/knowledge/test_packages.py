"""The bundled packages.toml: loads, is sourced, and answers the look-ups the scanner makes."""

from __future__ import annotations

import datetime as dt
import fnmatch
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.version import Version

from gpuport.knowledge import KNOWLEDGE_DIR, PackageDB, PackageInfo, load_packages, normalize_name
from gpuport.models import GpuportError

PACKAGES_TOML = KNOWLEDGE_DIR / "packages.toml"
CAVEAT_KEYS = {"cdna", "rdna", "all"}
CATEGORIES = {
    "framework",
    "inference",
    "kernels",
    "quantization",
    "monitoring",
    "nvidia-runtime",
    "other-vendor",
    "data",
    "compiler",
    "distributed",
    "library",
}

# distribution name as written in a requirements file -> entry it must resolve to
MUST_HAVE_DISTS = {
    "torch": "torch",
    "torchvision": "torchvision",
    "torchaudio": "torchaudio",
    "triton": "triton",
    "pytorch-triton-rocm": "triton-rocm",
    "vllm": "vllm",
    "sglang": "sglang",
    "sgl-kernel": "sglang",
    "tensorrt-llm": "tensorrt-llm",
    "tensorrt_llm": "tensorrt-llm",
    "flash-attn": "flash-attn",
    "flash_attn": "flash-attn",
    "flash-attn-3": "flash-attn-3",
    "flash-attn-4": "flash-attn-4",
    "flash-attn-cute": "flash-attn-4",
    "onnxruntime-gpu": "onnxruntime-gpu",
    "onnxruntime": "onnxruntime",
    "onnxruntime-rocm": "onnxruntime-rocm",
    "onnxruntime-migraphx": "onnxruntime-migraphx",
    "transformers": "transformers",
    "accelerate": "accelerate",
    "deepspeed": "deepspeed",
    "megatron-core": "megatron-core",
    "megatron-lm": "megatron-core",
    "jax": "jax",
    "jax-cuda12-plugin": "jax",
    "jax-cuda13-plugin": "jax",
    "jax-cuda12-pjrt": "jax",
    "jax-rocm7-plugin": "jax-rocm-plugin",
    "tensorflow": "tensorflow",
    "tensorflow-gpu": "tensorflow",
    "tensorflow-rocm": "tensorflow-rocm",
    "llama-cpp-python": "llama-cpp-python",
    "bitsandbytes": "bitsandbytes",
    "auto-gptq": "auto-gptq",
    "auto_gptq": "auto-gptq",
    "gptqmodel": "gptqmodel",
    "autoawq": "autoawq",
    "xformers": "xformers",
    "nemo_toolkit": "nemo-toolkit",
    "nvidia-nim": "nvidia-nim",
    "nvidia-cudnn-cu12": "nvidia-cuda-wheels",
    "nvidia-cudnn-cu11": "nvidia-cuda-wheels",
    "nvidia-cublas-cu12": "nvidia-cuda-wheels",
    "nvidia-nccl-cu12": "nvidia-cuda-wheels",
    "nvidia-cuda-runtime-cu12": "nvidia-cuda-wheels",
    "nvidia-cusparselt-cu12": "nvidia-cuda-wheels",
    "nvidia-nvjitlink-cu13": "nvidia-cuda-wheels",
    "nvidia-ml-py": "nvidia-ml-py",
    "pynvml": "nvidia-ml-py",
    "gpustat": "gpustat",
    "GPUtil": "gputil",
    "nvitop": "nvitop",
    "cupy": "cupy",
    "cupy-cuda12x": "cupy",
    "cupy-cuda11x": "cupy",
    "cupy-rocm-5-0": "cupy-rocm-5-0",
    "pycuda": "pycuda",
    "cuda-python": "cuda-python",
    "cuda-bindings": "cuda-python",
    "numba-cuda": "numba-cuda",
    "cudf": "cudf",
    "cudf-cu12": "cudf",
    "cuml-cu12": "cuml",
    "cugraph-cu12": "cugraph",
    "faiss-gpu": "faiss-gpu",
    "faiss-gpu-cu12": "faiss-gpu",
    "apex": "apex",
    "transformer-engine": "transformer-engine",
    "transformer_engine_torch": "transformer-engine",
    "transformer-engine-cu12": "transformer-engine",
    "tensorrt": "tensorrt",
    "tensorrt-cu12": "tensorrt",
    "torch-tensorrt": "torch-tensorrt",
    "nvidia-modelopt": "nvidia-modelopt",
    "nvtx": "nvtx",
    "flashinfer": "flashinfer",
    "flashinfer-python": "flashinfer",
    "deep_gemm": "deep-gemm",
    "nvidia-dali-cuda120": "nvidia-dali",
    "nvidia-cutlass": "nvidia-cutlass",
    "nvidia-cutlass-dsl": "nvidia-cutlass",
    "nvidia-cutlass-dsl-libs-cu13": "nvidia-cutlass",
    "torchao": "torchao",
    "aiter": "aiter",
    "amd-aiter": "aiter",
    "torch-scatter": "torch-scatter",
    "torch_sparse": "torch-scatter",
    "pyg-lib": "torch-scatter",
    "liger-kernel": "liger-kernel",
    "unsloth": "unsloth",
    "peft": "peft",
    "diffusers": "diffusers",
    "timm": "timm",
    "lightning": "lightning",
    "pytorch-lightning": "lightning",
    "mamba-ssm": "mamba-ssm",
    "causal-conv1d": "causal-conv1d",
    "amdsmi": "amdsmi",
    "hip-python": "hip-python",
    "hip-python-interop": "hip-python-interop",
    "migraphx": "migraphx",
    "paddlepaddle-gpu": "paddlepaddle-gpu",
}

# dotted import as found in source -> entry it must resolve to
MUST_HAVE_IMPORTS = {
    "pynvml": "nvidia-ml-py",
    "tensorrt": "tensorrt",
    "tensorrt_llm": "tensorrt-llm",
    "torch_tensorrt": "torch-tensorrt",
    "pycuda.driver": "pycuda",
    "pycuda.autoinit": "pycuda",
    "numba.cuda": "numba-cuda",
    "numba.cuda.jit": "numba-cuda",
    "flash_attn": "flash-attn",
    "flash_attn.flash_attn_interface": "flash-attn",
    "flash_attn_interface": "flash-attn-3",
    "flash_attn_3": "flash-attn-3",
    "flash_attn.cute": "flash-attn-4",
    "flash_attn.cute.interface": "flash-attn-4",
    "transformer_engine.pytorch": "transformer-engine",
    "GPUtil": "gputil",
    "gpustat": "gpustat",
    "nvitop": "nvitop",
    "nvtx": "nvtx",
    "cupy": "cupy",
    "cupyx.scipy": "cupy",
    "cuda": "cuda-python",
    "cuda.bindings.driver": "cuda-python",
    "cuda.cudart": "cuda-python",
    "nvidia.dali.fn": "nvidia-dali",
    "cutlass": "nvidia-cutlass",
    "deep_gemm": "deep-gemm",
    "flashinfer": "flashinfer",
    "apex.normalization": "apex",
    "nemo.collections.asr": "nemo-toolkit",
    "cudf": "cudf",
    "amdsmi": "amdsmi",
    "migraphx": "migraphx",
    "aiter": "aiter",
    "bitsandbytes": "bitsandbytes",
}

# imports that must NOT resolve: plain numba and faiss also exist as CPU packages
MUST_NOT_RESOLVE = ["numba", "numba.jit", "faiss", "nvidia", "os", "numpy"]


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    load_packages.cache_clear()
    yield
    load_packages.cache_clear()


@pytest.fixture
def db() -> PackageDB:
    return load_packages()


def _is_glob(pattern: str) -> bool:
    return any(ch in pattern for ch in "*?[")


def test_file_has_schema_version() -> None:
    with PACKAGES_TOML.open("rb") as fh:
        data = tomllib.load(fh)
    assert data["schema_version"] == 1


def test_bundled_file_loads_with_enough_packages(db: PackageDB) -> None:
    assert len(db.packages) >= 55


def test_names_unique_after_normalisation(db: PackageDB) -> None:
    names = [normalize_name(p.name) for p in db.packages]
    assert len(names) == len(set(names))


def test_every_name_resolves_to_itself(db: PackageDB) -> None:
    for pkg in db.packages:
        assert db.by_dist(pkg.name) is pkg


def test_aliases_do_not_shadow_other_entries(db: PackageDB) -> None:
    for pkg in db.packages:
        for alias in pkg.aliases:
            for other in db.packages:
                if other is pkg:
                    continue
                hit = fnmatch.fnmatchcase(normalize_name(other.name), normalize_name(alias))
                assert not hit, f"{pkg.name}: alias {alias!r} matches entry {other.name!r}"


def test_plain_aliases_are_unique(db: PackageDB) -> None:
    seen: dict[str, str] = {}
    for pkg in db.packages:
        for alias in pkg.aliases:
            if _is_glob(alias):
                continue
            norm = normalize_name(alias)
            assert norm not in seen, f"alias {alias!r} in {pkg.name} and {seen.get(norm)}"
            seen[norm] = pkg.name


def test_no_import_claimed_twice(db: PackageDB) -> None:
    owners: dict[str, str] = {}
    for pkg in db.packages:
        for mod in pkg.imports:
            assert mod not in owners, f"import {mod!r} in {pkg.name} and {owners[mod]}"
            owners[mod] = pkg.name


@pytest.mark.parametrize(("dist", "expected"), sorted(MUST_HAVE_DISTS.items()))
def test_must_have_dist_resolves(db: PackageDB, dist: str, expected: str) -> None:
    pkg = db.by_dist(dist)
    assert pkg is not None, f"{dist} is not in packages.toml"
    assert pkg.name == expected


@pytest.mark.parametrize(("module", "expected"), sorted(MUST_HAVE_IMPORTS.items()))
def test_must_have_import_resolves(db: PackageDB, module: str, expected: str) -> None:
    pkg = db.by_import(module)
    assert pkg is not None, f"import {module} does not resolve"
    assert pkg.name == expected


@pytest.mark.parametrize("module", MUST_NOT_RESOLVE)
def test_ambiguous_imports_do_not_resolve(db: PackageDB, module: str) -> None:
    assert db.by_import(module) is None


def test_every_entry_is_sourced_and_dated(db: PackageDB) -> None:
    today = dt.date.today()
    for pkg in db.packages:
        assert pkg.sources, pkg.name
        assert any(url.startswith("https://") for url in pkg.sources), pkg.name
        assert len(set(pkg.sources)) == len(pkg.sources), f"{pkg.name}: duplicate source"
        assert pkg.checked <= today, pkg.name


def test_routes_are_actionable(db: PackageDB) -> None:
    for pkg in db.packages:
        how = pkg.route.how.strip()
        assert how, pkg.name
        assert "\n" not in how, pkg.name
        if pkg.status == "works-with-route":
            assert pkg.route.kind != "none", f"{pkg.name}: works-with-route without a route"
        if pkg.route.kind == "index":
            assert pkg.route.index_url, pkg.name
            assert pkg.route.index_url.startswith("https://"), pkg.name
        if pkg.route.kind == "replacement":
            assert pkg.route.replacement, pkg.name


def test_no_entries_name_a_replacement_or_say_there_is_none(db: PackageDB) -> None:
    for pkg in db.packages:
        if pkg.status != "no":
            continue
        says_none = pkg.route.kind == "none" and re.search(
            r"\bno\b|\bnone\b|there is no", pkg.route.how.lower()
        )
        assert pkg.route.replacement or says_none, pkg.name


def test_fields_use_known_vocabulary(db: PackageDB) -> None:
    for pkg in db.packages:
        assert pkg.category in CATEGORIES, f"{pkg.name}: category {pkg.category!r}"
        assert set(pkg.caveats) <= CAVEAT_KEYS, f"{pkg.name}: {sorted(pkg.caveats)}"
        assert pkg.summary.strip(), pkg.name
        if pkg.min_version is not None:
            Version(pkg.min_version)


def test_key_facts(db: PackageDB) -> None:
    torch = db.by_dist("torch")
    assert torch is not None
    assert torch.status == "works-with-route"
    assert torch.route.kind == "index"
    assert torch.route.index_url is not None
    assert torch.route.index_url.startswith("https://download.pytorch.org/whl/rocm")
    assert "CUDA" in torch.summary

    bnb = db.by_dist("bitsandbytes")
    assert bnb is not None and bnb.min_version is not None
    assert Version(bnb.min_version) >= Version("0.50")
    assert "cdna" in bnb.caveats

    for name in ("numba-cuda", "tensorrt", "pycuda", "nvidia-ml-py"):
        pkg = db.by_dist(name)
        assert pkg is not None and pkg.status == "no", name

    wheels = db.by_dist("nvidia-cudnn-cu12")
    assert wheels is not None
    assert (wheels.status, wheels.category) == ("no", "nvidia-runtime")

    for name in ("transformers", "accelerate", "peft", "diffusers", "timm", "lightning"):
        pkg = db.by_dist(name)
        assert pkg is not None and pkg.status == "works", name

    for name in ("aiter", "amdsmi", "hip-python", "migraphx"):
        pkg = db.by_dist(name)
        assert pkg is not None and pkg.status == "works", name

    cudf = db.by_dist("cudf")
    assert cudf is not None and "gfx942" in cudf.caveats["cdna"]


def _write_user_file(directory: Path, body: str) -> Path:
    path = directory / "packages.toml"
    path.write_text(body, encoding="utf-8")
    return path


USER_TORCH = """
schema_version = 1

[[package]]
name = "torch"
status = "no"
summary = "Local policy: torch is not allowed here."
sources = ["https://example.org/policy"]
checked = 2026-11-01

[package.route]
kind = "none"
how = "There is no approved route."

[[package]]
name = "acme-private-kernels"
imports = ["acme_kernels"]
status = "partial"
summary = "In-house kernels."
sources = ["https://example.org/acme"]
checked = 2026-11-01

[package.route]
kind = "build"
how = "Build with hipcc."
"""


def test_user_file_overrides_and_extends(tmp_path: Path) -> None:
    bundled = load_packages()
    bundled_count = len(bundled.packages)
    _write_user_file(tmp_path, USER_TORCH)

    merged = load_packages(tmp_path)

    torch = merged.by_dist("torch")
    assert torch is not None
    assert torch.status == "no"
    assert torch.summary.startswith("Local policy")
    assert merged.by_import("torch") is None  # the override declares no imports
    assert merged.by_import("acme_kernels") is not None
    assert len(merged.packages) == bundled_count + 1
    # the bundled database is untouched
    bundled_torch = load_packages().by_dist("torch")
    assert bundled_torch is not None and bundled_torch.status == "works-with-route"


@pytest.mark.parametrize(
    "body",
    [
        # status outside the vocabulary
        '[[package]]\nname = "x"\nstatus = "maybe"\nsummary = "s"\n'
        'sources = ["https://example.org"]\nchecked = 2026-11-01\n'
        '[package.route]\nkind = "none"\nhow = "h"\n',
        # no sources
        '[[package]]\nname = "x"\nstatus = "no"\nsummary = "s"\nsources = []\n'
        'checked = 2026-11-01\n[package.route]\nkind = "none"\nhow = "h"\n',
        # unknown key (extra="forbid")
        '[[package]]\nname = "x"\nstatus = "no"\nsummary = "s"\n'
        'sources = ["https://example.org"]\nchecked = 2026-11-01\nnotes = "x"\n'
        '[package.route]\nkind = "none"\nhow = "h"\n',
        # not TOML at all
        "[[package]\nname = ",
    ],
    ids=["bad-status", "no-sources", "unknown-key", "not-toml"],
)
def test_invalid_user_file_is_refused_with_its_path(tmp_path: Path, body: str) -> None:
    path = _write_user_file(tmp_path, body)
    with pytest.raises(GpuportError) as excinfo:
        load_packages(tmp_path)
    assert str(path) in str(excinfo.value)


def test_packages_on_demand_reads_nothing_until_used_then_answers_alike(
    tmp_path: Path,
) -> None:
    """hipify's native pass gets the catalog on demand (start-up, issue 18): nothing read
    until a rule looks a package up, then the same answers as the loaded catalog."""
    from gpuport.knowledge import packages_on_demand

    _write_user_file(tmp_path, USER_TORCH)
    load_packages.cache_clear()
    lazy = packages_on_demand(tmp_path)
    assert isinstance(lazy, PackageDB)
    assert load_packages.cache_info().currsize == 0  # not read yet
    eager = load_packages(tmp_path)
    for name in ("torch", "TORCH", "nvidia-cublas-cu12", "not-a-package"):
        assert lazy.by_dist(name) == eager.by_dist(name)
    assert lazy.by_import("numba.cuda.jit") == eager.by_import("numba.cuda.jit")
    assert lazy.packages == eager.packages and lazy.import_names() == eager.import_names()
    assert lazy.by_dist("torch") != load_packages().by_dist("torch")  # the user file counts
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "packages.toml").write_text("[[package]]\nname = 3\n", encoding="utf-8")
    with pytest.raises(GpuportError, match=r"packages\.toml"):  # refused when first used
        packages_on_demand(broken).by_dist("torch")


def test_issue_28_facts_that_moved_upstream() -> None:
    """The entries the 2026-11-27 check found stale or wrong, as their sources now say."""
    db = load_packages()
    xformers = db.by_dist("xformers")
    assert (
        xformers is not None
        and xformers.route.index_url == "https://download.pytorch.org/whl/rocm7.1"
    )
    assert "missing" not in xformers.caveats["all"] and "v0.0.34" in xformers.summary
    fa3 = db.by_dist("flash-attn-3")
    assert fa3 is not None and fa3.status == "works-with-route" and fa3.route.kind == "build"
    assert fa3.route.env == {"FLASH_ATTENTION_TRITON_AMD_ENABLE": "TRUE"}
    assert "#2178" in fa3.summary and "#2343" in fa3.summary
    numba_hip = db.by_dist("numba-hip")
    assert numba_hip is not None and numba_hip.route.kind == "replacement"
    assert "RDNA4" in numba_hip.summary and "rdna" not in numba_hip.caveats
    jax = db.by_dist("jax")
    assert jax is not None and "jax-rocm10-plugin" in jax.summary and "10.1.0" in jax.summary


@pytest.mark.parametrize(
    ("library", "port"),
    [("cupy", "amd-cupy"), ("dgl", "amd-dgl"), ("lightgbm", "amd-lightgbm"), ("cudf", "amd-hipdf"),
     ("gsplat", "amd-gsplat"), ("nerfacc", "amd-nerfacc")],
)  # fmt: skip
def test_amd_ports_are_routes_of_the_library_they_replace(library: str, port: str) -> None:
    pkg = db_entry(library)
    text = f"{pkg.summary} {pkg.route.how} {pkg.route.replacement or ''} {pkg.route.command or ''}"
    assert port in text.replace("_", "-")
    # PyPI holds only a name placeholder for each: the entry must say so
    assert "placeholder" in f"{pkg.summary} {pkg.route.how} {' '.join(pkg.caveats.values())}"


def db_entry(name: str) -> PackageInfo:
    pkg = load_packages().by_dist(name)
    assert pkg is not None, name
    return pkg


def test_code_generators_flag_cuda_written_at_build_time() -> None:
    db = load_packages()
    flagged = {p.name for p in db.packages if p.cuda_at_build_time}
    assert {"cumm", "pccm"} <= flagged
    assert db.by_dist("cumm-cu126") is db.by_dist("cumm")
    assert not any(p.cuda_at_build_time for p in db.packages if p.name in ("torch", "spconv"))


_ROCM_IN_ROUTE = re.compile(r"(?:whl/rocm|rocm-|_rocm|:rocm|-rocm)(\d+)\.(\d+)")


def test_every_route_states_the_rocm_release_it_names(db: PackageDB) -> None:
    """An index, image or wheel the route names is built for one ROCm release: `route.rocm`
    says which, so a user on ROCm 10 sees that a 7.x route is not theirs."""
    for pkg in db.packages:
        text = " ".join(filter(None, [pkg.route.index_url, pkg.route.command]))
        named = {f"{a}.{b}" for a, b in _ROCM_IN_ROUTE.findall(text)}
        stated = {".".join(v.split(".")[:2]) for v in pkg.route.rocm}
        assert named <= stated, (pkg.name, named, stated)


def test_rocm_10_routes_stand_beside_7x(db: PackageDB) -> None:
    tens = [p for p in db.packages if any(v.startswith("10.") for v in p.route.rocm)]
    assert {"jax", "jax-rocm-plugin", "vllm"} <= {p.name for p in tens}
    assert all(any(v.startswith("7.") for v in p.route.rocm) for p in tens)


def test_a_route_rocm_release_is_a_version() -> None:
    with pytest.raises(ValueError, match=r"MAJOR\.MINOR"):
        PackageInfo.model_validate(
            {
                "name": "x",
                "status": "works",
                "summary": "s",
                "sources": ["https://example.org"],
                "checked": dt.date(2026, 11, 27),
                "route": {"kind": "index", "how": "h", "rocm": ["rocm7"]},
            }
        )
