"""Which distributions a project requires, read from its manifests (issue 24).

A module that imports, at its top, an NVIDIA-only package that neither the package's own
requirements nor the project's ROCm route install is an optional backend: it cannot be
imported on the ROCm route, so nothing in it runs there (text-generation-webui's
``modules/tensorrt_llm.py`` loader, a CuTe-DSL kernel set chosen by a flag). This module only
collects names: every requirement-looking string of a manifest, with the line it is on, so
that a name is *declared* wherever it appears outside an optional extra. Reading more names
than there are requirements only keeps more findings; it never hides one.
"""

from __future__ import annotations

from gpuport import textre

__all__ = ["declared_names", "normalize"]

_REQ_LINE = textre.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_QUOTED = textre.compile(
    r"""["']([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]"']*\])?\s*(?=[<>=!~;@ ,"'])"""
)


def normalize(name: str) -> str:
    """PEP 503 normalisation: ``Tensorrt_LLM`` -> ``tensorrt-llm``."""
    return textre.sub(r"[-_.]+", "-", name).lower()


def declared_names(kind: str, text: str) -> dict[str, int]:
    """Requirement names of one manifest (normalised) -> the first line naming each.
    ``kind``: the file kind (``requirements``, ``pyproject``, ``setup.py``, ``setup.cfg``,
    ``conda-env``)."""
    out: dict[str, int] = {}
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if kind == "requirements":
            if stripped.startswith("-"):
                continue
            m = _REQ_LINE.match(stripped)
            if m:
                out.setdefault(normalize(m.group(1)), n)
        elif kind in ("setup.cfg", "conda-env"):
            m = _REQ_LINE.match(stripped.lstrip("- "))
            if m and "=" not in stripped.split(m.group(1), 1)[0]:
                out.setdefault(normalize(m.group(1)), n)
        else:
            for m in _QUOTED.finditer(line):
                out.setdefault(normalize(m.group(1)), n)
    return out
