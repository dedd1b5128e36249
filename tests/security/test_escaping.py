"""Issue 14 item 8: names and labels from a project or a run never drive the terminal or
become live Markdown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuport.render.text import clean_line

CUDA = "__global__ void k(float* x) { x[0] = 1.0f; }\nvoid f() { cudaMalloc(0, 0); }\n"
HOSTILE = [
    "a\x1b[31mred.cu",
    "b\x1b]0;TITLE\x07.cu",
    "c\x1b[2J.cu",
    "d\u202eevil.cu",
    "e\ngpuport scan: ready.cu",
    "f<img src=x onerror=alert(1)>.cu",
    "g<script>alert(2)<\\script>.cu",
]


@pytest.fixture
def hostile_tree(tmp_path: Path) -> Path:
    proj = tmp_path / "names"
    proj.mkdir()
    for name in HOSTILE:
        (proj / name).write_text(CUDA + 'void g() { asm("nop"); }\n')
    return proj


def _no_controls(text: str) -> None:
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text


def test_hipify_terminal_and_stderr_are_clean(cli, hostile_tree: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    res = cli("hipify", str(hostile_tree), "-o", str(tmp_path / "out"), "--hip-version", "6.4")
    assert res.code == 0, res.err
    _no_controls(res.out + res.err)
    assert "gpuport scan: ready" not in [ln.strip() for ln in res.out.splitlines()]
    assert "\\x1b" in res.out and "\\u202e" in res.out  # shown, made visible


def test_hipify_diff_headers_are_clean(cli, hostile_tree: Path) -> None:  # type: ignore[no-untyped-def]
    res = cli("hipify", str(hostile_tree), "--diff", "--hip-version", "6.4")
    assert res.code == 0, res.err
    headers = [ln for ln in res.out.splitlines() if ln.startswith(("--- ", "+++ "))]
    assert len(headers) == 2 * len(HOSTILE)
    _no_controls("\n".join(headers) + res.err)


def test_hipify_markdown_has_no_live_html(cli, hostile_tree: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from markdown_it import MarkdownIt

    res = cli(
        "hipify", str(hostile_tree), "-o", str(tmp_path / "out"), "--format", "markdown",
        "--hip-version", "6.4",
    )  # fmt: skip
    assert res.code == 0, res.err
    html = MarkdownIt("commonmark").enable("table").render(res.out)
    assert "<img" not in html and "<script" not in html and "<svg" not in html
    assert "&lt;img" in html  # the name is still there, as text
    _no_controls(res.out)


def test_hipify_json_keeps_names_exact(cli, hostile_tree: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    res = cli(
        "hipify", str(hostile_tree), "-o", str(tmp_path / "out"), "--format", "json",
        "--hip-version", "6.4",
    )  # fmt: skip
    assert res.code == 0, res.err
    assert sorted(f["path"] for f in json.loads(res.out)["files"]) == sorted(HOSTILE)


def test_error_messages_are_one_clean_line(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A run label or a file name with escape codes echoed in an error (cost, history)."""
    label = "x\x1b[2J\x1b]0;pwn\x07\nforged line"
    for args in (("compare", label, "other"), ("cost", "--bench", label, "--model", "llama-3-8b")):
        res = cli(*args)
        assert res.code == 2, res.err
        _no_controls(res.err)
        assert len(res.err.strip().splitlines()) == 1, res.err


def test_clean_line_makes_every_hazard_visible() -> None:
    assert clean_line("a\x1b[31m\u202e\nb\tc\r") == "a\\x1b[31m\\u202e\\nb\\tc\\x0d"


@pytest.mark.parametrize("command", ["scan", "hipify", "assess"])
def test_a_newline_in_a_file_name_never_starts_a_line(cli, tmp_path: Path, command: str) -> None:  # type: ignore[no-untyped-def]
    """Issue 23: a file named ``a\\nFORGED LINE.cu`` printed FORGED LINE at the start of a
    terminal line in scan's table, hipify's wave64 lines and assess's evidence."""
    proj = tmp_path / "p"
    proj.mkdir()
    (proj / "a\nFORGED LINE.cu").write_text(
        "__global__ void k(float* x) { x[0] = __shfl_xor_sync(0xffffffff, x[0], 1); }\n"
    )
    (proj / "b.py").write_text("import torch\n")
    extra = {
        "scan": [],
        "hipify": ["-o", str(tmp_path / "out"), "--hip-version", "6.4", "--wave64", "fix"],
        "assess": ["--no-progress"],
    }[command]
    res = cli(command, str(proj), *extra)
    assert res.code in (0, 1), res.err
    for line in (res.out + res.err).splitlines():
        assert not line.lstrip("│ ").startswith("FORGED"), line
    assert "a\\nFORGED" in res.out + res.err


def test_a_newline_in_a_run_label_never_starts_a_line(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = Path(__file__).resolve().parents[2]
    data = json.loads((repo / "examples" / "bench" / "cpu-1-thread.json").read_text())
    data["label"] = "x\nFORGED LINE"
    data["device"]["name"] = "cpu\nFORGED DEVICE"
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(data))
    other = str(repo / "examples" / "bench" / "cpu-2-threads.json")
    res = cli("compare", str(forged), other, "--accept-edited")
    assert res.code in (0, 1), res.err
    for line in (res.out + res.err).splitlines():
        assert not line.lstrip("│┃ ").startswith("FORGED"), line
