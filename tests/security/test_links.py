"""Issue 14 items 1 and 2: links a project ships never make gpuport read or write outside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CUDA = "__global__ void k(float* x) { x[0] = 1.0f; }\nvoid f() { cudaMalloc(0, 0); }\n"


def _victim(tmp_path: Path) -> Path:
    home = tmp_path / "victimhome" / ".ssh"
    home.mkdir(parents=True)
    return home / "authorized_keys"


def test_dangling_backup_link_cannot_redirect_the_backup(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The authorized_keys attack: ``kernel.cu.gpuport.bak -> ../../victimhome/.ssh/...``."""
    keys = _victim(tmp_path)
    repo = tmp_path / "evilrepo" / "csrc"
    repo.mkdir(parents=True)
    (repo / "kernel.cu").write_text("ssh-ed25519 AAAA attacker\n" + CUDA)
    (repo / "kernel.cu.gpuport.bak").symlink_to("../../victimhome/.ssh/authorized_keys")
    assert not keys.exists()  # a dangling link: Path.exists() is False
    res = cli("hipify", str(tmp_path / "evilrepo"), "--in-place", "--hip-version", "6.4")
    assert res.code == 2
    assert "symbolic link" in res.err and "nothing written" in res.err
    assert not keys.exists()
    assert (repo / "kernel.cu").read_text().endswith(CUDA)  # untouched


def test_source_linking_outside_is_neither_read_nor_rewritten(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    victim = tmp_path / "victim" / "victim.cu"
    victim.parent.mkdir()
    victim.write_text(CUDA)
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "own.cu").write_text(CUDA)
    (proj / "link.cu").symlink_to("../victim/victim.cu")
    res = cli("hipify", str(proj), "--in-place", "--hip-version", "6.4", "--format", "json")
    assert res.code == 0, res.err
    assert victim.read_text() == CUDA
    assert not (proj / "link.cu.gpuport.bak").exists()
    assert "hipMalloc" in (proj / "own.cu").read_text()
    skipped = {s["path"]: s["reason"] for s in json.loads(res.out)["skipped"]}
    assert "outside" in skipped["link.cu"]


def test_link_inside_the_tree_is_read_but_not_written_through(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "real.cu").write_text(CUDA)
    (proj / "alias.cu").symlink_to("real.cu")
    res = cli("hipify", str(proj), "--in-place", "--hip-version", "6.4", "--format", "json")
    assert res.code == 0, res.err
    assert (proj / "alias.cu").is_symlink()
    assert "hipMalloc" in (proj / "real.cu").read_text()
    skipped = {s["path"]: s["reason"] for s in json.loads(res.out)["skipped"]}
    assert "not rewritten in place" in skipped["alias.cu"]


def test_out_dir_never_writes_through_links_already_there(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.cu").write_text(CUDA)
    (src / "sub").mkdir()
    (src / "sub" / "b.cu").write_text(CUDA)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim2.cu").write_text("victim\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.cu").symlink_to(outside / "victim2.cu")
    res = cli("hipify", str(src), "-o", str(out), "--hip-version", "6.4")
    assert res.code == 2
    assert "symbolic link" in res.err
    assert (outside / "victim2.cu").read_text() == "victim\n"
    (out / "a.cu").unlink()
    (out / "sub").symlink_to(outside)  # a folder link: sub/b.cu would land outside
    res = cli("hipify", str(src), "-o", str(out), "--hip-version", "6.4")
    assert res.code == 2
    assert "outside" in res.err
    assert sorted(p.name for p in outside.iterdir()) == ["victim2.cu"]
    assert not (out / "a.cu").exists()  # checked before the first file was written


def test_out_dir_does_not_copy_a_linked_machine_file(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.cu").write_text(CUDA)
    secret = tmp_path / "passwd"
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n")
    (src / "pw.h").symlink_to(secret)
    (src / "notes.txt").symlink_to(secret)
    out = tmp_path / "out"
    res = cli("hipify", str(src), "-o", str(out), "--hip-version", "6.4")
    assert res.code == 0, res.err
    assert not (out / "pw.h").exists()
    assert not (out / "notes.txt").exists()
    assert "pw.h" in res.out and "outside" in res.out


def _leaky_project(tmp_path: Path) -> tuple[Path, str]:
    secret = tmp_path / "machine" / "credentials"
    secret.parent.mkdir()
    token = "aws_secret_access_key = SECRET_TOKEN_123"  # noqa: S105 - a planted fake
    secret.write_text(f"root:x:0:0:root:/root:/bin/bash\n{token}\n")
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "requirements.txt").write_text("torch==2.3.0\n")
    (proj / "requirements-x.txt").symlink_to(secret)
    (proj / "linked.cu").symlink_to(secret)
    (proj / "linked.py").symlink_to(secret)
    return proj, "SECRET_TOKEN_123"


def test_scan_never_reads_links_that_leave_the_root(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    proj, token = _leaky_project(tmp_path)
    for fmt in ("terminal", "json", "sarif", "markdown"):
        res = cli("scan", str(proj), "--format", fmt)
        assert res.code in (0, 1), res.err
        assert token not in res.out and "root:x:0" not in res.out, fmt
    report = json.loads(cli("scan", str(proj), "--format", "json").out)
    skipped = {s["path"]: s["reason"] for s in report["skipped"]}
    for name in ("requirements-x.txt", "linked.cu", "linked.py"):
        assert skipped[name] == "symbolic link to outside the scanned folder: not read"


def test_assess_never_reads_links_that_leave_the_root(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    proj, token = _leaky_project(tmp_path)
    for fmt in ("json", "markdown"):
        res = cli("assess", str(proj), "--format", fmt)
        assert res.code in (0, 1), res.err
        assert token not in res.out and "root:x:0" not in res.out
    html = tmp_path / "report.html"
    assert cli("assess", str(proj), "--format", "html", "--output", str(html)).code in (0, 1)
    assert token not in html.read_text()
    assert "requirements-x.txt" in html.read_text()  # listed as not read


def test_project_settings_cannot_name_files_outside_the_project(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private_bench.json").write_text("{}")
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "gpuport.toml").write_text('bench = ["../outside/private_bench.json"]\n')
    res = cli("assess", str(proj), "--format", "json")
    assert res.code == 2
    assert "outside the project" in res.err
    (proj / "gpuport.toml").write_text('model_config = "config.json"\n')
    (proj / "config.json").symlink_to(outside / "private_bench.json")
    res = cli("assess", str(proj), "--format", "json")
    assert res.code == 2
    assert "outside the project" in res.err


@pytest.mark.parametrize("key", ["bench", "validate"])
def test_a_bare_name_in_project_settings_is_a_file_of_the_project(
    cli,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    key: str,  # type: ignore[no-untyped-def]
) -> None:
    """Ninth review: ``bench = ["secret"]`` (no "/", no ".json") was kept as a history id and
    then opened from the folder the user runs gpuport in: the error quoted the ``kind`` of any
    JSON file there, said whether a file existed, and listed the user's bench history."""
    cwd = tmp_path / "home"
    cwd.mkdir()
    (cwd / "secret").write_text('{"kind": "TOPSECRET_KIND", "token": "x"}')
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "k.cu").write_text("__global__ void k(float* x) { x[0] = 1; }\n")
    monkeypatch.chdir(cwd)
    for name in ("secret", "nonexistent"):
        (proj / "gpuport.toml").write_text(f'{key} = ["{name}"]\n')
        res = cli("assess", str(proj), "--format", "json")
        assert res.code == 2
        assert "TOPSECRET" not in res.out + res.err
        assert "history" not in res.err and "not JSON" not in res.err
        assert str(proj / name) in res.err  # looked for in the project, and said so


def test_a_named_file_that_links_out_of_its_folder_is_not_read(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Sixth review: ``hipify PROJ/kernel.cu`` (and ``scan``) followed the project's link to a
    file outside, which folder mode refuses; a link inside the folder is still read."""
    secret = tmp_path / "secret.cu"
    secret.write_text("int SECRET_TOKEN = 1;\n")
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "kernel.cu").symlink_to(secret)
    (proj / "real.cu").write_text("__global__ void k() {}\n")
    (proj / "inside.cu").symlink_to("real.cu")
    for args in (
        ("hipify", str(proj / "kernel.cu")),
        ("hipify", str(proj / "kernel.cu"), "-o", str(tmp_path / "out")),
        ("scan", str(proj / "kernel.cu"), "--format", "json"),
    ):
        res = cli(*args)
        assert res.code == 2, (args, res.out, res.err)
        assert "SECRET_TOKEN" not in res.out + res.err
        assert "symbolic link to outside" in res.err
    assert not (tmp_path / "out" / "kernel.cu").exists()
    res = cli("hipify", str(proj / "inside.cu"))
    assert res.code == 0 and "__global__ void k()" in res.out


@pytest.mark.parametrize("linked", [".github", ".github/workflows"])
def test_a_linked_ci_folder_out_of_the_project_is_not_read(
    cli, tmp_path: Path, linked: str
) -> None:  # type: ignore[no-untyped-def]
    """Fourteenth re-run, F5: ``.github -> /outside`` (or ``workflows``): the outside CI file
    was read as the project's own and quoted as its ROCm route, and the verdict was READY."""
    outside = tmp_path / "outside"
    (outside / "workflows").mkdir(parents=True)
    ci = "jobs:\n  t:\n    runs-on: [self-hosted, rocm]  # CANARY_7f3a9\n"
    (outside / "workflows" / "ci.yml").write_text(ci)
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "a.py").write_text("import torch\n")
    if linked == ".github":
        (proj / ".github").symlink_to(outside)
    else:
        (proj / ".github").mkdir()
        (proj / ".github" / "workflows").symlink_to(outside / "workflows")
    res = cli("scan", str(proj), "--no-progress", "-f", "json")
    assert "CANARY_7f3a9" not in res.out + res.err
    report = json.loads(res.out)
    assert not [r for r in report["routes"] if r["path"].startswith(".github")]
    assess = cli("assess", str(proj), "--no-progress", "-f", "json")
    assert "CANARY_7f3a9" not in assess.out + assess.err


def test_hipify_check_reads_no_build_file_through_a_linked_folder(tmp_path: Path) -> None:
    """The nearest Makefile of a unit is read inside the project only (fourteenth re-run,
    F5: the check read build files with their own folder as the bound)."""
    from gpuport.hipify.check import _from_build_files

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "Makefile").write_text("CFLAGS = -DCANARY_7f3a9 -I/secret\n")
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "sub").symlink_to(outside)
    assert _from_build_files(proj, proj / "sub" / "k.cu") in (None, ([], proj / "sub"))
