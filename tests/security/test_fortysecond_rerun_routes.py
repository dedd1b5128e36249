"""Forty-second re-run (red team 42), documented ROCm routes, findings F14, F15 and F16: a
visible line shaped like a Markdown link definition is shown text (its denial read); a
reStructuredText ``.. todo::`` body and a Markdown ``Todo:`` line are no working route; an
unreferenced link definition renders nothing and is no route, while a referenced one's
destination still names the wheel index.
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
_STEP = "docker run --device=/dev/kfd --device=/dev/dri rocm/pytorch"
_WHEELS = "https://download.pytorch.org/whl/rocm6.2"


def _counted(root: Path, files: dict[str, str]) -> tuple[list[str], str]:
    """The paths of the documented routes that count, and the verdict."""
    report = scan_files(root, {**_CUDA, **files})
    return [r.path for r in report.routes if r.counts], report.verdict.value


def test_f14_a_visible_line_shaped_like_a_link_definition_keeps_its_denial(
    tmp_path: Path,
) -> None:
    """``[Status]: AMD GPUs are not supported.`` has words after its "destination" that are
    no title: CommonMark shows it as a paragraph, so the page named for ROCm says support is
    absent and is no route; the same for a title opened and never closed (on the line or
    the next), whose paragraph is shown."""
    pages = (
        "# ROCm\n\n[Status]: AMD GPUs are not supported. Only NVIDIA.\n",
        "# ROCm\n\n[x]: https://example.com (AMD GPUs are not supported\nby this code.\n",
        "# ROCm\n\n[x]: https://example.com\n(AMD GPUs are not supported\nby this code.\n",
    )
    for i, page in enumerate(pages):
        counted, verdict = _counted(tmp_path / f"d{i}", {"docs/rocm.md": page})
        assert (counted, verdict) == ([], "blocked"), page
    # a page whose shown text states support still counts by its name
    page = "# ROCm\n\n[x]: https://example.com 'a link'\n\nAMD GPUs are supported.\n"
    assert _counted(tmp_path / "s", {"docs/rocm.md": page}) == (["docs/rocm.md"], "minor work")


def test_f15_a_todo_directive_or_todo_label_is_no_working_route(tmp_path: Path) -> None:
    """A ``.. todo::`` body (Sphinx hides it by default; a to-do either way) and a Markdown
    line labelled ``Todo:`` in any case are no route; the same step under a note counts."""
    hidden = (
        ("README.rst", f"Intro\n=====\n\nRuns on NVIDIA GPUs.\n\n.. todo::\n\n   {_STEP}\n"),
        ("README.rst", f"Intro\n=====\n\n.. TODO:: AMD GPUs:\n   {_STEP}\n\nA library.\n"),
        ("README.md", f"# k\n\nRuns on NVIDIA GPUs.\n\nTodo: {_STEP}\n"),
        ("README.md", f"# k\n\n- [ ] to-do (AMD): {_STEP}\n"),
    )
    for i, (name, text) in enumerate(hidden):
        assert _counted(tmp_path / f"h{i}", {name: text}) == ([], "blocked"), text
    shown = f"Intro\n=====\n\n.. note::\n\n   {_STEP}\n"
    assert _counted(tmp_path / "s", {"README.rst": shown}) == (["README.rst"], "minor work")


def test_f16_an_unreferenced_link_definition_is_no_install_step(tmp_path: Path) -> None:
    """A link definition nothing references renders nothing (the ``[//]: url`` comment idiom
    or any label): no route. Referenced, in any case of its label, its destination is the
    wheel index a reader follows: a route."""
    for i, label in enumerate(("//", "wheels")):
        text = f"# Tool\n\nRuns on NVIDIA GPUs.\n\n[{label}]: {_WHEELS}\n"
        assert _counted(tmp_path / f"h{i}", {"README.md": text}) == ([], "blocked"), text
    text = f"# Tool\n\nInstall the [wheels][Wheels] first.\n\n[wheels]: {_WHEELS} 'ROCm'\n"
    assert _counted(tmp_path / "s", {"README.md": text}) == (["README.md"], "minor work")
