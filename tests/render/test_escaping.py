"""Text from a scanned project cannot rewrite a terminal, inject Markdown or break SARIF."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from gpuport.models import GpuportError
from gpuport.render.interface import write_atomic
from gpuport.render.text import clean, md


def test_clean_makes_control_characters_visible() -> None:
    assert clean("a\x1b[31mred\x1b]8;;http://evil\x1b\\b") == (
        "a\\x1b[31mred\\x1b]8;;http://evil\\x1b\\b"
    )
    assert clean("tab\tand\nnewline") == "tab\tand\nnewline"
    assert clean("bidi\u202eoverride") == "bidi\\u202eoverride"


def test_clean_shows_zero_width_and_direction_marks_as_u_escapes() -> None:
    for char in ("\u200b", "\u200d", "\u200e", "\u200f", "\u061c", "\ufeff", "\u2066"):
        assert clean(f"a{char}b") == f"a\\u{ord(char):04x}b", repr(char)
    assert clean("nbsp\xa0and\x9b") == "nbsp\xa0and\\x9b"  # only C1 controls below U+0100
    assert clean("caf\u00e9 \u4e2d") == "caf\u00e9 \u4e2d"  # ordinary text is kept


def test_md_neutralises_links_html_and_cells() -> None:
    cell = md("x|y`z[a](http://evil)<img src=x onerror=alert(1)>&amp;\nnext")
    assert "[a](" not in cell and "<img" not in cell and "\n" not in cell
    assert "\\|" in cell and "\\`" in cell and "&lt;img" in cell and "&amp;amp;" in cell


def _hostile_project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "esc\x1b[31mRED\x1b[0m.py").write_text("import pynvml\n")
    (root / "[bold]x[reset].py").write_text("import pynvml\n")
    (root / "sp ace #1%.py").write_text("import pynvml\n")
    (root / "requirements.txt").write_text(
        "https://e.com/x|y`z[a](http://evil)/torch-2.1+cu121-cp311-linux_x86_64.whl\n"
    )
    return root


def test_terminal_output_has_no_raw_escape_sequences(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    res = cli("scan", str(_hostile_project(tmp_path)), "--no-progress")
    assert res.code == 0
    assert "\x1b" not in res.out
    assert "\\x1b[31mRED" in res.out
    assert "[bold]x[reset].py" in res.out  # shown literally, not as markup


def test_markdown_output_has_no_live_links(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    res = cli("scan", str(_hostile_project(tmp_path)), "--format", "markdown")
    assert "[a](http://evil)" not in res.out  # would render as a link
    assert "\\[a\\](http://evil)" in res.out  # escaped brackets render as text
    assert "\x1b" not in res.out


def test_sarif_uris_are_percent_encoded_and_based(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    res = cli("scan", str(_hostile_project(tmp_path)), "--format", "sarif")
    doc = json.loads(res.out)
    run = doc["runs"][0]
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
    }
    assert "sp%20ace%20%231%25.py" in uris
    assert run["originalUriBaseIds"]["SRCROOT"]["uri"].startswith("file://")


def test_sarif_uris_are_relative_to_the_current_directory(cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text("import pynvml\n")
    monkeypatch.chdir(tmp_path)
    doc = json.loads(cli("scan", "src", "--format", "sarif").out)
    loc = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc["uri"] == "src/m.py"
    assert (
        doc["runs"][0]["originalUriBaseIds"]["SRCROOT"]["uri"] == tmp_path.resolve().as_uri() + "/"
    )


def test_write_atomic_keeps_mode_and_refuses_symlinks(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    os.chmod(real, 0o640)
    write_atomic(real, "new")
    assert real.read_text() == "new"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    link = tmp_path / "link.json"
    link.symlink_to(real)
    with pytest.raises(GpuportError, match="symbolic link"):  # never written through (issue 14)
        write_atomic(link, "other")
    assert link.is_symlink()
    assert real.read_text() == "new"
    fresh = tmp_path / "fresh.json"
    umask = os.umask(0o022)
    try:
        write_atomic(fresh, "x")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o644


def test_non_finite_max_file_size_is_a_usage_error(cli) -> None:  # type: ignore[no-untyped-def]
    for value in ("nan", "inf", "-1"):
        res = cli("scan", ".", "--max-file-size", value)
        assert res.code == 2, value
        assert "--max-file-size" in res.err


@pytest.mark.parametrize("command", ["scan", "assess"])
def test_json_output_carries_no_raw_c1_or_bidi_characters(
    cli, tmp_path: Path, command: str
) -> None:  # type: ignore[no-untyped-def]
    """JSON escapes only C0 controls: a name holding U+009B (a C1 CSI, an escape sequence to
    xterm) or U+202E reached the terminal raw through `--format json` (red-team re-run 11).
    They are \\u escapes now; the parsed document keeps the names exactly."""
    root = tmp_path / "p"
    root.mkdir()
    csi, rlo = "a\u009b31mred.py", "b\u202eyp.py"
    for name in (csi, rlo):
        (root / name).write_text("import pynvml\n", encoding="utf-8")
    res = cli(command, str(root), "--format", "json")
    assert res.code in (0, 1)
    assert "\u009b" not in res.out and "\u202e" not in res.out
    assert "\\u009b" in res.out and "\\u202e" in res.out
    text = json.dumps(json.loads(res.out), ensure_ascii=False)
    assert csi in text and rlo in text


def test_no_compact_line_starts_a_ci_workflow_command(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Red-team re-run 11: a file named `::error title=Forged::all tests passed.cu` made the
    compact report (the Action's log) print a line GitHub's runner reads as a workflow
    command. The place keeps its name behind `./`; the Action also stops commands while the
    report prints."""
    root = tmp_path / "p"
    root.mkdir()
    for name in ("::error title=Forged::passed.cu", "::add-mask::GP302.cu"):
        (root / name).write_text(
            "__global__ void k(float* x) { x[0] = __shfl_down_sync(0xffffffff, x[0], 16); }\n"
        )
    res = cli("scan", str(root), "--format", "compact")
    lines = res.out.splitlines()
    assert any(line.startswith("./::error title=Forged::passed.cu:") for line in lines)
    assert not any(line.startswith("::") for line in lines)
    from tests.conftest import REPO

    action = (REPO / "action.yml").read_text(encoding="utf-8")
    stop, scan, resume = (
        action.index('echo "::stop-commands::$token"'),
        action.index("--format compact"),
        action.index('echo "::$token::"'),
    )
    assert stop < scan < resume


def test_hipify_diff_to_a_terminal_shows_escapes_and_stays_exact_when_piped(tmp_path: Path) -> None:
    """Red-team re-run 11: `hipify FILE --diff` wrote a source line's OSC 52 (clipboard) and
    clear-screen sequences to the terminal as they were. To a terminal they are shown; piped
    to `patch`, the diff keeps the bytes."""
    import pty
    import subprocess
    import sys

    src = tmp_path / "k.cu"
    src.write_text("// \x1b]52;c;cHduZWQ=\x07 \x1b[2J\nvoid f(float* p) { cudaMalloc(&p, 4); }\n")
    argv = [sys.executable, "-m", "gpuport", "hipify", str(src), "--diff"]
    piped = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)
    assert piped.returncode == 0, piped.stderr
    assert (
        "\x1b]52;c;cHduZWQ=\x07" in piped.stdout and "+void f(float* p) { hipMalloc" in piped.stdout
    )
    main, sub = pty.openpty()
    proc = subprocess.Popen(argv, stdout=sub, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    os.close(sub)
    shown = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the other side closed
            break
        if not chunk:
            break
        shown += chunk
    proc.wait(timeout=120)
    os.close(main)
    text = shown.decode("utf-8", "replace")
    assert "hipMalloc" in text
    assert "\x1b]52" not in text and "\\x1b]52;c;cHduZWQ=\\x07" in text


def test_compare_written_to_line_is_the_real_name(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Red-team re-run 11: `compare -o 'q[/b]z.json'` wrote the file, then rich read the name
    as markup: an internal error, exit 4 (`y[bold red]z.json` was reported as `yz.json`)."""
    from tests.conftest import REPO

    runs = sorted((REPO / "examples" / "bench").glob("*.json"))[:2]
    folder = tmp_path / "q["
    folder.mkdir()
    out = folder / "b]y[bold red]z.json"  # the path reads "q[/b]y[bold red]z.json"
    res = cli("compare", *map(str, runs), "--format", "json", "-o", str(out))
    assert res.code == 0, res.err
    assert out.is_file() and "q[/b]y[bold red]z.json" in res.err
