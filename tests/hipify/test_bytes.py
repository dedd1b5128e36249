"""Bad input: bytes that are not UTF-8 survive a translation byte-for-byte (issue 3)."""

from __future__ import annotations

from pathlib import Path

from gpuport.hipify import translate
from gpuport.hipify.run import hipify_path

SOURCE = (
    b"// caf\xe9: a latin-1 byte in a comment\n"
    b"#include <cuda_runtime.h>\n"
    b'const char* s = "na\xefve";\n'
    b"void f(float** p) { cudaMalloc(p, 4); }\n"
)


def test_latin1_byte_survives_out_dir(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_bytes(SOURCE)
    res = cli("hipify", str(src), "-o", str(tmp_path / "out"), "--hip-version", "6.4")
    assert res.code == 0, res.err
    out = (tmp_path / "out" / "k.cu").read_bytes()
    assert b"// caf\xe9: a latin-1 byte in a comment\n" in out
    assert b'"na\xefve"' in out
    assert b"hipMalloc(p, 4)" in out
    assert b"hip/hip_runtime.h" in out
    assert (
        out.replace(b"hipMalloc", b"cudaMalloc").replace(b"hip/hip_runtime.h", b"cuda_runtime.h")
        == SOURCE
    )


def test_latin1_byte_survives_in_place_and_stdout(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "k.cu"
    f.write_bytes(SOURCE)
    res = cli("hipify", str(f), "--hip-version", "6.4", "--in-place")
    assert res.code == 0, res.err
    assert b"// caf\xe9:" in f.read_bytes()
    assert (tmp_path / "k.cu.gpuport.bak").read_bytes() == SOURCE
    report = hipify_path(f, hip_version="6.4")
    assert report.skipped == []
    assert report.files[0].text is not None


def test_translator_accepts_surrogates() -> None:
    text = SOURCE.decode("utf-8", "surrogateescape")
    out = translate(text, launch_syntax="ggl").text
    assert "\udce9" in out
    assert out.encode("utf-8", "surrogateescape").startswith(b"// caf\xe9:")
    assert translate(out).text == out
