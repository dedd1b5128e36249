"""The bundled GPU catalog: sourced, dense, self-consistent, and found from torch's names."""

from __future__ import annotations

import datetime as dt
import tomllib
from pathlib import Path

import pytest

from gpuport.knowledge import load_targets
from gpuport.knowledge.gpus import GPUS_TOML, GpuSpec, load_gpus, match_device, resolve_gpu
from gpuport.models import GpuportError

REVIEWED = dt.date(2026, 11, 22)  # the bulk review every older entry carries
TODAY = dt.date(2026, 11, 27)
MUST_HAVE = {
    "b300",
    "gb200",
    "h100-nvl",
    "h200-nvl",
    "a100-sxm-40gb",
    "a100-pcie-80gb",
    "l4",
    "l40",
    "t4",
    "v100-sxm2-32gb",
    "rtx-pro-6000",
    "mi300a",
    "mi210",
    "mi100",
    "rx-9070-xt",
    "radeon-ai-pro-r9700",
    "radeon-pro-w7900",
    "h100-sxm",
    "h100-pcie",
    "h200",
    "b200",
    "a100-sxm-80gb",
    "l40s",
    "rtx-4090",
    "rtx-5090",
    "mi250x",
    "mi300x",
    "mi325x",
    "mi355x",
    "rx-7900-xtx",
    # added 2026-11-27 (issue 28)
    "gb300",
    "gb10",
    "rtx-6000-ada",
    "a10g",
    "rtx-3090",
    "mi350p",
    "rx-9060-xt",
    "radeon-8060s",
    "radeon-890m",
    "radeon-780m",
}
DTYPES = {"bf16", "fp16", "fp32", "tf32", "fp8", "fp4", "fp64"}
ACHIEVABLE_KEYS = {
    "gemm_bf16",
    "gemm_fp16",
    "gemm_fp8",
    "membw_copy",
    "membw_triad",
    "busbw_allreduce",
}
MIB = 1024 * 1024


@pytest.fixture(scope="module")
def gpus() -> dict[str, GpuSpec]:
    return load_gpus()


def _raw_entries() -> list[dict[str, object]]:
    with GPUS_TOML.open("rb") as fh:
        entries = tomllib.load(fh)["gpu"]
    assert isinstance(entries, list)
    return entries


def _is_url(text: str) -> bool:
    return text.startswith(("https://", "http://")) and " " not in text


# ----------------------------------------------------------------------- loading, sources


def test_every_entry_loads_and_keys_are_unique(gpus: dict[str, GpuSpec]) -> None:
    raw_keys = [str(e["key"]) for e in _raw_entries()]
    assert len(raw_keys) == len(set(raw_keys)), "duplicate key: a later entry hides an earlier"
    assert set(raw_keys) == set(gpus)
    assert set(gpus) >= MUST_HAVE


def test_aliases_are_unique_and_never_another_key(gpus: dict[str, GpuSpec]) -> None:
    seen: dict[str, str] = {}
    for gpu in gpus.values():
        for alias in gpu.aliases:
            low = alias.lower()
            assert low not in gpus or low == gpu.key, f"{gpu.key}: alias {alias} is a key"
            assert low not in seen, f"alias {alias} on both {seen.get(low)} and {gpu.key}"
            seen[low] = gpu.key


@pytest.mark.parametrize("key", sorted(load_gpus()))
def test_entry_is_sourced_and_dated(key: str) -> None:
    gpu = load_gpus()[key]
    assert gpu.sources and all(_is_url(u) for u in gpu.sources)
    assert REVIEWED <= gpu.checked <= TODAY
    # An entry dated after the bulk review was re-checked and says what was looked at.
    assert gpu.checked == REVIEWED or gpu.verified, f"{key}: checked {gpu.checked} without verified"
    for name, fig in gpu.achievable.items():
        assert name in ACHIEVABLE_KEYS, f"{key}: unknown achievable key {name}"
        assert _is_url(fig.source), f"{key}.{name}: source is not a URL"
        assert fig.note, f"{key}.{name}: say what was measured and how"
    for price in gpu.prices:
        assert _is_url(price.source), f"{key}: price source is not a URL"
        assert price.date <= gpu.checked, f"{key}: price dated after the check"
        assert price.provider


# ----------------------------------------------------------------------- peak figures


@pytest.mark.parametrize("key", sorted(load_gpus()))
def test_peaks_are_dense_and_consistent(key: str) -> None:
    gpu = load_gpus()[key]
    peaks = gpu.peak_tflops
    assert set(peaks) <= DTYPES, f"{key}: unknown dtype in {sorted(peaks)}"
    assert {"fp16", "fp32"} <= set(peaks)
    assert all(v > 0 for v in peaks.values())
    # Only pre-Ampere NVIDIA parts (Volta, Turing) lack bf16 matrix units.
    assert "bf16" in peaks or gpu.arch in {"sm_70", "sm_75"}, f"{key}: no bf16 peak"
    # bf16 and fp16 run at the same matrix rate everywhere but CDNA1 (MI100: bf16 at half).
    if "bf16" in peaks:
        ratio = 0.5 if gpu.arch == "gfx908" else 1.0
        assert peaks["bf16"] == pytest.approx(ratio * peaks["fp16"])
    if "fp8" in peaks:
        assert peaks["fp8"] == pytest.approx(2 * peaks["bf16"], rel=0.02)
    if "fp4" in peaks:
        assert "fp8" in peaks and 2 * peaks["fp8"] <= peaks["fp4"] * 1.01
        assert peaks["fp4"] <= 3.01 * peaks["fp8"]  # Blackwell Ultra: 3x
    if "tf32" in peaks:
        assert peaks["tf32"] == pytest.approx(peaks["bf16"] / 2, rel=0.03)
    assert peaks["fp32"] < peaks["fp16"]


# Every peak recomputed from clock x units x rate per architecture: tests/knowledge/test_specs.py


def test_the_figures_most_quoted_are_exact(gpus: dict[str, GpuSpec]) -> None:
    h100 = gpus["h100-sxm"]
    assert h100.peak_tflops == {
        "bf16": 989.4,
        "fp16": 989.4,
        "fp8": 1978.9,
        "tf32": 494.7,
        "fp32": 66.9,
        "fp64": 66.9,
    }
    assert h100.bandwidth_gbs == 3350
    mi300x = gpus["mi300x"]
    assert mi300x.peak_tflops["bf16"] == 1307.4
    assert mi300x.peak_tflops["fp8"] == 2614.9
    assert mi300x.peak_tflops["fp32"] == 163.4
    assert mi300x.bandwidth_gbs == 5300


@pytest.mark.parametrize("key", sorted(load_gpus()))
def test_achievable_is_below_peak(key: str) -> None:
    gpu = load_gpus()[key]
    for name, fig in gpu.achievable.items():
        kind, _, sub = name.partition("_")
        if kind == "gemm":
            assert sub in gpu.peak_tflops, f"{key}: {name} without a {sub} peak"
            ceiling: float | None = gpu.peak_tflops[sub]
        elif kind == "membw":
            ceiling = gpu.bandwidth_gbs
        else:
            ceiling = gpu.interconnect_gbs
        assert ceiling is not None, f"{key}: {name} has nothing to be compared with"
        assert fig.value < ceiling, f"{key}: {name} {fig.value} is not below {ceiling}"


# ----------------------------------------------------------------------- structure facts


def test_wave_size_follows_the_architecture(gpus: dict[str, GpuSpec]) -> None:
    targets = load_targets()
    for gpu in gpus.values():
        if gpu.vendor == "nvidia":
            assert gpu.wave_size == 32
            assert gpu.arch.startswith("sm_")
        else:
            assert gpu.arch.startswith("gfx")
            assert gpu.wave_size == (64 if gpu.arch.startswith("gfx9") else 32)
            if gpu.arch in targets:
                assert targets[gpu.arch].wave_size == gpu.wave_size


def test_last_level_caches(gpus: dict[str, GpuSpec]) -> None:
    for key in ("mi300x", "mi325x", "mi355x"):
        assert gpus[key].llc_mb == 256
        assert gpus[key].l2_mb == 32  # 4 MB per XCD x 8, not torch's per-XCD 4 MB
    assert gpus["rx-7900-xtx"].llc_mb == 96
    assert all(g.llc_mb == 0 for g in gpus.values() if g.vendor == "nvidia")


def test_flush_buffer_covers_infinity_cache(gpus: dict[str, GpuSpec]) -> None:
    assert gpus["mi300x"].flush_bytes >= 2 * 256 * MIB
    assert gpus["h100-sxm"].flush_bytes >= 2 * 50 * MIB
    for gpu in gpus.values():
        assert gpu.flush_bytes >= 2 * (gpu.l2_mb + gpu.llc_mb) * MIB - 1


def test_interconnects(gpus: dict[str, GpuSpec]) -> None:
    assert gpus["h100-sxm"].interconnect_gbs == 450
    assert gpus["h200"].interconnect_gbs == 450
    assert gpus["b200"].interconnect_gbs == 900
    assert gpus["a100-sxm-80gb"].interconnect_gbs == 300
    assert gpus["mi300x"].interconnect_gbs == 7 * 64
    for key in ("h100-pcie", "l40s", "rtx-4090", "rtx-5090", "rx-7900-xtx"):
        assert gpus[key].interconnect_gbs is None


def test_prices_are_where_the_notes_have_them(gpus: dict[str, GpuSpec]) -> None:
    for key in ("h100-sxm", "h200", "b200", "mi300x", "mi325x", "mi355x", "a100-sxm-80gb"):
        assert gpus[key].prices, key
    kinds = {p.kind for p in gpus["h100-sxm"].prices}
    assert {"on-demand", "spot", "reserved"} <= kinds


# ----------------------------------------------------------------------- match_device

DEVICE_NAMES = [
    ("NVIDIA H100 80GB HBM3", "sm_90", "h100-sxm"),
    ("NVIDIA H100 80GB HBM3", None, "h100-sxm"),
    ("NVIDIA H100", "sm_90", "h100-sxm"),
    ("NVIDIA H100 PCIe", "sm_90", "h100-pcie"),
    ("NVIDIA H100 NVL", "sm_90", "h100-nvl"),
    ("NVIDIA H800", "sm_90", None),
    ("NVIDIA H200", "sm_90", "h200"),
    ("NVIDIA H200 NVL", "sm_90", "h200-nvl"),
    ("NVIDIA B200", "sm_100", "b200"),
    ("NVIDIA A100-SXM4-80GB", "sm_80", "a100-sxm-80gb"),
    ("NVIDIA A100-SXM4-40GB", "sm_80", "a100-sxm-40gb"),
    ("NVIDIA A100-PCIE-40GB", "sm_80", "a100-pcie-40gb"),
    ("NVIDIA A100 80GB PCIe", "sm_80", "a100-pcie-80gb"),
    ("NVIDIA B300 SXM6 AC", "sm_103", "b300"),
    ("NVIDIA GB200", "sm_100", "gb200"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "sm_120", "rtx-pro-6000"),
    ("NVIDIA L4", "sm_89", "l4"),
    ("Tesla T4", "sm_75", "t4"),
    ("Tesla V100-SXM2-32GB", "sm_70", "v100-sxm2-32gb"),
    ("Tesla V100-SXM2-16GB", "sm_70", None),
    ("NVIDIA L40S", "sm_89", "l40s"),
    ("NVIDIA L40", "sm_89", "l40"),
    ("NVIDIA GeForce RTX 4090", "sm_89", "rtx-4090"),
    ("NVIDIA GeForce RTX 4090 D", "sm_89", None),
    ("NVIDIA GeForce RTX 5090", "sm_120", "rtx-5090"),
    ("AMD Instinct MI250X", "gfx90a", "mi250x"),
    ("AMD Instinct MI250X/MI250", "gfx90a:sramecc+:xnack-", "mi250x"),
    ("AMD Instinct MI300X", "gfx942:sramecc+:xnack-", "mi300x"),
    ("AMD Instinct MI300X VF", "gfx942", "mi300x"),
    ("AMD Instinct MI300A", "gfx942", "mi300a"),
    ("AMD Instinct MI210", "gfx90a", "mi210"),
    ("AMD Instinct MI100", "gfx908", "mi100"),
    ("AMD Radeon RX 9070 XT", "gfx1201", "rx-9070-xt"),
    ("AMD Radeon AI PRO R9700", "gfx1201", "radeon-ai-pro-r9700"),
    ("AMD Radeon PRO W7900", "gfx1100", "radeon-pro-w7900"),
    ("AMD Instinct MI325X", "gfx942", "mi325x"),
    ("AMD Instinct MI350X", "gfx950", "mi350x"),
    ("AMD Instinct MI355X", "gfx950", "mi355x"),
    ("AMD Radeon RX 7900 XTX", "gfx1100", "rx-7900-xtx"),
    ("Radeon RX 7900 XTX", "gfx1100", "rx-7900-xtx"),
    ("AMD Radeon RX 7900 XT", "gfx1100", None),
    ("AMD Radeon RX 7900 GRE", "gfx1100", None),
    ("NVIDIA GB300", "sm_103", "gb300"),
    ("NVIDIA GB10", "sm_121", "gb10"),
    ("NVIDIA RTX 6000 Ada Generation", "sm_89", "rtx-6000-ada"),
    ("NVIDIA A10G", "sm_86", "a10g"),
    ("NVIDIA A10", "sm_86", None),
    ("NVIDIA GeForce RTX 3090", "sm_86", "rtx-3090"),
    ("NVIDIA GeForce RTX 3090 Ti", "sm_86", None),
    ("AMD Instinct MI350P", "gfx950", "mi350p"),
    ("AMD Radeon RX 9060 XT", "gfx1200", "rx-9060-xt"),
    ("AMD Radeon 8060S Graphics", "gfx1151", "radeon-8060s"),
    ("AMD Radeon 890M Graphics", "gfx1150", "radeon-890m"),
    ("AMD Radeon 780M Graphics", "gfx1103", "radeon-780m"),
    ("  nvidia   h100 80gb hbm3 ", "sm_90", "h100-sxm"),  # case and spacing do not matter
    ("", None, None),
]


@pytest.mark.parametrize(("name", "arch", "key"), DEVICE_NAMES)
def test_match_device(name: str, arch: str | None, key: str | None) -> None:
    spec = match_device(name, arch)
    assert (spec.key if spec else None) == key


def test_arch_that_disagrees_rules_the_entry_out() -> None:
    assert match_device("AMD Instinct MI300X", "gfx90a") is None
    assert match_device("NVIDIA H100 80GB HBM3", "sm_80") is None


def test_every_glob_matches_something_only_its_own_entry_would(gpus: dict[str, GpuSpec]) -> None:
    for gpu in gpus.values():
        assert gpu.match, f"{gpu.key}: no match globs"
        for glob in gpu.match:
            assert glob == glob.lower(), f"{gpu.key}: glob {glob!r} should be lower-case"
            sample = glob.replace("*", "").strip()
            found = match_device(sample, gpu.arch)
            assert found is not None and found.key == gpu.key, (gpu.key, glob)


# ----------------------------------------------------------------------- resolve_gpu


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("h100-sxm", "h100-sxm"),
        ("H100", "h100-sxm"),
        ("h100 sxm", "h100-sxm"),
        ("MI300X", "mi300x"),
        ("mi300", "mi300x"),
        ("AMD Instinct MI300X", "mi300x"),
        ("NVIDIA H100 PCIe", "h100-pcie"),
        ("a100", "a100-sxm-80gb"),
        ("rx_7900_xtx", "rx-7900-xtx"),
        ("4090", "rtx-4090"),
    ],
)
def test_resolve_gpu(text: str, key: str) -> None:
    assert resolve_gpu(text).key == key


def test_resolve_gpu_unknown_suggests_and_lists() -> None:
    with pytest.raises(GpuportError) as err:
        resolve_gpu("mi300z")
    text = str(err.value)
    assert "\n" not in text
    assert "unknown GPU 'mi300z'" in text
    assert "did you mean" in text and "mi300x" in text
    assert "h100-sxm" in text and "rx-7900-xtx" in text  # the known keys


def test_resolve_gpu_without_close_match_still_lists_keys() -> None:
    with pytest.raises(GpuportError, match="known GPUs: a100-pcie-40gb, "):
        resolve_gpu("zzzzzz")


# ----------------------------------------------------------------------- user overrides

USER_GPUS = """
[[gpu]]
key = "h100-sxm"
name = "NVIDIA H100 SXM5 80GB (our power-capped fleet)"
vendor = "nvidia"
arch = "sm_90"
match = ["nvidia h100 80gb hbm3"]
memory_gb = 80
bandwidth_gbs = 3350
tdp_w = 500
wave_size = 32
l2_mb = 50
sources = ["https://example.org/our-fleet"]
checked = 2026-11-01
[gpu.peak_tflops]
bf16 = 700.0
fp16 = 700.0
fp32 = 50.0
fp64 = 50.0

[[gpu]]
key = "acme-x1"
name = "ACME X1"
vendor = "amd"
arch = "gfx942"
aliases = ["x1"]
match = ["acme x1*"]
memory_gb = 96
bandwidth_gbs = 4000
tdp_w = 600
wave_size = 64
l2_mb = 16
llc_mb = 128
sources = ["https://example.org/acme-x1"]
checked = 2026-11-01
[gpu.peak_tflops]
bf16 = 800.0
fp16 = 800.0
fp32 = 100.0
fp64 = 100.0
[[gpu.prices]]
kind = "purchase"
usd = 12000
provider = "ACME list price"
date = 2026-10-01
source = "https://example.org/acme-x1/price"
"""


def test_user_file_replaces_one_entry_and_adds_another(tmp_path: Path) -> None:
    (tmp_path / "gpus.toml").write_text(USER_GPUS)
    merged = load_gpus(tmp_path)
    bundled = load_gpus()
    assert set(merged) == set(bundled) | {"acme-x1"}
    assert merged["h100-sxm"].tdp_w == 500
    assert merged["h100-sxm"].peak_tflops["bf16"] == 700.0
    assert bundled["h100-sxm"].tdp_w == 700  # the bundled catalog is untouched
    assert resolve_gpu("x1", tmp_path).key == "acme-x1"
    found = match_device("ACME X1 Pro", "gfx942", tmp_path)
    assert found is not None and found.key == "acme-x1"
    assert merged["acme-x1"].prices[0].kind == "purchase"


def test_invalid_user_file_names_the_file_and_entry(tmp_path: Path) -> None:
    (tmp_path / "gpus.toml").write_text(
        '[[gpu]]\nkey = "bad"\nname = "Bad GPU"\nvendor = "intel"\n'
    )
    with pytest.raises(GpuportError, match=r"gpus\.toml: entry 'Bad GPU'"):
        load_gpus(tmp_path)


def test_empty_knowledge_dir_is_refused_naming_gpus_toml(tmp_path: Path) -> None:
    with pytest.raises(GpuportError, match=r"gpus\.toml"):
        load_gpus(tmp_path)


def test_knowledge_dir_with_only_other_files_keeps_bundled_gpus(tmp_path: Path) -> None:
    (tmp_path / "targets.toml").write_text("")
    assert set(load_gpus(tmp_path)) == set(load_gpus())
