"""Forty-fourth re-run (red team 44), documented ROCm routes, findings F14, F15, F16, F17 and
F20: a wrapped denial behind a parenthetical insertion is read; a roadmap or future-tense
sentence is a promise; AMD support through another API (DirectX 12, OpenGL, wgpu, Kompute)
names no ROCm build; MyST ``{only}`` / ``{ifconfig}`` and reST ``.. ifconfig::`` bodies a
build hides are not shown; a reference inside an indented code block makes no link.
"""

from __future__ import annotations

from pathlib import Path

from tests.scan.project_files import scan_files

#: a CUDA-only kernel with a blocker: "blocked" without a route, "minor work" with one
_CUDA = {
    "k.cu": (
        "#include <cuda_runtime.h>\n"
        "__global__ void k(unsigned *o){ unsigned m = __ballot_sync(0xffffffff, threadIdx.x&1);"
        " o[0]=m; }\n"
    ),
    "CMakeLists.txt": (
        "cmake_minimum_required(VERSION 3.18)\nproject(k LANGUAGES CXX CUDA)\nadd_library(k k.cu)\n"
    ),
}
_WHEELS = "[ROCm wheels]: https://download.pytorch.org/whl/rocm6.2\n"
_NONE = ([], "blocked")


def _counted(root: Path, files: dict[str, str]) -> tuple[list[str], str]:
    """The paths of the documented routes that count, and the verdict."""
    report = scan_files(root, {**_CUDA, **files})
    return [r.path for r in report.routes if r.counts], report.verdict.value


def _readme(root: Path, text: str) -> tuple[list[str], str]:
    return _counted(root, {"README.md": f"# k\n\nA small kernel library. {text}"})


def test_f14_a_wrapped_denial_after_a_long_insertion_is_no_route(tmp_path: Path) -> None:
    """ "ROCm is, as of the / 2.3 release of this library and its CUDA 12 builds, not
    available." denies the route: the insertion is neither distance nor another subject; a
    negation in a later clause about another subject still leaves the claim a route."""
    denied = (
        "Support for AMD GPUs through ROCm is, as of the\n"
        "2.3 release of this library and its CUDA 12 builds, not available.\n",
        "Support for AMD GPUs through ROCm (tracked in the issue about CUDA 12 and the\n"
        "newer NVIDIA drivers we also need to check) is not available.\n",
    )
    for i, text in enumerate(denied):
        assert _readme(tmp_path / f"d{i}", text) == _NONE, text
    claim = (
        "AMD GPUs are supported through ROCm, while the CUDA 12 builds for old\nWindows are not.\n"
    )
    assert _readme(tmp_path / "c", claim) == (["README.md"], "minor work")


def test_f15_a_roadmap_or_future_tense_sentence_is_a_promise(tmp_path: Path) -> None:
    """ "is on our roadmap", "will be added later this year", "in the next release", "we
    are working on" state no present support."""
    promises = (
        "Support for AMD GPUs through ROCm is on our roadmap.\n",
        "Support for AMD GPUs through ROCm will be added later this year.\n",
        "ROCm support is expected in the next release.\n",
        "We are working on ROCm support.\n",
    )
    for i, text in enumerate(promises):
        assert _readme(tmp_path / f"p{i}", text) == _NONE, text
    claim = "AMD GPUs are supported through ROCm.\n"
    assert _readme(tmp_path / "c", claim) == (["README.md"], "minor work")


def test_f16_amd_support_through_another_api_is_no_rocm_route(tmp_path: Path) -> None:
    """AMD support given through DirectX 12, OpenGL, wgpu or Kompute (any means that is no
    ROCm/HIP, nor a way of building or packaging this code) is no ROCm route; a means that
    names ROCm/HIP, a ROCm install or a build step, and a claim with no means, still are."""
    others = (
        "AMD GPUs are supported through the DirectX 12 backend.\n",
        "AMD GPUs are supported through the OpenGL compute backend.\n",
        "AMD GPUs are supported via Kompute.\n",
        "AMD GPUs are supported using wgpu.\n",
    )
    for i, text in enumerate(others):
        assert _readme(tmp_path / f"o{i}", text) == _NONE, text
    routes = (
        "AMD GPUs are supported through the HIP backend.\n",
        "AMD GPUs are supported via hipcc builds.\n",
        "We now support AMD GPUs (MI250X) through JIT fused-kernel compilation.\n",
        "It supports NVIDIA and AMD GPUs.\n",
    )
    for i, text in enumerate(routes):
        assert _readme(tmp_path / f"r{i}", text) == (["README.md"], "minor work"), text


def test_f17_myst_only_and_ifconfig_bodies_a_build_hides_are_not_shown(tmp_path: Path) -> None:
    """``:::{only} draft``, a MyST ``{ifconfig}`` and a reST ``.. ifconfig::`` whose
    ``conf.py`` value is false are not rendered; ``{only} html``, a true value, a name
    ``conf.py`` does not give, or one overridden with ``-D`` keep the body shown."""
    claim = "AMD GPUs are supported through ROCm."
    conf = {
        "docs/conf.py": 'extensions = ["myst_parser", "sphinx.ext.ifconfig"]\nrocm_ready = False\n'
    }

    def md(fence: str, directive: str) -> str:
        return f"# Install\n\n{fence}{directive}\n{claim}\n{fence}\n\nBuild with CMake.\n"

    def rst(expression: str) -> str:
        return (
            f"Install\n=======\n\n.. ifconfig:: {expression}\n\n   {claim}\n\nBuild with CMake.\n"
        )

    hidden = (
        {"docs/install.md": md(":::", "{only} draft")},
        {"docs/install.md": md("```", "{ifconfig} rocm_ready")},
        {"docs/install.md": "::::{note}\n" + md(":::", "{only} draft") + "::::\n"},
        {"docs/install.rst": rst("rocm_ready")},
    )
    for i, page in enumerate(hidden):
        assert _counted(tmp_path / f"h{i}", {**conf, **page}) == _NONE, page
    route = (["docs/install.md"], "minor work")
    assert _counted(tmp_path / "s0", {**conf, "docs/install.md": md(":::", "{only} html")}) == route
    assert _counted(tmp_path / "s1", {**conf, "docs/install.md": md("```", "{note}")}) == route
    rst_route = (["docs/install.rst"], "minor work")
    shown = (
        {"docs/conf.py": "rocm_ready = True\n"},
        {"docs/conf.py": "rocm_ready = os.environ.get('ROCM')\n"},
        {
            "docs/conf.py": "rocm_ready = False\n",
            "docs/Makefile": "html:\n\tsphinx-build -D rocm_ready=1 . _b\n",
        },
        {},
    )
    for i, extra in enumerate(shown):
        counted = _counted(tmp_path / f"t{i}", {"docs/install.rst": rst("rocm_ready"), **extra})
        assert counted == rst_route, extra


def test_f20_a_reference_inside_an_indented_code_block_makes_no_link(tmp_path: Path) -> None:
    """``    [ROCm wheels]`` in an indented code block makes no link, so the definition's
    wheel index is never shown; an indented paragraph continuation or list item text with
    the reference still shows it."""
    hidden = (
        f"# k\n\nExample notes file:\n\n    [ROCm wheels]\n    TODO\n\n{_WHEELS}",
        f"# k\n\n    notes\n\n    [ROCm wheels]\n\n{_WHEELS}",
    )
    for i, page in enumerate(hidden):
        assert _counted(tmp_path / f"h{i}", {"README.md": page}) == _NONE, page
    shown = (
        f"# k\n\nInstall from the\n    [ROCm wheels].\n\n{_WHEELS}",
        f"# k\n\n- Install:\n\n    from the [ROCm wheels].\n\n{_WHEELS}",
        f"# k\n\nInstall from the [ROCm wheels].\n\n{_WHEELS}",
    )
    for i, page in enumerate(shown):
        counted = _counted(tmp_path / f"s{i}", {"README.md": page})
        assert counted == (["README.md"], "minor work"), page
