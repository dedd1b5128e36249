"""Schema checks across the knowledge files: provenance per entry, ranges, cross-references."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from gpuport.knowledge import load_packages, load_targets, resolve_target
from gpuport.knowledge.gpus import load_gpus, resolve_gpu
from gpuport.knowledge.models import load_models

BULK_REVIEW = dt.date(2026, 11, 22)  # the date every entry carried before per-entry checks
FIRST_RECHECK = dt.date(2026, 11, 25)  # the first day entries were re-checked one by one
TODAY = dt.date(2026, 11, 27)


def _all_entries() -> list[tuple[str, str, dt.date, list[str], list[str]]]:
    rows: list[tuple[str, str, dt.date, list[str], list[str]]] = []
    for p in load_packages().packages:
        rows.append(("packages", p.name, p.checked, list(p.verified), p.sources))
    for t in load_targets().values():
        rows.append(("targets", t.name, t.checked, list(t.verified), t.sources))
    for g in load_gpus().values():
        rows.append(("gpus", g.key, g.checked, list(g.verified), g.sources))
    for m in load_models().values():
        rows.append(("models", m.key, m.checked, list(m.verified), m.sources))
    return rows


@pytest.mark.parametrize(("file", "key", "checked", "verified", "sources"), _all_entries())
def test_every_entry_has_sources_and_an_honest_date(
    file: str, key: str, checked: dt.date, verified: list[str], sources: list[str]
) -> None:
    assert sources, f"{file}:{key} has no sources"
    assert all(re.match(r"https?://\S+$", u) for u in sources), f"{file}:{key}"
    assert len(set(sources)) == len(sources), f"{file}:{key}: duplicate source"
    assert BULK_REVIEW <= checked <= TODAY, f"{file}:{key}: checked {checked}"
    # A date after the bulk review means the entry was re-checked: it must say what was.
    if checked > BULK_REVIEW:
        assert verified, f"{file}:{key}: re-dated without a `verified` list"
    else:
        assert not verified, f"{file}:{key}: claims checks but carries the old date"


def test_counts_meet_the_coverage_target() -> None:
    assert len(load_packages().packages) >= 150
    assert len(load_gpus()) >= 30
    assert len(load_models()) >= 40
    names = set(load_targets())
    pytorch_rocm72_wheel_archs = {
        "gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100",
        "gfx1101", "gfx1102", "gfx1150", "gfx1151", "gfx1200", "gfx1201",
    }  # fmt: skip
    assert pytorch_rocm72_wheel_archs <= names


def test_the_four_entries_found_wrong_in_the_field_trial_are_fixed() -> None:
    db = load_packages()
    torch = db.by_dist("torch")
    assert torch is not None
    for arch in ("gfx900", "gfx906", "gfx950", "gfx1150", "gfx1151"):
        assert arch in torch.caveats["all"], arch
    assert "gfx1151" not in torch.caveats["rdna"]  # no longer needs AMD's per-arch wheels
    flash = db.by_dist("flash-attn")
    assert flash is not None
    assert "builds the CK backend when the installed torch is a ROCm build" in flash.summary
    assert "#2675" in flash.caveats["rdna"] and "no backward" not in flash.caveats["rdna"]
    cupy = db.by_dist("cupy")
    assert cupy is not None and cupy.route.replacement == "cupy-rocm-7-0"
    assert db.by_dist("cupy-rocm-7-0") is not None
    old = db.by_dist("cupy-rocm-5-0")
    assert old is not None and old.route.replacement == "cupy-rocm-7-0"
    pyrsmi = db.by_dist("pyrsmi")
    assert pyrsmi is not None and "AMD SMI" in pyrsmi.summary
    assert "legacy ROCm SMI" not in pyrsmi.summary


def test_verified_entries_are_dated_today_not_the_bulk_date() -> None:
    rechecked = [p for p in load_packages().packages if p.verified]
    assert len(rechecked) >= 80
    assert all(FIRST_RECHECK <= p.checked <= TODAY for p in rechecked)


# ----------------------------------------------------------------------- targets <-> GPUs


def test_every_amd_gpu_arch_is_a_known_target_with_the_same_wave_size() -> None:
    targets = load_targets()
    for gpu in load_gpus().values():
        if gpu.vendor != "amd":
            continue
        assert gpu.arch in targets, f"{gpu.key}: {gpu.arch} is not in targets.toml"
        assert targets[gpu.arch].wave_size == gpu.wave_size, gpu.key


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower().replace("amd", "").replace("instinct", ""))


def test_a_gpu_named_in_a_targets_products_has_that_arch() -> None:
    """Vice versa: where targets.toml lists a product the catalog also has, they agree."""
    gpus = list(load_gpus().values())
    checked = 0
    for target in load_targets().values():
        for product in target.products:
            for gpu in gpus:
                if gpu.vendor == "amd" and _squash(gpu.name).startswith(_squash(product)):
                    assert gpu.arch == target.name, f"{product}: {gpu.key} is {gpu.arch}"
                    checked += 1
    assert checked >= 10  # MI300X, MI300A, MI325X, MI350X, MI355X, MI250X, MI210, MI100 ...


def test_every_catalog_amd_gpu_is_listed_as_a_product_of_its_target() -> None:
    targets = load_targets()
    for gpu in load_gpus().values():
        if gpu.vendor != "amd":
            continue
        products = {_squash(p) for p in targets[gpu.arch].products}
        assert any(_squash(gpu.name).startswith(p) for p in products), gpu.key


def test_target_values_are_in_range_and_aliases_are_unique() -> None:
    seen: dict[str, str] = {}
    for target in load_targets().values():
        assert re.fullmatch(r"gfx\d+[a-f]?", target.name), target.name
        # RDNA and CDNA5 (gfx1250) are wave32; GCN and CDNA1-4 wave64
        wave32 = target.family == "RDNA" or target.generation == "CDNA5"
        assert target.wave_size == (32 if wave32 else 64), target.name
        expected_fp8 = (
            "fnuz" if target.name == "gfx942"
            else "ocp" if target.name in ("gfx950", "gfx1250") or target.generation == "RDNA4"
            else "none"
        )  # fmt: skip
        assert target.fp8 == expected_fp8, target.name
        assert 32 <= target.lds_kib <= 320, target.name
        for alias in (target.name, *target.aliases):
            low = alias.lower()
            assert low not in seen, f"{alias} on {seen.get(low)} and {target.name}"
            seen[low] = target.name


@pytest.mark.parametrize(
    ("name", "arch"),
    [
        ("gfx1151", "gfx1151"),
        ("mi100", "gfx908"),
        ("strix-halo", "gfx1151"),
        ("w6800", "gfx1030"),
        ("rx9070xt", "gfx1201"),
        ("mi50", "gfx906"),
        ("rx9060xt", "gfx1200"),
        ("MI355X", "gfx950"),
    ],
)
def test_target_aliases_resolve(name: str, arch: str) -> None:
    assert resolve_target(name).name == arch


# ----------------------------------------------------------------------- GPU values


def test_gpu_memory_bytes_agree_with_the_rounded_size() -> None:
    for gpu in load_gpus().values():
        assert gpu.memory_bytes is not None, f"{gpu.key}: no memory_bytes"
        if gpu.memory_basis == "nominal":
            assert gpu.memory_bytes == round(gpu.memory_gb * 2**30), gpu.key
        else:  # a driver total: within 8 % below (ECC/reserved) to 7 % above GiB x 2^30
            ratio = gpu.memory_bytes / (gpu.memory_gb * 2**30)
            assert 0.92 <= ratio <= 1.07, f"{gpu.key}: {ratio:.3f}"
    assert resolve_gpu("mi300x").memory_bytes == 205_822_885_888
    assert resolve_gpu("h100").memory_bytes == 85_520_809_984


def test_gpu_values_are_in_range() -> None:
    for gpu in load_gpus().values():
        assert 4 <= gpu.memory_gb <= 512, gpu.key
        assert 100 <= gpu.bandwidth_gbs <= 20_000, gpu.key
        # APUs: the whole package's default TDP (Radeon 890M: 28 W)
        assert 15 <= gpu.tdp_w <= 2_000, gpu.key
        assert all(0 < v <= 40_000 for v in gpu.peak_tflops.values()), gpu.key
        for price in gpu.prices:
            assert 0.05 <= price.usd <= 100_000, gpu.key


@pytest.mark.parametrize(
    "key",
    ["b300", "mi355x", "rtx-pro-6000", "gb200", "h100-nvl", "h200-nvl", "a100-sxm-40gb",
     "a100-pcie-80gb", "l4", "l40", "t4", "v100", "mi300a", "mi210", "mi100", "rx-9070-xt",
     "radeon-ai-pro-r9700", "w7900"],
)  # fmt: skip
def test_issue_gpus_resolve(key: str) -> None:
    assert resolve_gpu(key)


def test_blackwell_and_cdna4_carry_fp4_peaks() -> None:
    for key in ("b200", "b300", "gb200", "rtx-pro-6000", "mi355x", "mi350x"):
        peaks = resolve_gpu(key).peak_tflops
        assert peaks["fp4"] >= 2 * peaks["fp8"] * 0.99, key
