"""Forty-third re-run (red team 43), documented ROCm routes, findings F8, F14, F15 and F16: a
denial or hedge wrapped onto the next line of its sentence is read (a negation in the next
sentence or about another subject is not); a link definition referenced only inside code
renders nothing; a stated plan ("we plan to support ... in a future release") is a promise;
the body of ``.. only:: draft`` is not in a default Sphinx build.
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


def _counted(root: Path, files: dict[str, str]) -> tuple[list[str], str]:
    """The paths of the documented routes that count, and the verdict."""
    report = scan_files(root, {**_CUDA, **files})
    return [r.path for r in report.routes if r.counts], report.verdict.value


def test_f8_a_denial_wrapped_onto_the_next_line_is_no_route(tmp_path: Path) -> None:
    """A paragraph that wraps "is / not available yet", "in theory, but this is not tested",
    or "ROCm: / not supported." denies support as the one-line sentence does; a negation in
    the next sentence, or after another subject ("while Intel GPUs are / not supported"),
    leaves the claim a route."""
    denied = (
        "A small library. Support for AMD GPUs through ROCm is\nnot available yet.\n",
        "It supports AMD GPUs through ROCm\nin theory, but this is not tested or supported.\n",
        "Support for AMD GPUs through ROCm:\nnot supported.\n",
    )
    for i, text in enumerate(denied):
        counted, verdict = _counted(tmp_path / f"d{i}", {"README.md": f"# k\n\n{text}"})
        assert (counted, verdict) == ([], "blocked"), text
    claims = (
        "AMD GPUs are supported through ROCm. Windows is\nnot supported.\n",
        "AMD GPUs are supported through ROCm, while Intel GPUs are\nnot supported yet.\n",
        "AMD GPUs are supported through ROCm 6 and later; see the docs for\nthe tested cards.\n",
    )
    for i, text in enumerate(claims):
        counted, verdict = _counted(tmp_path / f"c{i}", {"README.md": f"# k\n\n{text}"})
        assert (counted, verdict) == (["README.md"], "minor work"), text


def test_f14_a_link_definition_referenced_only_inside_code_is_no_route(tmp_path: Path) -> None:
    """``[ROCm wheels]`` inside a fenced code block or a code span makes no link, so the
    definition's wheel index URL is never shown; a reference in prose beside a code span (or
    after a closed fence) still shows it."""
    hidden = (
        f"# k\n\nA small library.\n\n```\n[ROCm wheels]\n```\n\n{_WHEELS}",
        f"# k\n\nWrite `[ROCm wheels]` in your notes.\n\n{_WHEELS}",
        f"# k\n\nA ``tick ` [ROCm wheels]`` span.\n\n{_WHEELS}",
    )
    for i, page in enumerate(hidden):
        assert _counted(tmp_path / f"h{i}", {"README.md": page}) == ([], "blocked"), page
    shown = (
        f"# k\n\nInstall with `pip` from the [ROCm wheels].\n\n{_WHEELS}",
        f"# k\n\n```\ncode\n```\nsee [ROCm wheels].\n\n{_WHEELS}",
        f"# k\n\nAn unclosed ` tick and the [ROCm wheels].\n\n{_WHEELS}",
    )
    for i, page in enumerate(shown):
        counted = _counted(tmp_path / f"s{i}", {"README.md": page})
        assert counted == (["README.md"], "minor work"), page


def test_f15_a_stated_plan_is_a_promise_not_a_route(tmp_path: Path) -> None:
    """ "We plan to support AMD GPUs through ROCm in a future release." and its kin state a
    plan; a present claim still counts."""
    plans = (
        "We plan to support AMD GPUs through ROCm in a future release.\n",
        "AMD GPUs through ROCm will be supported in a future version.\n",
        "We intend to support ROCm.\n",
    )
    for i, text in enumerate(plans):
        counted, verdict = _counted(tmp_path / f"p{i}", {"README.md": f"# k\n\n{text}"})
        assert (counted, verdict) == ([], "blocked"), text
    claim = "# k\n\nAMD GPUs are supported through ROCm.\n"
    assert _counted(tmp_path / "c", {"README.md": claim}) == (["README.md"], "minor work")


def test_f16_an_only_draft_body_is_not_shown_by_a_default_build(tmp_path: Path) -> None:
    """The body of ``.. only:: draft`` (or any expression no builder's tags make true) is
    not rendered by a default Sphinx build and is no route; ``.. only:: html``, ``not
    draft``, an expression that does not parse, and a ``draft`` tag the project's own
    ``conf.py`` or docs Makefile sets keep it shown."""

    def page(expression: str) -> str:
        return (
            f"Install\n=======\n\n.. only:: {expression}\n\n"
            "   AMD GPUs are supported through ROCm.\n\nBuild with CMake.\n"
        )

    for i, expression in enumerate(("draft", "draft and html", "internal or (draft and latex)")):
        counted = _counted(tmp_path / f"h{i}", {"docs/install.rst": page(expression)})
        assert counted == ([], "blocked"), expression
    route = (["docs/install.rst"], "minor work")
    for i, expression in enumerate(("html", "not draft", "latex or draft", "(draft")):
        counted = _counted(tmp_path / f"s{i}", {"docs/install.rst": page(expression)})
        assert counted == route, expression
    build_sets = (
        {"docs/conf.py": "tags.add('draft')\n"},
        {"docs/conf.py": "import os\ntags.add(os.environ['DOCS_TAG'])\n"},
        {"docs/Makefile": "html:\n\tsphinx-build -t draft -b html . _build\n"},
    )
    for i, extra in enumerate(build_sets):
        counted = _counted(tmp_path / f"t{i}", {"docs/install.rst": page("draft"), **extra})
        assert counted == route, extra
