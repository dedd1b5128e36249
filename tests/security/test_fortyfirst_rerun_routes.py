"""Forty-first re-run (red team 41), documented ROCm routes: text a reader of the rendered
page does not see (a Markdown or AsciiDoc comment, an indented reStructuredText comment,
struck-out text, a page of comments only) and a denial written as a contraction is no route;
the same steps shown, and stated support, still are.
"""

from __future__ import annotations

import time
from pathlib import Path

from gpuport.scan import ScanOptions, scan_path
from gpuport.scan.project.route_code import code_routes
from gpuport.scan.project.routes_docs import doc_routes
from tests.scan.project_files import write

_KERNEL = (
    "#include <cuda_runtime.h>\n"
    "__global__ void k(unsigned *o){ unsigned m = __ballot_sync(0xffffffff, threadIdx.x&1);"
    " o[0]=m; }\n"
)
_CMAKE = (
    "cmake_minimum_required(VERSION 3.18)\nproject(k LANGUAGES CXX CUDA)\nadd_library(k k.cu)\n"
)
_STEP = "docker run --device=/dev/kfd --device=/dev/dri rocm/pytorch"


def _routes(root: Path, files: dict[str, str]) -> list[str]:
    """The documented evidence that counts as a route, as ``path: detail``."""
    return [f"{r.path}: {r.detail}" for r in doc_routes(write(root, files)) if r.counts]


def test_f2_a_markdown_or_asciidoc_comment_is_no_route(tmp_path: Path) -> None:
    """Markdown's link-definition comment idiom, in its spellings, and AsciiDoc's comment
    block, comment line and [comment] paragraph show nothing: no route. A definition inside a
    paragraph is shown text, a link definition's destination still names a wheel index, and
    a step in an AsciiDoc listing block is shown."""
    hidden = (
        ("README.md", f"# k\n\nA library.\n\n[//]: # (AMD GPUs: {_STEP})\n"),
        ("README.md", f"# k\n\n[comment]: <> (AMD GPUs: {_STEP})\n"),
        ("README.md", f"# k\n\n[//]: #(AMD GPUs: {_STEP})\n"),
        ("README.md", f'# k\n\n[//]: # "AMD GPUs: {_STEP}"\n'),
        ("README.md", f"# k\n\n[//]: # (AMD GPUs, later:\n{_STEP}\n)\n\nA library.\n"),
        ("README.adoc", f"= k\n\nA library.\n\n////\nAMD GPUs: {_STEP}\n////\n"),
        ("README.adoc", f"= k\n\nA library.\n\n// AMD GPUs: {_STEP}\n"),
        ("README.adoc", f"= k\n\n[comment]\nAMD GPUs:\n{_STEP}\n\nA library.\n"),
    )
    for i, (name, text) in enumerate(hidden):
        assert _routes(tmp_path / f"h{i}", {name: text}) == [], text
    shown = (
        ("README.md", f"# k\n\nAMD GPUs, with Docker:\n[//]: # (AMD GPUs: {_STEP})\n"),
        # a link definition the page uses (forty-second re-run F16: an unused one never shows)
        (
            "README.md",
            "# k\n\nInstall the [ROCm wheels][wheels].\n\n"
            "[wheels]: https://download.pytorch.org/whl/rocm6.2 'ROCm'\n",
        ),
        ("README.adoc", f"= k\n\nAMD GPUs:\n\n----\n// a comment in code\n{_STEP}\n----\n"),
    )
    for i, (name, text) in enumerate(shown):
        assert _routes(tmp_path / f"s{i}", {name: text}), text
    root = write(tmp_path / "v", {"k.cu": _KERNEL, "CMakeLists.txt": _CMAKE})
    (root / "README.md").write_text(hidden[0][1])
    assert scan_path(root, ScanOptions(jobs=1)).verdict.value == "blocked"


def test_f8_a_rocm_page_of_comments_or_headings_only_is_no_route(tmp_path: Path) -> None:
    """docs/rocm.md that holds only a comment (or a heading over one) shows nothing: no route
    by its name, and it says why; a page so named with text still is one."""
    empty = (
        "<!-- TODO: write the ROCm install guide once the kernels are ported -->\n",
        "# ROCm\n\n<!-- to be written -->\n",
        "ROCm\n====\n\n.. to be written\n",
        f"# AMD GPUs\n\n[//]: # ({_STEP})\n",
    )
    for i, page in enumerate(empty):
        name = "docs/rocm.rst" if "====" in page else "docs/rocm.md"
        found = doc_routes(write(tmp_path / f"e{i}", {name: page}))
        assert [r.counts for r in found] == [False], page
        assert "shows nothing but headings" in found[0].why
    for i, page in enumerate(("# AMD GPUs\n\nSee the build guide.\n", f"<!-- x -->\n{_STEP}\n")):
        assert _routes(tmp_path / f"y{i}", {"docs/rocm.md": page}), page
    root = write(tmp_path / "v", {"k.cu": _KERNEL, "CMakeLists.txt": _CMAKE})
    write(root, {"docs/rocm.md": empty[0]})
    assert scan_path(root, ScanOptions(jobs=1)).verdict.value == "blocked"


def test_f9_struck_out_text_is_no_route(tmp_path: Path) -> None:
    """~~...~~ (over two lines too), GitHub's ~...~, <del>, <s> and <strike> withdraw the
    step: no route. A tilde that strikes nothing (~/path, "~10x ... ~8x") hides nothing."""
    struck = (
        f"~~AMD GPUs: {_STEP}~~\n",
        f"~~AMD GPUs:\n{_STEP}~~ (withdrawn)\n",
        f"~AMD GPUs: {_STEP}~\n",
        f"<del>AMD GPUs: {_STEP}</del>\n",
        f"<s>AMD GPUs:\n{_STEP}</s>\n",
        f"<strike>AMD GPUs: {_STEP}\n",
    )
    for i, line in enumerate(struck):
        assert _routes(tmp_path / f"x{i}", {"README.md": f"# k\n\n{line}"}) == [], line
    kept = (
        f"AMD GPUs (~2x faster than ~/old): {_STEP}\n",
        f"~10x faster on A100 and ~8x on MI250: {_STEP}\n",
        f"~~old~~ AMD GPUs: {_STEP}\n",
    )
    for i, line in enumerate(kept):
        assert _routes(tmp_path / f"k{i}", {"README.md": f"# k\n\n{line}"}), line


def test_f14_a_denial_in_any_spelling_is_no_route(tmp_path: Path) -> None:
    """Contractions (straight, curly or no apostrophe), "never", "no support for", "lacks
    support" deny support in a README and in an installer's strings; stated support and a
    real installer still count."""
    wheel = "pip install torch --index-url https://download.pytorch.org/whl/rocm6.0"
    denials = (
        f"ROCm isn't supported: {wheel} installs but our kernels crash.",
        f"AMD GPUs aren't supported ({_STEP} fails at import).",
        f"AMD GPUs won't work: {_STEP} crashes.",
        f"AMD GPUs can’t run it: {_STEP} crashes.",
        f"There is no support for AMD GPUs: {_STEP} crashes.",
        f"ROCm isnt supported: {wheel} crashes.",
        f"AMD will never be supported ({wheel} crashes).",
        f"This build lacks ROCm support: {wheel} crashes.",
        "AMD GPUs aren't supported.",
    )
    for i, line in enumerate(denials):
        assert _routes(tmp_path / f"d{i}", {"README.md": f"# k\n\n{line}\n"}) == [], line
    for i, line in enumerate(("Runs on AMD GPUs too.", f"AMD GPUs: {wheel}")):
        assert _routes(tmp_path / f"s{i}", {"README.md": f"# k\n\n{line}\n"}), line
    pip = 'import subprocess\nsubprocess.check_call(["pip", "install", "-r", "r.txt"])\n'
    for i, msg in enumerate(
        ("AMD GPUs aren't supported: torch+rocm6.0 crashes", "ROCm won't work: +rocm6.0")
    ):
        root = write(tmp_path / f"i{i}", {"install.py": f'print("{msg}")\n' + pip})
        assert code_routes(root, ["install.py"]) == [], msg
    real = pip + 'subprocess.check_call(["pip", "install", "onnxruntime-rocm==1.22"])\n'
    assert code_routes(write(tmp_path / "r", {"install.py": real}), ["install.py"])
    root = write(tmp_path / "v", {"k.cu": _KERNEL, "CMakeLists.txt": _CMAKE})
    write(root, {"README.md": f"# k\n\n{denials[0]}\n"})
    assert scan_path(root, ScanOptions(jobs=1)).verdict.value == "blocked"


def test_f17_an_indented_rst_comment_is_no_route(tmp_path: Path) -> None:
    """A reST comment inside a list item or a directive's body hides its block; a code
    block inside a list item, a literal block and text after an empty comment are shown."""
    hidden = (
        "* NVIDIA GPUs: ``pip install k``\n\n"
        "  .. AMD GPUs, disabled until the kernels are ported:\n"
        f"     {_STEP}\n\n* CPU: not supported.\n",
        f".. note::\n\n   NVIDIA only for now.\n\n   .. AMD GPUs:\n      {_STEP}\n",
        f"* NVIDIA\n\n\t..\n\t   AMD GPUs: {_STEP}\n",
    )
    for i, body in enumerate(hidden):
        text = f"k\n=\n\nA library.\n\n{body}"
        assert _routes(tmp_path / f"h{i}", {"README.rst": text}) == [], body
    shown = (
        f"* AMD GPUs:\n\n  .. code-block:: bash\n\n     {_STEP}\n",
        f"AMD GPUs::\n\n    .. a literal line\n    {_STEP}\n",
        f"..\n\n   AMD GPUs: {_STEP}\n",
    )
    for i, body in enumerate(shown):
        text = f"k\n=\n\nA library.\n\n{body}"
        assert _routes(tmp_path / f"s{i}", {"README.rst": text}), body
    root = write(tmp_path / "v", {"k.cu": _KERNEL, "CMakeLists.txt": _CMAKE})
    write(root, {"README.rst": f"k\n=\n\n{hidden[0]}"})
    assert scan_path(root, ScanOptions(jobs=1)).verdict.value == "blocked"


def test_a_megabyte_of_comment_and_strike_markup_reads_in_linear_time(tmp_path: Path) -> None:
    """Unclosed strikes, tildes, link-definition titles and reST comment openers, a megabyte
    of each page, read in well under a second each; the struck step at the end is no route."""
    n = 40_000
    pages = {
        "README.md": "~~a ~b <s x [//]: # (\n" * n + f"~~AMD GPUs: {_STEP}~~\n",
        "docs/guide.md": "[x]: # (\n" * n + f"<del>AMD GPUs: {_STEP}</del>\n",
        "docs/rocm.rst": "  .. x\n ..\n" * n,
        "README.adoc": "////\n[comment]\n--\n" * n + "////\n// x\n" * n,
    }
    root = write(tmp_path, pages)
    start = time.perf_counter()
    found = doc_routes(root)
    assert time.perf_counter() - start < 2.0
    assert not [r for r in found if r.counts]
