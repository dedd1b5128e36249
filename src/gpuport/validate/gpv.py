"""The ``.gpv`` capture file: one safetensors file, a JSON manifest in its metadata.

Why safetensors: a capture crosses machines and teams, and loading it must never run code.
``torch.load`` unpickles (arbitrary code); safetensors is a length-prefixed JSON header plus raw
little-endian tensor bytes, read here through ``safe_open`` only. The manifest
(:class:`~gpuport.validate.model.CaptureManifest`) sits under one metadata key and carries a
sha256 per stored tensor, over its dtype, shape and bytes, so a truncated, edited or bit-rotted
file (or a header whose dtype or shape was changed: same bytes, other numbers) is refused with a
clear message instead of producing wrong numbers. On open, every tensor the manifest describes
is checked against the header (dtype, shape, presence), and anything malformed in either is a
one-line error, never a crash. Tensor names::

    model_in/0, model_in/kw.attention_mask     the model call's inputs (replayed on B)
    in/000123/layers.0.mlp.up/0                a module call's inputs (grafting, fp64)
    out/000123/layers.0.mlp.up/0               its outputs, flattened
    grad/000123/layers.0.mlp.up/0              gradients of those outputs (--backward)
    loss/0                                     the fixed weights of the --backward loss

Writes go to a temporary file in the target folder, renamed over the target only when
complete, so an interrupted capture never leaves a half-written ``.gpv``.
"""

from __future__ import annotations

import hashlib
import struct
import threading
from pathlib import Path
from typing import Any

from pydantic import JsonValue, ValidationError

from gpuport import fileio
from gpuport.fileio import atomic_path
from gpuport.models import SCHEMA_VERSION, GpuportError
from gpuport.optional import require
from gpuport.safeparse import ParseError, json_value
from gpuport.validate.model import MANIFEST_KIND, CaptureManifest

META_KEY = "gpuport.validate"
# sha256 of the manifest text: an edited manifest (a path, a dtype, a setting) is refused
META_SHA_KEY = "gpuport.validate.sha256"
_MAX_HEADER = 100 * 1024 * 1024  # safetensors' own limit
_MAX_DEPTH = 100  # nesting of an encoded argument record (real ones are a few levels deep)
# torch dtype name → safetensors header code (the safetensors format's own names)
_ST_DTYPES = {
    "float64": "F64",
    "float32": "F32",
    "float16": "F16",
    "bfloat16": "BF16",
    "int64": "I64",
    "int32": "I32",
    "int16": "I16",
    "int8": "I8",
    "uint8": "U8",
    "uint16": "U16",
    "uint32": "U32",
    "uint64": "U64",
    "bool": "BOOL",
    "float8_e4m3fn": "F8_E4M3",
    "float8_e4m3fnuz": "F8_E4M3FNUZ",
    "float8_e5m2": "F8_E5M2",
    "float8_e5m2fnuz": "F8_E5M2FNUZ",
    "complex64": "C64",
}


def modules(purpose: str) -> tuple[Any, Any]:
    """(torch, safetensors) or a one-line EnvironmentProblem naming the 'validate' extra."""
    torch = require("torch", "validate", purpose)
    safetensors = require("safetensors", "validate", purpose)
    require("safetensors.torch", "validate", purpose)
    return torch, safetensors


def tensor_bytes(torch: Any, t: Any) -> Any:
    """A uint8 numpy view of a contiguous CPU tensor's bytes (bf16 has no numpy dtype)."""
    return t.reshape(-1).view(torch.uint8).numpy()


def sha256(torch: Any, t: Any) -> str:
    """sha256 over a tensor's dtype, shape and bytes: a header whose dtype or shape was edited
    (the same bytes read as other numbers) no longer matches."""
    digest = hashlib.sha256(f"{str(t.dtype).removeprefix('torch.')}{list(t.shape)}\n".encode())
    digest.update(tensor_bytes(torch, t))
    return digest.hexdigest()


def tensor_index(name: str) -> int:
    """The output index at the end of a stored name (``out/000001/layers.0/2`` → 2)."""
    last = name.rsplit("/", 1)[-1]
    if not (last.isascii() and last.isdigit() and len(last) <= 9):
        raise GpuportError(
            f"malformed tensor name {name!r} in the manifest: it must end in /<index>"
        )
    return int(last)


# --- encoding call arguments: tensors by name, plain values inline --------------------------


def encode_tree(torch: Any, obj: Any, prefix: str, store: dict[str, Any]) -> JsonValue:
    """Encode nested args as JSON, putting tensors into ``store`` under ``prefix``-based names.

    Raises TypeError naming the first value that neither JSON nor safetensors can hold.
    """
    if isinstance(obj, torch.Tensor):
        store[prefix] = obj
        return {"t": prefix}
    if obj is None or isinstance(obj, bool | int | float | str):
        return {"v": obj}
    if isinstance(obj, tuple | list):
        kind = "tuple" if isinstance(obj, tuple) else "list"
        return {kind: [encode_tree(torch, x, f"{prefix}.{i}", store) for i, x in enumerate(obj)]}
    if isinstance(obj, dict) and all(isinstance(k, str) for k in obj):
        return {
            "dict": [[k, encode_tree(torch, v, f"{prefix}.{k}", store)] for k, v in obj.items()]
        }
    raise TypeError(f"{type(obj).__name__} at {prefix}")


def decode_tree(spec: JsonValue, tensor: Any) -> Any:
    """Inverse of :func:`encode_tree`; ``tensor(name)`` supplies the stored tensors."""
    if not isinstance(spec, dict) or len(spec) != 1:
        raise GpuportError(f"malformed argument record in the manifest: {str(spec)[:80]}")
    ((kind, value),) = spec.items()
    if kind == "t" and isinstance(value, str):
        return tensor(value)
    if kind == "v":
        return value
    if kind in ("tuple", "list") and isinstance(value, list):
        items = [decode_tree(x, tensor) for x in value]
        return tuple(items) if kind == "tuple" else items
    if kind == "dict" and isinstance(value, list):
        out: dict[str, Any] = {}
        for pair in value:
            if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)):
                raise GpuportError("malformed keyword argument record in the manifest")
            out[pair[0]] = decode_tree(pair[1], tensor)
        return out
    raise GpuportError(f"malformed argument record in the manifest: {str(spec)[:80]}")


def encode_call(
    torch: Any, args: Any, kwargs: Any, prefix: str, store: dict[str, Any]
) -> JsonValue:
    """Encode a call's ``(args, kwargs)``: tensors become ``prefix/0``, ``prefix/kw.name``."""
    return {
        "args": [encode_tree(torch, a, f"{prefix}/{i}", store) for i, a in enumerate(args)],
        "kwargs": [
            [k, encode_tree(torch, v, f"{prefix}/kw.{k}", store)] for k, v in kwargs.items()
        ],
    }


def decode_call(spec: JsonValue, tensor: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Inverse of :func:`encode_call`."""
    if not isinstance(spec, dict) or not isinstance(spec.get("args"), list):
        raise GpuportError("malformed call record in the manifest")
    args = spec["args"]
    kwargs = spec.get("kwargs") or []
    if not isinstance(args, list):
        raise GpuportError("malformed call record in the manifest")
    decoded = decode_tree({"dict": kwargs}, tensor) if isinstance(kwargs, list) else {}
    return tuple(decode_tree(a, tensor) for a in args), decoded


def rename_tensors(spec: JsonValue, rename: Any) -> JsonValue:
    """A copy of an encoded tree with every tensor name passed through ``rename``."""
    if isinstance(spec, dict):
        if set(spec) == {"t"} and isinstance(spec["t"], str):
            return {"t": rename(spec["t"])}
        return {k: rename_tensors(v, rename) for k, v in spec.items()}
    if isinstance(spec, list):
        return [rename_tensors(v, rename) for v in spec]
    return spec


def tensor_names(spec: JsonValue) -> list[str]:
    """Names of the stored tensors an encoded argument tree refers to."""
    if isinstance(spec, dict):
        if "t" in spec and isinstance(spec["t"], str):
            return [spec["t"]]
        return [n for v in spec.values() for n in tensor_names(v)]
    if isinstance(spec, list):
        return [n for v in spec for n in tensor_names(v)]
    return []


# --- writing ---------------------------------------------------------------------------------


def write(path: Path, tensors: dict[str, Any], manifest: CaptureManifest) -> None:
    """Write the capture atomically: a temp file in the same folder, then rename."""
    _torch, _st = modules("gpuport validate capture")
    from safetensors.torch import save_file

    with atomic_path(path) as tmp:
        text = manifest.model_dump_json()
        digest = hashlib.sha256(text.encode()).hexdigest()
        save_file(tensors, str(tmp), metadata={META_KEY: text, META_SHA_KEY: digest})


# --- reading ---------------------------------------------------------------------------------


def _read_header(path: Path) -> dict[str, Any]:
    """Check the safetensors framing ourselves first, for messages a person understands."""
    size = fileio.check_regular(path).st_size  # a FIFO would hang: regular files only
    try:
        with fileio.open_regular(path) as fh:
            head = fh.read(8)
            if len(head) < 8:
                raise GpuportError(f"{path} is not a gpuport capture: only {size} bytes")
            (n,) = struct.unpack("<Q", head)
            first = fh.read(1)
            if n > _MAX_HEADER or first != b"{":
                raise GpuportError(
                    f"{path} is not a gpuport capture: it does not start with a safetensors "
                    "header (gpuport never loads pickled or torch.save files)"
                )
            if 8 + n > size:
                raise GpuportError(f"{path} is truncated: its header alone needs {8 + n} bytes")
            raw = first + fh.read(n - 1)
    except OSError as exc:
        raise GpuportError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        header = json_value(raw)
    except ParseError as exc:
        raise GpuportError(f"{path} is not a gpuport capture: its header: {exc}") from None
    if not isinstance(header, dict):
        raise GpuportError(f"{path} is not a gpuport capture: malformed header")
    end = 0
    have = size - 8 - n
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if not _entry_ok(info):
            raise GpuportError(f"{path} has a malformed header entry for tensor {name!r}")
        end = max(end, info["data_offsets"][1])
    if end > have:
        raise GpuportError(
            f"{path} is truncated: its header describes {end} bytes of tensors but the file "
            f"holds {have} (an interrupted copy?)"
        )
    return header


def _count(value: Any) -> bool:
    """A JSON integer that can be a size or an offset (bool is an int in Python: not here)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63


def _entry_ok(info: Any) -> bool:
    """A well-formed header entry: dtype, shape and offsets of the right types and ranges."""
    if not isinstance(info, dict) or not isinstance(info.get("dtype"), str):
        return False
    shape, offsets = info.get("shape"), info.get("data_offsets")
    if not (isinstance(shape, list) and all(_count(x) for x in shape)):
        return False
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(map(_count, offsets))):
        return False
    return bool(offsets[0] <= offsets[1])


def _depth(spec: JsonValue) -> int:
    """Nesting depth of a JSON value, without recursion."""
    deepest, stack = 0, [(spec, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if deepest > _MAX_DEPTH:
            return deepest
        if isinstance(node, dict):
            stack.extend((v, level + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, level + 1) for v in node)
    return deepest


def _check_manifest(path: Path, manifest: CaptureManifest, header: dict[str, Any]) -> None:
    """Everything the manifest says about stored tensors agrees with the header."""
    stored = set(manifest.checksums)

    def need(name: str, what: str) -> None:
        if name not in stored:
            raise GpuportError(
                f"{path} is damaged: {what} refers to tensor {name!r}, which it does not store"
            )

    for spec, what in [(manifest.model_inputs, "the model inputs")] + [
        (r.inputs, f"the inputs of {r.path!r}") for r in manifest.modules
    ]:
        if _depth(spec) > _MAX_DEPTH:
            raise GpuportError(f"{path}: invalid manifest: {what} are nested too deeply")
        for name in tensor_names(spec):
            need(name, what)
    for name in manifest.loss_weights:
        need(name, "the --backward loss")
    keys = [r.key for r in manifest.modules]
    if len(set(keys)) != len(keys):
        raise GpuportError(f"{path}: invalid manifest: a module call is recorded twice")
    for rec in manifest.modules:
        for info in [*rec.outputs, *rec.grads]:
            try:
                tensor_index(info.name)
            except GpuportError as exc:
                raise GpuportError(f"{path}: {exc}") from None
            need(info.stored, f"{info.name!r}")
            entry = header.get(info.stored)
            if not isinstance(entry, dict):
                raise GpuportError(f"{path} is damaged: tensor {info.stored!r} is missing")
            code = _ST_DTYPES.get(info.dtype)
            if (code is not None and entry["dtype"] != code) or entry["shape"] != info.shape:
                raise GpuportError(
                    f"{path} is damaged: tensor {info.stored!r} is {entry['dtype']} "
                    f"{entry['shape']} in the file but {info.dtype} {info.shape} in the manifest"
                )


class GpvFile:
    """An open capture: the validated manifest plus checksum-verified tensor reads.

    Thread-safe for reads, so ``diff`` can hash and compare several tensors at once.
    """

    def __init__(self, path: Path) -> None:
        _torch, safetensors = modules("gpuport validate")
        self.path = path
        header = _read_header(path)
        meta = header.get("__metadata__")
        text = meta.get(META_KEY) if isinstance(meta, dict) else None
        if not isinstance(text, str):
            raise GpuportError(
                f"{path} is a safetensors file but not a gpuport capture (no {META_KEY!r} "
                "manifest in its metadata)"
            )
        digest = meta.get(META_SHA_KEY) if isinstance(meta, dict) else None
        if digest is not None and digest != hashlib.sha256(text.encode()).hexdigest():
            raise GpuportError(
                f"{path}: checksum mismatch for its manifest; the file was changed or corrupted "
                "after capture"
            )
        self.manifest = _parse_manifest(path, text)
        _check_manifest(path, self.manifest, header)
        try:
            self._handle = safetensors.safe_open(str(path), framework="pt")
        except Exception as exc:  # SafetensorError and friends: a damaged file
            raise GpuportError(f"{path} is not a readable safetensors file: {exc}") from None
        present = set(self._handle.keys())
        missing = sorted(set(self.manifest.checksums) - present)
        if missing:
            raise GpuportError(
                f"{path} is damaged: {len(missing)} tensor(s) of its manifest are missing, "
                f"e.g. {missing[0]!r}"
            )
        self._verified: set[str] = set()
        self._lock = threading.Lock()

    def tensor(self, name: str, *, copy: bool = False) -> Any:
        """The stored tensor ``name`` (CPU), its sha256 checked against the manifest once.

        Reads share memory with each other (safetensors maps the file once), so anything that
        hands a tensor to user code, which may modify it in place, must ask for ``copy``.
        """
        torch, _ = modules("gpuport validate")
        expected = self.manifest.checksums.get(name)
        if expected is None:
            raise GpuportError(f"{self.path} has no tensor {name!r} in its manifest")
        try:
            t = self._handle.get_tensor(name)
        except Exception as exc:
            raise GpuportError(f"{self.path}: cannot read tensor {name!r}: {exc}") from None
        with self._lock:
            done = name in self._verified
        if not done:
            if sha256(torch, t) != expected:
                raise GpuportError(
                    f"{self.path}: checksum mismatch for tensor {name!r}; the file was changed "
                    "or corrupted after capture"
                )
            with self._lock:
                self._verified.add(name)
        return t.clone() if copy else t

    def close(self) -> None:
        self._handle = None

    def __enter__(self) -> GpvFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _parse_manifest(path: Path, text: str) -> CaptureManifest:
    try:
        data = json_value(text)
    except ParseError as exc:
        raise GpuportError(f"{path}: the gpuport manifest is not valid JSON: {exc}") from None
    kind = data.get("kind") if isinstance(data, dict) else type(data).__name__
    if kind != MANIFEST_KIND:
        raise GpuportError(f"{path} is not a gpuport capture (manifest kind {kind!r})")
    version = str(data.get("schema_version", ""))
    if version.split(".")[0] != SCHEMA_VERSION.split(".")[0]:
        raise GpuportError(
            f"{path} has schema version {version or 'none'}; this gpuport reads {SCHEMA_VERSION}"
        )
    try:
        return CaptureManifest.model_validate(data)
    except RecursionError:
        raise GpuportError(f"{path}: invalid manifest: nested too deeply") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise GpuportError(f"{path}: invalid manifest: {where}: {first['msg']}") from None
