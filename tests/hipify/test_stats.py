"""`gpuport hipify --stats`: replacements per API family and unsupported names with counts."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import TypeAdapter

from gpuport.hipify.run import HipifyReport, family_counts, family_of, hipify_path
from gpuport.knowledge.api_map import load_api_map
from gpuport.plainjson import dumps, plain

SUITE = Path(__file__).parent.parent / "fixtures" / "hipify" / "suite"
BLAS = SUITE / "cublas_curand.cu"
UNSUPPORTED = """\
#include <cuda_runtime.h>
#include <cub/cub.cuh>
int main() {
  cudaProfilerInitialize();
  cudaProfilerInitialize();
  cudaArrayGetPlane();
  cudaDeviceSynchronize();
  using Reduce = cub::WarpReduce<float>;
  return 0;
}
"""


def test_family_of_each_kind_of_key() -> None:
    amap = load_api_map()
    assert family_of("cudaMalloc", amap) == "runtime"
    assert family_of("cublasSgemm", amap) == "cublas"
    assert family_of("curandCreateGenerator", amap) == "curand"
    assert family_of("__shfl_down_sync", amap) == "device"
    assert family_of("cublas_v2.h", amap) == "headers"
    assert family_of("thrust/sort.h", amap) == "headers"
    assert family_of("cub::", amap) == "namespaces"
    assert family_of("not_a_cuda_name", amap) == "other"
    counts = family_counts({"cudaMalloc": 2, "cudaFree": 1, "curand.h": 1}, load_api_map())
    assert counts == {"headers": 1, "runtime": 3}


def test_file_result_counts_per_family() -> None:
    report = hipify_path(BLAS, hip_version="5.2")
    (f,) = report.files
    # headers: cuda_runtime.h, cublas_v2.h, curand.h; runtime: cudaMalloc x3, cudaFree x3,
    # cudaDeviceSynchronize; cublas: handle type, create, Sgemm, 2 x OP_N, status, destroy
    assert f.by_family == {"cublas": 7, "curand": 7, "headers": 3, "runtime": 7}
    assert sum(f.by_family.values()) == sum(f.replacements.values())
    assert f.unsupported_counts == {}
    assert report.by_family == f.by_family
    assert report.unsupported_counts == {}


def test_unsupported_counts_and_json(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.cu").write_text(UNSUPPORTED, encoding="utf-8")
    (src / "b.cu").write_text(BLAS.read_text(encoding="utf-8"), encoding="utf-8")
    report = hipify_path(src, out_dir=tmp_path / "out", hip_version="5.2")
    a = next(f for f in report.files if f.path == "a.cu")
    assert a.unsupported_counts == {"cudaArrayGetPlane": 1, "cudaProfilerInitialize": 2}
    assert len(a.unsupported) == 3
    assert a.by_family == {"headers": 2, "namespaces": 1, "runtime": 1}
    assert report.unsupported_counts == a.unsupported_counts
    assert report.by_family == {
        "cublas": 7,
        "curand": 7,
        "headers": 5,
        "namespaces": 1,
        "runtime": 8,
    }
    data = json.loads(dumps(report))
    assert data["by_family"] == report.by_family
    assert data["unsupported_counts"] == {"cudaArrayGetPlane": 1, "cudaProfilerInitialize": 2}
    files = {f["path"]: f for f in data["files"]}
    assert files["a.cu"]["unsupported_counts"] == {
        "cudaArrayGetPlane": 1,
        "cudaProfilerInitialize": 2,
    }
    assert files["b.cu"]["by_family"]["cublas"] == 7
    again = TypeAdapter(HipifyReport).validate_json(dumps(report))
    assert again.by_family == report.by_family
    # read back whole: nothing is lost but the texts, which the JSON never holds
    assert plain(again) == plain(report)
    assert again.files[0].text is None and report.files[0].text is not None
    # and written as pydantic writes it
    text_fields = {"text", "original"}
    assert dumps(report) == TypeAdapter(HipifyReport).dump_json(
        report, indent=2, exclude={"files": {"__all__": text_fields}}
    ).decode("utf-8")


def test_stats_table_shows_families_and_unsupported(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "a.cu"
    src.write_text(UNSUPPORTED, encoding="utf-8")
    res = cli("hipify", str(src), "--stats", "--hip-version", "5.2")
    assert res.code == 0, res.err
    assert "by API family" in res.out
    assert "namespaces" in res.out
    assert "headers" in res.out
    assert "unsupported identifiers" in res.out
    line = next(ln for ln in res.out.splitlines() if "cudaProfilerInitialize" in ln and "│" in ln)
    assert "2" in line.split("cudaProfilerInitialize", 1)[1]


def test_hip_version_falls_back_to_the_rocm_install(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import shutil

    from gpuport.hipify import run

    (tmp_path / ".info").mkdir()
    (tmp_path / ".info" / "version").write_text("6.4.1-120\n")
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    monkeypatch.setenv("ROCM_PATH", str(tmp_path))
    assert run.detect_hip_version() == "6.4"
