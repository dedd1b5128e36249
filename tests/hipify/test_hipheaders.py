"""API availability from the installed HIP's headers (issue 18, item 2), the headers without a
HIP counterpart, and a version read without starting hipcc (item 4)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from gpuport import subproc
from gpuport.hipify import hipheaders
from gpuport.hipify import run as hipify_run
from gpuport.hipify.translate import translate

SOURCE = """#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cooperative_groups/reduce.h>
void f(float* p) {
  cudaDataType t = CUDA_R_32F;
  cudaMalloc(&p, 4);
  cudaMallocAsync(&p, 4, 0);
}
"""


def _install(root: Path, minor: int = 2) -> Path:
    inc = root / "include"
    (inc / "hip").mkdir(parents=True)
    (inc / "hip" / "hip_version.h").write_text(
        f"#define HIP_VERSION_MAJOR 5\n#define HIP_VERSION_MINOR {minor}\n", encoding="utf-8"
    )
    (inc / "hip" / "hip_runtime.h").write_text(
        "hipError_t hipMalloc(void** p, size_t n);  // hipMallocAsync is only in a comment\n",
        encoding="utf-8",
    )
    (inc / "hip" / "library_types.h").write_text(
        "typedef enum hipDataType { HIP_R_32F = 0 } hipDataType;\n", encoding="utf-8"
    )
    return inc


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import platformdirs

    folder = tmp_path / "cache"
    monkeypatch.setattr(platformdirs, "user_cache_dir", lambda *a, **k: str(folder))
    return folder


def test_headers_decide_what_exists(tmp_path: Path, cache: Path) -> None:
    headers = hipheaders.load_headers(_install(tmp_path))
    assert headers is not None and headers.version == "5.2"
    done = translate(SOURCE, hip_version="5.2", headers=headers)
    # the table says HIP 5.7; the 5.2 headers define them: translated
    assert "hipDataType t = HIP_R_32F;" in done.text
    reasons = {u.name: u.reason for u in done.unsupported}
    assert "hipMalloc(&p, 4)" in done.text
    # the table has it, these headers do not (a comment does not count): left and reported
    assert "cudaMallocAsync(&p" in done.text
    assert reasons["cudaMallocAsync"].startswith("not in the HIP 5.2 headers at")
    # a mapped include whose HIP header this install lacks
    assert reasons["cuda_bf16.h"].startswith("hip/hip_bf16.h is not in the HIP 5.2 install")
    # without HIP's cooperative groups header in the install no shim can stand for reduce.h
    assert reasons["cooperative_groups/reduce.h"] == "CUDA header with no HIP counterpart"
    assert list(cache.glob("hip-names-*.json")), "the names are cached"


@pytest.mark.parametrize(
    "damage", ["[" * 100_000, '{"v": 1, "names": 5}', "[1, 2]", "not json", '"x"', "1" * 5000]
)
def test_a_damaged_name_cache_means_a_fresh_scan(tmp_path: Path, cache: Path, damage: str) -> None:
    inc = _install(tmp_path)
    first = hipheaders.load_headers(inc)
    assert first is not None
    (cached,) = cache.glob("hip-names-*.json")
    cached.write_text(damage, encoding="utf-8")
    again = hipheaders.load_headers(inc)
    assert again is not None and again.names == first.names
    assert "hipDataType" in again.names
    assert json.loads(cached.read_text(encoding="utf-8"))["names"]  # written again


def test_without_an_install_the_table_decides() -> None:
    done = translate(SOURCE, hip_version="5.2")
    reasons = {u.name: u.reason for u in done.unsupported}
    assert reasons["CUDA_R_32F"] == "not available before HIP 5.7.0"
    assert "cuda_bf16.h" not in reasons  # no install: nothing known about its headers
    # no HIP has the header: a shim stands for it (issue 25), not reported unsupported
    assert "cooperative_groups/reduce.h" not in reasons
    assert [x.name for x in done.shims] == ["cooperative_groups/reduce.h"]


def test_local_headers_only_for_the_version_translated_for(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path)
    monkeypatch.setenv("ROCM_PATH", str(tmp_path))
    monkeypatch.setattr(hipheaders.subproc, "which", lambda *a, **k: None)
    assert hipheaders.local_headers("5.2.3") is not None
    assert hipheaders.local_headers("6.4") is None


def test_version_from_the_headers_starts_no_process(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path, minor=7)
    monkeypatch.setenv("ROCM_PATH", str(tmp_path))
    monkeypatch.setattr(shutil, "which", lambda *a, **k: None)

    def no_process(*a: object, **k: object) -> None:
        raise AssertionError("a process was started")

    monkeypatch.setattr(subproc, "run", no_process)
    assert hipify_run.detect_hip_version() == "5.7"


def test_hipcc_version_is_cached_per_path_and_mtime(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "bin" / "hipcc"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'HIP version: 6.1.40093-x'\n", encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.delenv("ROCM_PATH", raising=False)
    monkeypatch.setattr(hipify_run, "find_include", lambda *a, **k: None)
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: str(fake))
    calls: list[object] = []
    real = subproc.run

    def counting(*a: object, **k: object) -> object:
        calls.append(a)
        return real(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(subproc, "run", counting)
    assert hipify_run.detect_hip_version() == "6.1"
    assert hipify_run.detect_hip_version() == "6.1"
    assert len(calls) == 1
    assert "6.1" in json.loads((cache / "hipcc-version.json").read_text()).values()
    os.utime(fake, ns=(1, 1))  # a new hipcc (other mtime): asked again
    assert hipify_run.detect_hip_version() == "6.1"
    assert len(calls) == 2


@pytest.mark.hipcc
def test_cli_uses_the_real_hip_headers(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    if shutil.which("hipcc") is None:
        if os.environ.get("GPUPORT_REQUIRE_HIPCC") == "1":
            pytest.fail("GPUPORT_REQUIRE_HIPCC=1 but hipcc is not on PATH")
        pytest.skip("hipcc not on PATH (CI sets GPUPORT_REQUIRE_HIPCC=1)")
    include = hipheaders.find_include()
    assert include is not None
    version = hipheaders.header_version(include)
    assert version is not None
    src = tmp_path / "k.cu"
    src.write_text(SOURCE, encoding="utf-8")
    res = cli("hipify", str(src), "--hip-version", version, "--format", "json")
    assert res.code == 0, res.err
    report = json.loads(res.out)
    assert report["hip_headers"] == str(include)
    names = {u["name"] for u in report["files"][0]["unsupported"]}
    assert "CUDA_R_32F" not in names and "cudaDataType" not in names
    # the install has HIP's cooperative groups header: a shim stands for reduce.h (issue 25)
    assert "cooperative_groups/reduce.h" not in names
    assert any(x.startswith("cooperative_groups/reduce.h") for x in report["files"][0]["shims"])


BF16 = """#include <cuda_bf16.h>
__global__ void k(__nv_bfloat16* out, const float* in, int n) {
  int i = threadIdx.x;
  __nv_bfloat16 a = __float2bfloat16_rn(in[i]);
  __nv_bfloat16 b = __float2bfloat16(in[i]);
  out[i] = __hadd(a, __low2bfloat16(__halves2bfloat162(a, b)));
  int j = __bfloat162int_rz(a);
}
"""


def _bf16_install(root: Path, major: int, minor: int, names: list[str]) -> Path:
    inc = root / "include"
    (inc / "hip" / "amd_detail").mkdir(parents=True)
    (inc / "hip" / "hip_version.h").write_text(
        f"#define HIP_VERSION_MAJOR {major}\n#define HIP_VERSION_MINOR {minor}\n", encoding="utf-8"
    )
    (inc / "hip" / "hip_bf16.h").write_text(
        "#include <hip/amd_detail/amd_hip_bf16.h>\n", encoding="utf-8"
    )
    decls = "".join(f"__device__ __hip_bfloat16 {n}(float);\n" for n in names)
    (inc / "hip" / "amd_detail" / "amd_hip_bf16.h").write_text(
        f"struct __hip_bfloat16 {{ unsigned short x; }};\n{decls}", encoding="utf-8"
    )
    return inc


def test_bf16_intrinsics_are_translated_where_the_headers_have_them(
    tmp_path: Path, cache: Path
) -> None:
    """Issue 28: the bf16 intrinsics the 2024 map called "no HIP equivalent". A HIP whose
    hip_bf16.h defines them gets them translated (HIP spells them as CUDA does); a HIP whose
    headers lack one gets it left and reported, whatever its version."""
    names = ["__float2bfloat16", "__float2bfloat16_rn", "__low2bfloat16", "__halves2bfloat162",
             "__hadd", "__bfloat162int_rz"]  # fmt: skip
    new = hipheaders.load_headers(_bf16_install(tmp_path / "new", 10, 1, names))
    assert new is not None and new.version == "10.1"
    done = translate(BF16, hip_version="10.1", headers=new)
    assert "#include <hip/hip_bf16.h>" in done.text
    assert "__global__ void k(__hip_bfloat16* out" in done.text  # not the legacy hip_bfloat16
    assert "__hip_bfloat16 a = __float2bfloat16_rn(in[i]);" in done.text
    assert "int j = __bfloat162int_rz(a);" in done.text
    assert done.unsupported == []
    old = hipheaders.load_headers(_bf16_install(tmp_path / "old", 7, 0, names[:1]))
    assert old is not None
    partial = translate(BF16, hip_version="7.0", headers=old)
    reasons = {u.name: u.reason for u in partial.unsupported}
    assert set(reasons) == {"__float2bfloat16_rn", "__low2bfloat16", "__halves2bfloat162",
                            "__bfloat162int_rz"}  # fmt: skip
    assert all(r.startswith("not in the HIP 7.0 headers at") for r in reasons.values())


def test_bf16_without_headers_the_recorded_versions_decide() -> None:
    done = translate(BF16, hip_version="6.2")
    reasons = {u.name: u.reason for u in done.unsupported}
    assert "__nv_bfloat16" not in reasons and "__hip_bfloat16 a" in done.text  # HIP 5.7+
    assert "__low2bfloat16" not in reasons and "__halves2bfloat162" not in reasons  # 5.7+
    # no HIP version recorded for these: left, and the report says what would decide
    for name in ("__float2bfloat16_rn", "__bfloat162int_rz"):
        assert (
            reasons[name] == "needs a HIP whose hip/hip_bf16.h defines it; no such headers to check"
        )
    older = translate(BF16, hip_version="5.6")
    assert {u.name: u.reason for u in older.unsupported}["__nv_bfloat16"] == (
        "not available before HIP 5.7.0"
    )
    assert "__nv_bfloat16* out" in older.text  # left as it was


def test_assess_counts_what_hipify_counts_with_the_installed_headers(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 29 (one HIP assumption for every command): hipify judged a project against the
    installed HIP 5.2's headers (70 untranslatable names on the trial's SpargeAttn), assess's
    dry run for the same HIP 5.2 against the bundled table alone (64)."""
    import dataclasses

    from gpuport.assess import sources_hipify
    from gpuport.assess.config import load_settings

    inc = _install(tmp_path / "rocm")
    monkeypatch.setattr(hipheaders, "find_include", lambda hipcc=None: inc)
    root = tmp_path / "p"
    root.mkdir()
    (root / "k.cu").write_text(SOURCE, encoding="utf-8")
    settings = dataclasses.replace(load_settings(root), hip_version="5.2")
    section, _ = sources_hipify.run_hipify(settings, set(), False)
    report = hipify_run.hipify_path(
        root / "k.cu", hip_version="5.2", headers=hipheaders.local_headers("5.2")
    )
    from_hipify = sorted(u.name for f in report.files for u in f.unsupported)
    assert sorted(u.name for u in section.unsupported) == from_hipify
    assert "cuda_bf16.h" in from_hipify and "cudaMallocAsync" in from_hipify
    # for another HIP than the installed one, the table decides in both
    other = sources_hipify.run_hipify(
        dataclasses.replace(settings, hip_version="6.4"), set(), False
    )
    assert "cuda_bf16.h" not in {u.name for u in other[0].unsupported}
