"""The CUDA->HIP API map: committed JSON == fresh generation, spot checks, semantics, sources."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import TypeAdapter

from gpuport.knowledge.api_map import API_MAP_PATH, ApiMap, load_api_map
from gpuport.models import GpuportError

REPO = Path(__file__).resolve().parents[2]
TABLES = REPO / "tools" / "hipify-tables"


def _generator() -> ModuleType:
    path = REPO / "tools" / "gen_api_map.py"
    spec = importlib.util.spec_from_file_location("gen_api_map", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_api_map", module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def api() -> ApiMap:
    return load_api_map()


def test_committed_json_equals_fresh_generation() -> None:
    if not TABLES.is_dir():
        pytest.fail(
            f"HIPIFY tables not found at {TABLES}: they are part of the repository "
            "(tools/hipify-tables) and are needed to check api_map.json"
        )
    fresh = _generator().render(TABLES, REPO / "tools" / "api_map_extra.toml")
    committed = API_MAP_PATH.read_text(encoding="utf-8")
    assert committed == fresh, "api_map.json is stale: run `make api-map`"


def test_size_and_document_sources(api: ApiMap) -> None:
    assert len(api.entries) > 5000
    assert api.sources and api.checked
    assert any("014177bc2e434ce3e834aa4f3d0e2abb1efa9796" in s for s in api.sources)


def test_every_hand_written_item_has_sources(api: ApiMap) -> None:
    raw = json.loads(API_MAP_PATH.read_text(encoding="utf-8"))
    extra_families = {"nccl", "nvtx", "cublaslt"}
    for name, entry in api.entries.items():
        if entry.family in extra_families or "sources" in raw["entries"][name]:
            assert entry.sources, name
    assert all(h.sources for h in api.headers.values())
    assert all(n.sources for n in api.namespaces.values())


def test_runtime_and_library_spot_checks(api: ApiMap) -> None:
    malloc = api.lookup("cudaMalloc")
    assert malloc is not None and malloc.hip == "hipMalloc" and malloc.family == "runtime"
    bind = api.lookup("cudaBindTexture")
    assert bind is not None and bind.hip == "hipBindTexture"
    assert (bind.cuda_deprecated, bind.cuda_removed) == ("11.0", "12.0")
    assert (bind.hip_added, bind.hip_deprecated) == ("1.6.0", "3.8.0")
    sgemm = api.lookup("cublasSgemm")
    assert sgemm is not None and sgemm.hip == "hipblasSgemm" and sgemm.roc == "rocblas_sgemm"
    assert api.lookup("notACudaName") is None


def test_no_hip_equivalent(api: ApiMap) -> None:
    align = api.lookup("CUB_ALIGN")
    assert align is not None and align.hip is None and not align.supported
    unsupported = api.unsupported()
    assert "CUB_ALIGN" in unsupported and "cudaMalloc" not in unsupported
    assert unsupported == sorted(unsupported)


def test_extras(api: ApiMap) -> None:
    assert api.namespace("cub") == "hipcub"
    assert api.namespace("cub::") == "hipcub"
    assert api.namespace("thrust") == "thrust"
    push = api.lookup("nvtxRangePushA")
    assert push is not None and push.hip == "roctxRangePushA"
    comm = api.lookup("ncclComm_t")
    assert comm is not None and comm.hip == "ncclComm_t"
    lt = api.lookup("cublasLtMatmul")
    assert lt is not None and lt.hip == "hipblasLtMatmul"


@pytest.mark.parametrize(
    ("cuda", "hip"),
    [
        ("cuda_runtime.h", "hip/hip_runtime.h"),
        ("<cuda.h>", "hip/hip_runtime.h"),
        ("cublas_v2.h", "hipblas/hipblas.h"),
        ("curand.h", "hiprand/hiprand.h"),
        ("nccl.h", "rccl/rccl.h"),
        ("cub/cub.cuh", "hipcub/hipcub.hpp"),
        ("thrust/device_vector.h", "thrust/device_vector.h"),
        ("nvToolsExt.h", "roctracer/roctx.h"),
        ("unknown_header.h", None),
    ],
)
def test_headers(api: ApiMap, cuda: str, hip: str | None) -> None:
    assert api.header(cuda) == hip


def test_cudnn_header_flags_api_difference(api: ApiMap) -> None:
    info = api.header_info("cudnn.h")
    assert info is not None and info.hip == "miopen/miopen.h" and info.api_differs


def test_warp_sync_intrinsics_from_hip_6_2(api: ApiMap) -> None:
    for name in ("__shfl_xor_sync", "__shfl_down_sync", "__ballot_sync", "__syncwarp"):
        assert api.available_in(name, "6.2"), name
        assert api.available_in(name, "6.2.4"), name
        assert not api.available_in(name, "6.1"), name
        assert not api.available_in(name, "6.1.2"), name


def test_available_in_semantics(api: ApiMap) -> None:
    assert api.available_in("cudaMalloc", "1.5")  # added 1.5.0
    assert not api.available_in("cudaMalloc", "1.4")
    assert not api.available_in("CUB_ALIGN", "6.3")  # no HIP equivalent
    assert not api.available_in("notACudaName", "6.3")
    # The 2024 tables record no HIP removals; check the rule on a small synthetic map.
    small = TypeAdapter(ApiMap).validate_python(
        {
            "schema_version": 1,
            "kind": "gpuport.api_map",
            "checked": "2026-11-22",
            "sources": ["https://example.org/x"],
            "generated_from": "test",
            "entries": {
                "cuOld": {
                    "hip": "hipOld",
                    "family": "driver",
                    "hip_added": "1.0",
                    "hip_removed": "6.0",
                }
            },
        }
    )
    assert small.available_in("cuOld", "5.7.1")
    assert not small.available_in("cuOld", "6.0")
    assert not small.available_in("cuOld", "7.0")
    push = api.lookup("nvtxRangePushA")
    assert push is not None and push.hip_added is None
    assert api.available_in("nvtxRangePushA", "5.0")  # unknown added version: available
    with pytest.raises(GpuportError, match="not a HIP version"):
        api.available_in("cudaMalloc", "six")


def test_invalid_file_names_its_path(tmp_path: Path) -> None:
    bad = tmp_path / "api_map.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(GpuportError, match=re.escape(str(bad))):
        load_api_map(bad)
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"schema_version": 2}), encoding="utf-8")
    with pytest.raises(GpuportError, match=re.escape(str(wrong))):
        load_api_map(wrong)
    with pytest.raises(GpuportError, match=r"missing\.json"):
        load_api_map(tmp_path / "missing.json")


def test_generator_parses_second_target_and_escapes(tmp_path: Path) -> None:
    gen = _generator()
    (tmp_path / "CUBLAS_API_supported_by_HIP_and_ROC.md").write_text(
        "## **1. Section**\n\n"
        "|**CUDA**|**A**|**D**|**C**|**R**|**HIP**|**A**|**D**|**C**|**R**|**E**|"
        "**ROC**|**A**|**D**|**C**|**R**|**E**|\n"
        "|:--|:-:|:-:|:-:|:-:|:--|:-:|:-:|:-:|:-:|:-:|:--|:-:|:-:|:-:|:-:|:-:|\n"
        "|`cublas\\_X`|10.1| | | |`hipblasX`|6.0.0| | | |6.3.0|`rocblas_x`|5.0.0| | | | |\n"
        "|`cublasY`| | | | | | | | | | | | | | | | |\n\n"
        "\\*A - Added; D - Deprecated\n",
        encoding="utf-8",
    )
    extra = tmp_path / "extra.toml"
    extra.write_text('checked = "2026-11-22"\n', encoding="utf-8")
    doc = gen.build(tmp_path, extra)
    x = doc["entries"]["cublas_X"]
    assert x == {
        "cuda_added": "10.1",
        "family": "cublas",
        "hip": "hipblasX",
        "hip_added": "6.0.0",
        "hip_experimental": True,
        "roc": "rocblas_x",
    }
    assert doc["entries"]["cublasY"] == {"family": "cublas", "hip": None}
    assert gen.render(tmp_path, extra) == gen.render(tmp_path, extra)


def test_bundled_map_lazily_equals_whole_validation() -> None:
    """The bundled map validates its entries on first lookup (start-up, issue 18): the whole
    file must validate, and every lazily validated entry equal the eager one."""
    from gpuport.safeparse import json_value

    whole = TypeAdapter(ApiMap).validate_python(json_value(API_MAP_PATH.read_bytes()))
    lazy = load_api_map()
    assert type(lazy.entries) is not dict  # the lazy path is the one in use
    assert list(lazy.entries) == list(whole.entries)
    assert dict(lazy.entries.items()) == dict(whole.entries)
    assert lazy.headers == whole.headers and lazy.namespaces == whole.namespaces


def test_bad_bundled_entry_is_named_when_used(tmp_path: Path) -> None:
    from gpuport.knowledge import api_map

    raw = json.loads(API_MAP_PATH.read_text(encoding="utf-8"))
    raw["entries"]["cudaMalloc"]["family"] = 7  # not a string
    bad = tmp_path / "api_map.json"
    bad.write_text(json.dumps(raw), encoding="utf-8")
    amap = api_map._bundled(bad, bad.read_bytes())
    assert amap.lookup("cudaFree") is not None  # the others still work
    with pytest.raises(GpuportError, match=r"entries\.cudaMalloc\.family"):
        amap.lookup("cudaMalloc")
    raw["entries"]["cudaMalloc"] = "hipMalloc"  # not a table: named when used, too
    bad.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(GpuportError, match=r"entries\.cudaMalloc"):
        api_map._bundled(bad, bad.read_bytes()).entries.get("cudaMalloc")
    raw["entries"] = []  # not a table: the whole check, at once
    bad.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(GpuportError, match="entries"):
        api_map._bundled(bad, bad.read_bytes())


# ----------------------------------------------------------------------- bf16 and fp8 (issue 28)


def test_device_table_is_the_later_hipify_snapshot(api: ApiMap) -> None:
    assert any("0244dd397c19aa722fcd540db9d77f3953844f99" in s for s in api.sources)
    bf16 = api.lookup("__nv_bfloat16")
    assert bf16 is not None and bf16.hip == "__hip_bfloat16" and bf16.hip_added == "5.7.0"
    assert bf16.hip != "hip_bfloat16"  # the legacy type the 2024 table mapped it to
    pair = api.lookup("__nv_bfloat162")
    assert pair is not None and pair.hip == "__hip_bfloat162"
    text = (TABLES / "CUDA_Device_API_supported_by_HIP.md").read_text(encoding="utf-8")
    assert len(text) == 38329  # the size the index reports for that commit's file


def test_bf16_intrinsics_have_a_hip_name_and_say_who_decides(api: ApiMap) -> None:
    names = [
        n
        for n, e in api.entries.items()
        if e.family == "device" and "bfloat16" in n and n.startswith("__") and "_nv_" not in n
    ]
    assert len(names) >= 70
    unmapped = [n for n in names if not api.lookup(n) or api.lookup(n).hip is None]  # type: ignore[union-attr]
    assert unmapped == []  # the 2024 map had ~80 of them as "no HIP equivalent"
    for name in names:
        entry = api.lookup(name)
        assert entry is not None and entry.hip == name  # HIP spells them as CUDA does
        assert entry.hip_added or entry.hip_header == "hip/hip_bf16.h", name
    known = api.lookup("__low2bfloat16")
    assert known is not None and known.hip_added == "5.7.0"
    assert api.available_in("__low2bfloat16", "6.0") and not api.available_in(
        "__low2bfloat16", "5.6"
    )
    # no version recorded: only the installed headers can say (hipify/hipheaders.py)
    assert not api.available_in("__float2bfloat16_rn", "10.1")


def test_fp8_types_are_not_renamed_to_fnuz(api: ApiMap) -> None:
    for name in ("__nv_fp8_e4m3", "__NV_E4M3", "__nv_cvt_float_to_fp8", "__nv_fp8x2_e5m2"):
        entry = api.lookup(name)
        assert entry is not None and entry.hip is None, name
        assert entry.note and "FNUZ" in entry.note
    storage = api.lookup("__nv_fp8_storage_t")  # a byte: the same bits on both sides
    assert storage is not None and storage.hip == "__hip_fp8_storage_t"
