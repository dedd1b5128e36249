"""Red team (issue 23, item 5): outputs that landed on the input.

* ``hipify p -o ..`` where ``p`` has a subfolder of its own name (``vllm/vllm``): the
  translation of ``p/p/a.cu`` was written over ``p/a.cu``, exit 0, no backup.
* ``--output`` (the report) onto one of the files the run reads or writes: the report replaced
  the CUDA source, or the translation just written.
Each is refused with a one-line error (exit 2) before anything is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

ORIGINAL = "// ORIGINAL TOP\n__global__ void k(float* p) { p[0] = 1.0f; }\n"
NESTED = "// NESTED\n__global__ void k(float* p) { p[0] = 2.0f; }\n"


def _nest(tmp_path: Path) -> Path:
    inner = tmp_path / "nest" / "p"
    (inner / "p").mkdir(parents=True)
    (inner / "a.cu").write_text(ORIGINAL)
    (inner / "p" / "a.cu").write_text(NESTED)
    return inner


def test_an_output_folder_that_holds_the_input_never_writes_into_it(
    cli: Any, tmp_path: Path
) -> None:
    inner = _nest(tmp_path)
    res = cli("hipify", str(inner), "-o", str(inner.parent))
    assert res.code == 2 and "holds the input" in res.err
    assert (inner / "a.cu").read_text() == ORIGINAL
    assert sorted(p.name for p in inner.parent.iterdir()) == ["p"]  # nothing written
    # an output folder beside the input is fine
    res = cli("hipify", str(inner), "-o", str(tmp_path / "out"))
    assert res.code == 0, res.err
    assert "NESTED" in (tmp_path / "out" / "p" / "a.cu").read_text()


def test_the_report_never_replaces_a_file_the_run_reads_or_writes(cli: Any, tmp_path: Path) -> None:
    inner = _nest(tmp_path)
    res = cli("hipify", str(inner), "-o", str(tmp_path / "o3"), "--output", str(inner / "a.cu"))
    assert res.code == 2 and "reads or writes" in res.err
    assert (inner / "a.cu").read_text() == ORIGINAL and not (tmp_path / "o3").exists()
    res = cli(
        "hipify", str(inner), "-o", str(tmp_path / "o4"), "--output", str(tmp_path / "o4/a.cu")
    )
    assert res.code == 2 and "reads or writes" in res.err
    one = tmp_path / "b.cu"
    one.write_text(ORIGINAL)
    res = cli("hipify", str(one), "--in-place", "--output", str(one))
    assert res.code == 2 and one.read_text() == ORIGINAL
    assert not (tmp_path / "b.cu.bak").exists()


def test_scan_never_writes_its_report_over_a_file_it_reads(cli: Any, tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "a.cu").write_text(ORIGINAL)
    (root / "m.py").write_text("import torch\n")
    for target in (root / "a.cu", root / "m.py"):
        res = cli("scan", str(root), "--output", str(target))
        assert res.code == 2 and "gpuport reads" in res.err
    res = cli("scan", str(root / "m.py"), "--output", str(root / "m.py"))
    assert res.code == 2 and "the file gpuport reads" in res.err
    assert (root / "a.cu").read_text() == ORIGINAL and (
        root / "m.py"
    ).read_text() == "import torch\n"
    # a report file inside the project (written again on the next run) is fine
    for _ in range(2):
        res = cli("scan", str(root), "--format", "json", "--output", str(root / "scan.json"))
        assert res.code == 0, res.err


def test_outputs_never_land_in_a_project_through_its_links_or_over_its_files(
    cli: Any, tmp_path: Path
) -> None:
    """Fourth review: ``port p -o p/a.cu`` and ``assess p -o p/requirements.txt`` replaced
    the project's file with the report; ``scan p -o p/reports/x.json``, ``reports`` a link
    the project ships, wrote outside it; ``hipify p -o p/hip_out`` (``hip_out -> ../home``)
    and ``hipify p -o ..`` wrote the whole tree, dotfiles too, over the user's files."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("# the user's\n")
    (home / "x.json").write_text("the user's\n")
    p = tmp_path / "p"
    p.mkdir()
    (p / "a.cu").write_text("__global__ void k(float* x) { x[0] = 1.0f; }\n")
    (p / "requirements.txt").write_text("torch==2.1.0+cu121\n")
    (p / ".bashrc").write_text("touch PWNED\n")
    (p / "reports").symlink_to(home)
    (p / "hip_out").symlink_to(home)
    for args in (
        ["port", str(p), "--output", str(p / "a.cu")],
        ["assess", str(p), "--output", str(p / "requirements.txt")],
        ["scan", str(p), "--output", str(p / "reports" / "x.json")],
        ["hipify", str(p), "-o", str(p / "hip_out")],
        ["hipify", str(p), "-o", str(tmp_path)],
    ):
        res = cli(*args)
        assert res.code == 2, (args, res.err)
    assert (home / ".bashrc").read_text() == "# the user's\n"
    assert (home / "x.json").read_text() == "the user's\n"
    assert (p / "a.cu").read_text().startswith("__global__")
    assert (p / "requirements.txt").read_text() == "torch==2.1.0+cu121\n"


def test_hipify_never_writes_through_a_link_above_its_output_nor_copies_a_git_file(
    cli: Any, tmp_path: Path
) -> None:
    """Fifth review: ``p/hip -> ../victim`` and ``hipify p -o p/hip/new`` (or ``--output
    p/hip/r.md``) wrote into victim/; a ``.git`` file (``gitdir: gitmeta``) beside a folder
    whose config sets ``core.fsmonitor`` was copied into the output, where any git command
    ran the project's command."""
    victim = tmp_path / "victim"
    victim.mkdir()
    p = tmp_path / "p"
    (p / "gitmeta").mkdir(parents=True)
    (p / "k.cu").write_text("__global__ void k() {}\n")
    (p / ".git").write_text("gitdir: gitmeta\n")
    (p / "gitmeta" / "config").write_text("[core]\n\tfsmonitor = touch PWNED\n")
    (p / "hip").symlink_to(victim)
    assert cli("hipify", str(p), "-o", str(p / "hip" / "new")).code == 2
    assert cli("hipify", str(p / "k.cu"), "--output", str(p / "hip" / "r.md")).code == 2
    assert list(victim.iterdir()) == []
    out = tmp_path / "out"
    assert cli("hipify", str(p), "-o", str(out)).code == 0
    assert not (out / ".git").exists() and (out / "gitmeta" / "config").exists()


def test_a_project_link_followed_by_dotdot_is_still_a_link(cli: Any, tmp_path: Path) -> None:
    """Red-team re-run 11: ``-o p/sub/../victim.txt`` with ``sub -> /elsewhere/inner`` shipped
    by the project. The check read the path as text (``sub/..`` gone) and saw no link; the
    kernel follows ``sub`` first, and the report replaced ``/elsewhere/victim.txt``."""
    p, elsewhere = tmp_path / "p", tmp_path / "elsewhere"
    (elsewhere / "inner").mkdir(parents=True)
    p.mkdir()
    victim = elsewhere / "victim.txt"
    victim.write_text("the user's\n")
    (p / "a.cu").write_text(ORIGINAL)
    (p / "sub").symlink_to(elsewhere / "inner")
    via = str(p / "sub" / ".." / "victim.txt")
    for args in (
        ["scan", str(p), "--format", "json", "-o", via],
        ["port", str(p), "-o", via],
        ["assess", str(p), "--no-progress", "--format", "json", "-o", via],
        ["hipify", str(p / "a.cu"), "--output", via],
        ["hipify", str(p), "-o", str(p / "sub" / ".." / "hipout")],
    ):
        res = cli(*args)
        assert res.code == 2 and "link" in res.err, (args, res.err)
    assert victim.read_text() == "the user's\n"
    assert sorted(x.name for x in elsewhere.iterdir()) == ["inner", "victim.txt"]
    # a `..` that walks no link stays the user's choice
    (tmp_path / "reports").mkdir()
    res = cli("scan", str(p), "--format", "json", "-o", str(p / ".." / "reports" / "r.json"))
    assert res.code in (0, 1) and (tmp_path / "reports" / "r.json").is_file()
