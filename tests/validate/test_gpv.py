"""The .gpv file: safetensors only (never a pickle), checksums, clear errors, atomic writes."""

from __future__ import annotations

import hashlib
import json
import pickle
import struct
from pathlib import Path

import pytest
import torch

from gpuport.models import GpuportError
from gpuport.validate import gpv
from gpuport.validate.capture import CaptureOptions, capture
from gpuport.validate.check import CheckOptions, check

from .conftest import MODELS, ref


def _header(path: Path) -> tuple[int, dict]:  # type: ignore[type-arg]
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    return n, json.loads(raw[8 : 8 + n])


def test_file_is_safetensors_with_a_manifest(a_gpv: Path) -> None:
    _n, header = _header(a_gpv)
    assert a_gpv.read_bytes()[8:9] == b"{"
    manifest = json.loads(header["__metadata__"][gpv.META_KEY])
    assert manifest["kind"] == "gpuport.validate.capture"
    names = [k for k in header if k != "__metadata__"]
    assert any(k.startswith("out/") for k in names)
    assert any(k.startswith("in/") for k in names)
    assert "model_in/0" in names
    assert set(manifest["checksums"]) == set(names)
    first = manifest["modules"][0]
    assert first["path"] == "embed" and first["op"] == "Embedding"
    assert {"order", "op_class", "k", "outputs", "inputs"} <= set(first)
    assert manifest["settings"]["tf32_matmul"] is not None
    assert len(manifest["signature"]) == 64 and len(manifest["param_checksum"]) == 64


def test_a_pickle_is_refused_without_being_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "evil.gpv"
    torch.save({"x": torch.ones(2)}, bad)  # a zip of pickles
    plain = tmp_path / "plain.gpv"
    plain.write_bytes(pickle.dumps({"x": 1}))

    def boom(*_a: object, **_k: object) -> None:
        raise AssertionError("a pickle was loaded")

    monkeypatch.setattr(pickle, "load", boom)
    monkeypatch.setattr(pickle, "loads", boom)
    monkeypatch.setattr(torch, "load", boom)
    for path in (bad, plain):
        with pytest.raises(GpuportError, match="not a gpuport capture"):
            gpv.GpvFile(path)


def test_truncated_file(a_gpv: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut.gpv"
    data = a_gpv.read_bytes()
    cut.write_bytes(data[: len(data) - 1000])
    with pytest.raises(GpuportError, match="truncated"):
        gpv.GpvFile(cut)
    cut.write_bytes(data[:100])
    with pytest.raises(GpuportError, match="truncated"):
        gpv.GpvFile(cut)
    cut.write_bytes(data[:5])
    with pytest.raises(GpuportError, match="not a gpuport capture"):
        gpv.GpvFile(cut)


def test_tampered_tensor_is_caught(a_gpv: Path, tmp_path: Path) -> None:
    n, header = _header(a_gpv)
    name = "out/000001/layers.0.attn_norm/0"
    start, _end = header[name]["data_offsets"]
    data = bytearray(a_gpv.read_bytes())
    data[8 + n + start + 5] ^= 0x01  # one bit of one value
    bad = tmp_path / "tampered.gpv"
    bad.write_bytes(bytes(data))
    with pytest.raises(GpuportError, match=f"checksum mismatch for tensor '{name}'"):
        check(CheckOptions(path=bad, model_ref=ref()))


def test_safetensors_without_manifest_and_bad_manifest(tmp_path: Path) -> None:
    from safetensors.torch import save_file

    plain = tmp_path / "plain.gpv"
    save_file({"x": torch.ones(2)}, str(plain))
    with pytest.raises(GpuportError, match="not a gpuport capture"):
        gpv.GpvFile(plain)
    save_file({"x": torch.ones(2)}, str(plain), metadata={gpv.META_KEY: '{"kind": "other"}'})
    with pytest.raises(GpuportError, match="not a gpuport capture"):
        gpv.GpvFile(plain)
    save_file(
        {"x": torch.ones(2)},
        str(plain),
        metadata={gpv.META_KEY: '{"kind": "gpuport.validate.capture", "schema_version": "1.0"}'},
    )
    with pytest.raises(GpuportError, match="invalid manifest"):
        gpv.GpvFile(plain)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(GpuportError, match="cannot read"):
        gpv.GpvFile(tmp_path / "nope.gpv")


def test_capture_error_leaves_no_file(tmp_path: Path) -> None:
    helper = tmp_path / "broken.py"
    helper.write_text(
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.lin = torch.nn.Linear(4, 4)\n"
        "    def forward(self, x):\n"
        "        self.lin(x)\n"
        "        raise RuntimeError('boom in forward')\n"
        "def build():\n"
        "    return M(), torch.ones(2, 4)\n"
    )
    out = tmp_path / "out.gpv"
    with pytest.raises(GpuportError, match="boom in forward"):
        capture(CaptureOptions(model_ref=f"{helper}:build", out=out))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.py"]


def test_write_failure_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import safetensors.torch

    def half_then_fail(tensors: object, filename: str, metadata: object = None) -> None:
        Path(filename).write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{")
        raise KeyboardInterrupt

    monkeypatch.setattr(safetensors.torch, "save_file", half_then_fail)
    out = tmp_path / "a.gpv"
    with pytest.raises(KeyboardInterrupt):
        capture(CaptureOptions(model_ref=ref(), out=out))
    assert list(tmp_path.iterdir()) == []


def test_size_budget_leaves_out_a_suffix_and_says_so(tmp_path: Path) -> None:
    out = tmp_path / "small.gpv"
    summary = capture(CaptureOptions(model_ref=ref(), out=out, max_bytes=60_000))
    assert summary.left_out and summary.calls > 0
    assert summary.stored_bytes <= 60_000
    with gpv.GpvFile(out) as f:
        assert f.manifest.left_out == summary.left_out
        recorded = [r.order for r in f.manifest.modules]
    assert recorded == list(range(len(recorded)))  # a prefix of the execution
    report = check(CheckOptions(path=out, model_ref=ref()))
    assert report.verdict.value == "same"
    assert report.left_out == summary.left_out
    assert any("--max-bytes" in w for w in report.warnings)


def test_models_helper_exists() -> None:
    assert MODELS.is_file()


def test_identical_tensors_are_stored_once(tmp_path: Path) -> None:
    helper = tmp_path / "ident.py"
    helper.write_text(
        "import torch\n"
        "class Twice(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return x, x\n"
        "def build():\n"
        "    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Identity(), Twice())\n"
        "    return model, torch.ones(2, 4)\n"
    )
    out = tmp_path / "ident.gpv"
    summary = capture(CaptureOptions(model_ref=f"{helper}:build", out=out))
    # model input, the Linear's output: everything else is the same tensor, referenced
    assert summary.tensors == 2
    with gpv.GpvFile(out) as f:
        twice = f.manifest.modules[-1]
        assert [o.stored for o in twice.outputs] == ["out/000000/0/0", "out/000000/0/0"]
    assert check(CheckOptions(path=out, model_ref=f"{helper}:build")).verdict.value == "same"


# --- regressions from the review: crafted files are one-line errors, never crashes ----------


def _rewrite(src: Path, dst: Path, header_edit=None, manifest_edit=None, resign=True) -> Path:  # type: ignore[no-untyped-def]
    """Copy a capture with its header (and/or the manifest inside it) edited; data as is.
    ``resign``: also update the manifest's sha256, as a forger would, to reach the checks
    behind it."""
    raw = src.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    if manifest_edit is not None:
        manifest = json.loads(header["__metadata__"][gpv.META_KEY])
        manifest_edit(manifest)
        text = json.dumps(manifest)
        header["__metadata__"][gpv.META_KEY] = text
        if resign:
            digest = hashlib.sha256(text.encode()).hexdigest()
            header["__metadata__"][gpv.META_SHA_KEY] = digest
    if header_edit is not None:
        header_edit(header)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    dst.write_bytes(struct.pack("<Q", len(text)) + text + raw[8 + n :])
    return dst


EMBED = "out/000000/embed/0"


def _set(name: str, key: str, value: object):  # type: ignore[no-untyped-def]
    def edit(header: dict) -> None:  # type: ignore[type-arg]
        header[name][key] = value

    return edit


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (_set(EMBED, "dtype", "I32"), r"is I32 \[2, 16, 64\] in the file but float32"),
        (_set(EMBED, "shape", [2, 64, 16]), r"is F32 \[2, 64, 16\] in the file but float32"),
    ],
)
def test_header_dtype_and_shape_must_match_the_manifest(
    a_gpv: Path, tmp_path: Path, edit: object, message: str
) -> None:
    bad = _rewrite(a_gpv, tmp_path / "bad.gpv", header_edit=edit)
    with pytest.raises(GpuportError, match=message):
        gpv.GpvFile(bad)


def test_checksums_cover_dtype_and_shape(a_gpv: Path, tmp_path: Path) -> None:
    """model_in/0 has no TensorInfo to compare with: the sha256 itself covers its shape."""
    bad = _rewrite(a_gpv, tmp_path / "bad.gpv", header_edit=_set("model_in/0", "shape", [16, 2]))
    with gpv.GpvFile(bad) as f, pytest.raises(GpuportError, match="checksum mismatch"):
        f.tensor("model_in/0")
    assert gpv.sha256(torch, torch.zeros(2, 2)) != gpv.sha256(torch, torch.zeros(4))
    assert gpv.sha256(torch, torch.zeros(4)) != gpv.sha256(torch, torch.zeros(4).int())


@pytest.mark.parametrize("offsets", [["b", 8], [None, 8], [0, 1e300], [True, 8], [-1, 8], [8, 0]])
def test_malformed_offsets(a_gpv: Path, tmp_path: Path, offsets: list[object]) -> None:
    bad = _rewrite(a_gpv, tmp_path / "bad.gpv", header_edit=_set(EMBED, "data_offsets", offsets))
    with pytest.raises(GpuportError, match=f"malformed header entry for tensor '{EMBED}'"):
        gpv.GpvFile(bad)


def test_deeply_nested_header(tmp_path: Path) -> None:
    text = b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    bad = tmp_path / "deep.gpv"
    bad.write_bytes(struct.pack("<Q", len(text)) + text)
    with pytest.raises(GpuportError, match="nested too deeply"):
        gpv.GpvFile(bad)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda m: m["modules"][0]["outputs"][0].update(name="out/000000/embed/x"),
            "must end in /<index>",
        ),
        (
            lambda m: m["modules"][0]["grads"].append(
                {"name": "grad/x", "dtype": "float32", "shape": [1]}
            ),
            "must end in /<index>",
        ),
        (
            lambda m: m["modules"][1]["outputs"][0].update(ref="out/999999/nowhere/0"),
            "which it does not store",
        ),
        (
            lambda m: m["modules"][0].update(inputs={"args": [{"t": "in/404/x/0"}], "kwargs": []}),
            "which it does not store",
        ),
        (
            lambda m: m["modules"][0].update(inputs=json.loads("[" * 150 + "]" * 150)),
            "nested too deeply",
        ),
        (lambda m: m["modules"][1].update(path="embed"), "recorded twice"),
    ],
)
def test_tampered_manifest(a_gpv: Path, tmp_path: Path, edit: object, message: str) -> None:
    bad = _rewrite(a_gpv, tmp_path / "bad.gpv", manifest_edit=edit)
    with pytest.raises(GpuportError, match=message):
        gpv.GpvFile(bad)


def test_crafted_files_exit_2_in_one_line(vcli, a_gpv: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bad = _rewrite(a_gpv, tmp_path / "bad.gpv", header_edit=_set(EMBED, "data_offsets", [0, None]))
    for args in (("diff", str(bad), str(a_gpv)), ("check", str(bad), "--model", ref())):
        r = vcli(*args)
        assert r.code == 2 and "internal error" not in r.err and r.err.count("\n") == 1, r.err


def test_an_edited_manifest_is_refused(a_gpv: Path, tmp_path: Path) -> None:
    """Tried as a user: renaming a module in the manifest went unnoticed (check said same)."""

    def rename(manifest: dict) -> None:  # type: ignore[type-arg]
        manifest["modules"][0]["path"] = "renamed"

    bad = _rewrite(a_gpv, tmp_path / "bad.gpv", manifest_edit=rename, resign=False)
    with pytest.raises(GpuportError, match="checksum mismatch for its manifest"):
        gpv.GpvFile(bad)
    with gpv.GpvFile(a_gpv) as f:  # the capture itself carries the digest
        assert f.manifest.modules
    raw = a_gpv.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    meta = json.loads(raw[8 : 8 + n])["__metadata__"]
    assert meta[gpv.META_SHA_KEY] == hashlib.sha256(meta[gpv.META_KEY].encode()).hexdigest()
