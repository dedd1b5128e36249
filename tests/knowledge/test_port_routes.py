"""knowledge/port_routes.toml: every entry sourced and dated; lookups."""

from __future__ import annotations

import datetime as dt

import pytest

from gpuport.knowledge.port_routes import ImageRoute, TorchIndex, load_port_routes, parse
from gpuport.models import GpuportError


def test_every_entry_is_sourced_and_dated() -> None:
    routes = load_port_routes()
    assert routes.images and routes.torch
    entries: list[ImageRoute | TorchIndex] = [*routes.images, *routes.torch]
    for entry in entries:
        assert entry.sources and all(s.startswith("https://") for s in entry.sources)
        assert dt.date(2026, 1, 1) <= entry.checked <= dt.date.today()


def test_image_lookup() -> None:
    routes = load_port_routes()
    got = routes.image_for("nvidia/cuda:12.4.1-cudnn-devel-ubuntu24.04")
    assert got is not None and got[1] == f"rocm/dev-ubuntu-24.04:{routes.rocm}-complete"
    got = routes.image_for("nvcr.io/nvidia/pytorch:24.01-py3")
    assert got is not None and got[0].kind == "framework" and got[1].startswith("rocm/pytorch")
    assert routes.image_for("python:3.11-slim") is None
    assert routes.image_for("nvcr.io/nvidia/tritonserver:24.01-py3") is None
    got = routes.image_for("nvcr.io/nvidia/cuda:12.4.1-devel-ubuntu22.04")
    assert got is not None and got[1] == f"rocm/dev-ubuntu-22.04:{routes.rocm}-complete"
    assert routes.image_for("nvcr.io/nvidia/cuda:12.4.1-devel-ubi9") is None
    assert routes.other_os("nvidia/cuda:12.4.1-devel-rockylinux8") == "rockylinux8"
    assert routes.other_os("nvidia/cuda:12.4.1-devel-ubuntu22.04") is None
    assert routes.other_os("rocm/pytorch:latest") is None  # no route
    assert routes.other_os("nvcr.io/nvidia/pytorch:24.01-py3") is None  # framework image


def test_an_ubuntu_release_the_rocm_release_does_not_ship_has_no_image() -> None:
    routes = load_port_routes()
    assert set(routes.ubuntu) == {"22.04", "24.04"} and routes.default_ubuntu in routes.ubuntu
    old = "nvidia/cuda:10.0-cudnn7-devel-ubuntu18.04"
    assert routes.image_for(old) is None and routes.unshipped_ubuntu(old) == "18.04"
    assert routes.unshipped_ubuntu("nvidia/cuda:12.4.1-devel-ubuntu22.04") is None
    assert routes.unshipped_ubuntu("nvidia/cuda:12.4.1-devel") is None  # the default
    # a framework image names no Ubuntu release in its ROCm image: not concerned
    assert routes.unshipped_ubuntu("pytorch/pytorch:1.4-cuda10.1-cudnn7-ubuntu18.04") is None


def test_torch_index_by_release() -> None:
    routes = load_port_routes()
    assert routes.torch_index("2.1.2+cu118").index.endswith("/rocm5.6")  # type: ignore[union-attr]
    assert routes.torch_index("2.2").index.endswith("/rocm5.7")  # type: ignore[union-attr]
    assert routes.torch_index("1.7.1") is None
    assert routes.torch_index("not a version") is None


@pytest.mark.parametrize(
    "data, error",
    [
        ({"defaults": {"rocm": "6.4", "default_ubuntu": "22.04"}}, "sources"),
        (
            {
                "defaults": {
                    "rocm": "6.4",
                    "default_ubuntu": "22.04",
                    "sources": ["https://x"],
                    "checked": dt.date(2026, 1, 1),
                },
                "image": [
                    {
                        "name": "x",
                        "match": "(",
                        "rocm": "r",
                        "kind": "base",
                        "summary": "s",
                        "sources": ["https://x"],
                        "checked": dt.date(2026, 1, 1),
                    }
                ],
            },
            "bad pattern",
        ),
        (
            {
                "defaults": {
                    "rocm": "6.4",
                    "default_ubuntu": "22.04",
                    "sources": ["https://x"],
                    "checked": dt.date(2026, 1, 1),
                },
                "torch": [
                    {
                        "minor": "2.x",
                        "index": "https://i",
                        "sources": ["https://x"],
                        "checked": dt.date(2026, 1, 1),
                    }
                ],
            },
            "minor",
        ),
        (
            {
                "defaults": {
                    "rocm": "6.4",
                    "default_ubuntu": "20.04",
                    "sources": ["https://x"],
                    "checked": dt.date(2026, 1, 1),
                },
                "ubuntu": {
                    "releases": ["22.04"],
                    "sources": ["https://x"],
                    "checked": dt.date(2026, 1, 1),
                },
            },
            "default_ubuntu must be one of the releases",
        ),
        (
            {
                "defaults": {
                    "rocm": "6.4",
                    "default_ubuntu": "22.04",
                    "sources": ["https://x"],
                    "checked": dt.date(2026, 1, 1),
                },
                "ubuntu": {
                    "releases": "22.04",
                    "sources": ["https://x"],
                    "checked": dt.date(2026, 1, 1),
                },
            },
            "releases must be a list",
        ),
        (
            {
                "defaults": {
                    "rocm": "6.4",
                    "default_ubuntu": "22.04",
                    "sources": ["https://x"],
                    "checked": dt.date(2026, 1, 1),
                },
                "ubuntu": {"releases": ["22.04"]},
            },
            "sources",
        ),
    ],
)
def test_bad_entries_are_refused(data: dict[str, object], error: str) -> None:
    with pytest.raises(GpuportError, match=error):
        parse(data)
