"""The routes ``gpuport port`` writes: CUDA images to ROCm images, torch releases to the ROCm
wheel index that served them (``port_routes.toml``, each entry with its sources and date)."""

from __future__ import annotations

import datetime as dt
import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuport import textre
from gpuport.knowledge.plain import sourced
from gpuport.models import GpuportError

__all__ = ["ImageRoute", "PortRoutes", "PytorchImage", "TorchIndex", "load_port_routes"]

_FILE = Path(__file__).with_name("port_routes.toml")


@dataclass(frozen=True)
class ImageRoute:
    name: str
    match: re.Pattern[str]
    rocm: str
    kind: str
    summary: str
    sources: tuple[str, ...]
    checked: dt.date


@dataclass(frozen=True)
class TorchIndex:
    minor: str
    index: str
    sources: tuple[str, ...]
    checked: dt.date


@dataclass(frozen=True)
class PytorchImage:
    """An AMD ROCm PyTorch image (``rocm/pytorch:...``): its Python, Ubuntu and torch, and
    the torch packages it ships."""

    tag: str
    python: tuple[int, int]
    ubuntu: str
    torch: str
    ships: tuple[str, ...]
    sources: tuple[str, ...]
    checked: dt.date


#: the distributions other than Ubuntu that CUDA image tags name (NVIDIA's tag scheme:
#: ``<cuda>-<flavour>-<os><release>``)
_OTHER_OS = r"-((?:ubi|rockylinux|centos|oraclelinux|amzn|rhel|opensuse|sles|debian)[0-9.]*)\b"


@dataclass(frozen=True)
class PortRoutes:
    rocm: str
    default_ubuntu: str
    images: tuple[ImageRoute, ...]
    torch: tuple[TorchIndex, ...]
    #: the Ubuntu releases ROCm ``rocm`` ships packages (and ``rocm/dev-ubuntu-*`` images) for
    ubuntu: tuple[str, ...] = ()
    #: ROCm PyTorch images for a Dockerfile on a plain Python image, oldest Python first
    pytorch_images: tuple[PytorchImage, ...] = ()
    #: Debian packages named the same on those images' Ubuntu releases
    apt_same: frozenset[str] = frozenset()

    def pytorch_image(self, python: tuple[int, int]) -> PytorchImage | None:
        """The ROCm PyTorch image whose Python is ``python`` or the nearest newer one."""
        return next((p for p in self.pytorch_images if p.python >= python), None)

    def unshipped_ubuntu(self, ref: str) -> str | None:
        """The Ubuntu release of image ``ref`` when its route names an image of that release
        and ROCm ``rocm`` ships none for it (``nvidia/cuda:10.0-devel-ubuntu18.04``), else
        None."""
        low = ref.strip().lower()
        for route in self.images:
            if route.match.search(low):
                ubuntu = textre.search(r"ubuntu(\d{2}\.\d{2})", low)
                if ubuntu is None or "{ubuntu}" not in route.rocm or not self.ubuntu:
                    return None
                return None if ubuntu.group(1) in self.ubuntu else ubuntu.group(1)
        return None

    def other_os(self, ref: str) -> str | None:
        """The distribution a CUDA image's tag names when its route names an Ubuntu image
        and the tag names another (``nvidia/cuda:12.4.1-devel-ubi9``, ``-rockylinux8``,
        ``-centos7``): the Dockerfile's steps (``yum``/``dnf``) were written for it, so an
        Ubuntu image is no counterpart. None otherwise."""
        low = ref.strip().lower()
        for route in self.images:
            if route.match.search(low):
                if "{ubuntu}" not in route.rocm:
                    return None
                m = textre.search(_OTHER_OS, low.split(":", 1)[-1])
                return m.group(1) if m else None
        return None

    def image_for(self, ref: str) -> tuple[ImageRoute, str] | None:
        """The route for image reference ``ref`` and the ROCm image it names, or None (no
        route, a release of Ubuntu the ROCm release ships no image for, or another
        distribution than Ubuntu)."""
        low = ref.strip().lower()
        if self.unshipped_ubuntu(low) is not None or self.other_os(low) is not None:
            return None
        for route in self.images:
            if route.match.search(low):
                ubuntu = textre.search(r"ubuntu(\d{2}\.\d{2})", low)
                image = route.rocm.format(
                    ubuntu=ubuntu.group(1) if ubuntu else self.default_ubuntu, rocm=self.rocm
                )
                return route, image
        return None

    def torch_index(self, version: str) -> TorchIndex | None:
        """The ROCm index of torch ``version`` (``2.1.2`` -> the 2.1 entry), or None."""
        m = textre.match(r"(\d+)\.(\d+)", version)
        if m is None:
            return None
        minor = f"{m.group(1)}.{m.group(2)}"
        return next((t for t in self.torch if t.minor == minor), None)


def _sourced(raw: dict[str, Any], where: str) -> tuple[tuple[str, ...], dt.date]:
    try:
        return sourced(raw, where)
    except ValueError as exc:
        raise GpuportError(f"{_FILE.name}: {exc}") from None


def _str(raw: dict[str, Any], key: str, where: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value:
        raise GpuportError(f"{_FILE.name}: {where}: {key} must be a non-empty string")
    return value


def parse(data: dict[str, Any]) -> PortRoutes:
    """Validate the loaded TOML (every entry sourced and dated, patterns that compile)."""
    defaults = data.get("defaults", {})
    _sourced(defaults, "defaults")
    images: list[ImageRoute] = []
    for i, raw in enumerate(data.get("image", [])):
        where = f"image #{i + 1}"
        extra = set(raw) - {"name", "match", "rocm", "kind", "summary", "sources", "checked"}
        if extra:
            raise GpuportError(f"{_FILE.name}: {where}: unknown keys {sorted(extra)}")
        sources, checked = _sourced(raw, where)
        try:
            pattern = textre.compile(_str(raw, "match", where))
            pattern.search("")  # compiled now: a bad pattern is refused here, not at first use
        except (re.error, textre.Unsupported) as exc:
            raise GpuportError(f"{_FILE.name}: {where}: bad pattern: {exc}") from None
        kind = _str(raw, "kind", where)
        if kind not in ("base", "framework"):
            raise GpuportError(f"{_FILE.name}: {where}: kind must be base or framework")
        images.append(
            ImageRoute(
                name=_str(raw, "name", where),
                match=pattern,
                rocm=_str(raw, "rocm", where),
                kind=kind,
                summary=_str(raw, "summary", where),
                sources=sources,
                checked=checked,
            )
        )
    torch: list[TorchIndex] = []
    for i, raw in enumerate(data.get("torch", [])):
        where = f"torch #{i + 1}"
        sources, checked = _sourced(raw, where)
        minor = _str(raw, "minor", where)
        if not textre.fullmatch(r"\d+\.\d+", minor):
            raise GpuportError(f"{_FILE.name}: {where}: minor must look like 2.1")
        torch.append(
            TorchIndex(
                minor=minor, index=_str(raw, "index", where), sources=sources, checked=checked
            )
        )
    return PortRoutes(
        rocm=_str(defaults, "rocm", "defaults"),
        default_ubuntu=_str(defaults, "default_ubuntu", "defaults"),
        images=tuple(images),
        torch=tuple(torch),
        ubuntu=_ubuntu(data, _str(defaults, "default_ubuntu", "defaults")),
        pytorch_images=_pytorch_images(data),
        apt_same=_apt_same(data),
    )


def _pytorch_images(data: dict[str, Any]) -> tuple[PytorchImage, ...]:
    out: list[PytorchImage] = []
    for i, raw in enumerate(data.get("pytorch_image", [])):
        where = f"pytorch_image #{i + 1}"
        sources, checked = _sourced(raw, where)
        python = _str(raw, "python", where)
        m = textre.fullmatch(r"3\.(\d+)", python)
        if m is None:
            raise GpuportError(f"{_FILE.name}: {where}: python must look like 3.12")
        ships = raw.get("ships")
        if not isinstance(ships, list) or not all(isinstance(x, str) for x in ships):
            raise GpuportError(f"{_FILE.name}: {where}: ships must be a list of names")
        out.append(
            PytorchImage(
                tag=_str(raw, "tag", where),
                python=(3, int(m.group(1))),
                ubuntu=_str(raw, "ubuntu", where),
                torch=_str(raw, "torch", where),
                ships=tuple(ships),
                sources=sources,
                checked=checked,
            )
        )
    return tuple(sorted(out, key=lambda p: p.python))


def _apt_same(data: dict[str, Any]) -> frozenset[str]:
    table = data.get("python_image")
    if table is None:
        return frozenset()
    if not isinstance(table, dict):
        raise GpuportError(f"{_FILE.name}: python_image must be a table")
    _sourced(table, "python_image")
    raw = table.get("apt_same")
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise GpuportError(f"{_FILE.name}: python_image: apt_same must be a list of names")
    return frozenset(raw)


def _ubuntu(data: dict[str, Any], default: str) -> tuple[str, ...]:
    """The ``[ubuntu]`` table's releases (sourced and dated like every entry); none when the
    table is absent."""
    table = data.get("ubuntu")
    if table is None:
        return ()
    if not isinstance(table, dict):
        raise GpuportError(f"{_FILE.name}: ubuntu must be a table")
    _sourced(table, "ubuntu")
    raw = table.get("releases")
    if not isinstance(raw, list) or not all(
        isinstance(x, str) and textre.fullmatch(r"\d{2}\.\d{2}", x) for x in raw
    ):
        raise GpuportError(f'{_FILE.name}: ubuntu: releases must be a list like ["22.04"]')
    if default not in raw:
        raise GpuportError(f"{_FILE.name}: ubuntu: default_ubuntu must be one of the releases")
    return tuple(raw)


@functools.cache
def load_port_routes() -> PortRoutes:
    """The bundled routes (read once)."""
    from gpuport.knowledge import _read_toml

    return parse(_read_toml(_FILE))
