"""Project-wide facts of a scan: own packages, one finding per rule per line, empty scans."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.models import GpuportError, Location, Severity
from gpuport.scan import ScanOptions, scan_path
from gpuport.scan.engine import one_per_line
from gpuport.scan.finding import Finding
from gpuport.scan.project.own_names import own_packages

# awq and megatron are in the knowledge base (no ROCm build / partial): a project importing
# them as a third party must still be told, a project that *is* them must not.
AWQ_USER = "from awq import AutoAWQForCausalLM\nimport megatron.core\n"


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _rules(root: Path, **kw: object) -> list[tuple[str, str]]:
    report = scan_path(root, ScanOptions(jobs=1, **kw))  # type: ignore[arg-type]
    return [(f.rule_id, f.location.path) for f in report.findings]


def test_own_package_imports_are_not_dependencies(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "setup.py": "from setuptools import setup\nsetup(name='autoawq', packages=['awq'])\n",
            "awq/__init__.py": "from awq.models import auto\n",
            "awq/models/__init__.py": "",
            "awq/models/auto.py": "from awq.quantize import q\nimport awq\n",
            "examples/run.py": "from awq import AutoAWQForCausalLM\n",
            # a third party imported beside the own package is still reported
            "awq/models/mega.py": "import megatron.core\n",
        },
    )
    report = scan_path(root, ScanOptions(jobs=1))
    assert "awq" in report.own_packages
    hits = {(f.rule_id, f.location.path) for f in report.findings if f.rule_id.startswith("GP20")}
    assert hits == {("GP202", "awq/models/mega.py")}


def test_the_same_imports_in_another_project_are_reported(tmp_path: Path) -> None:
    root = _write(tmp_path, {"app.py": AWQ_USER, "pyproject.toml": "[project]\nname='app'\n"})
    got = _rules(root)
    assert ("GP201", "app.py") in got
    assert ("GP202", "app.py") in got


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"src/awq/__init__.py": "", "pyproject.toml": "[project]\nname='autoawq'\n"}, {"awq"}),
        ({"megatron/core/__init__.py": "", "setup.py": ""}, {"megatron"}),  # namespace package
        ({"model.py": "", "train.py": "", "setup.py": ""}, {"model", "train"}),  # flat scripts
        (
            {
                "pyproject.toml": "[tool.setuptools.packages.find]\nwhere = ['python']\n",
                "python/awq/__init__.py": "",
            },
            {"awq"},
        ),
        ({"docs/conf.py": "", "scripts/run.sh": "", "README.md": ""}, set()),
    ],
)
def test_own_packages_layouts(tmp_path: Path, files: dict[str, str], expected: set[str]) -> None:
    assert set(own_packages(_write(tmp_path, files))) == expected


def test_sub_project_packages_and_scanning_inside_a_package(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "hopper/setup.py": "",
            "hopper/flash_attn_interface.py": "",
            "pkg/__init__.py": "",
            "pkg/sub/__init__.py": "",
        },
    )
    assert "flash_attn_interface" in own_packages(root, [root / "hopper"])
    assert "pkg" in own_packages(root / "pkg" / "sub")


def _finding(rule: str, line: int, col: int, sev: Severity = Severity.MAJOR) -> Finding:
    return Finding(
        rule_id=rule,
        title="t",
        severity=sev,
        location=Location(path="a.py", line=line, column=col),
        message=f"at {col}",
        fix="f",
    )


def test_one_finding_per_rule_per_line_keeps_the_most_severe_and_says_so() -> None:
    got = one_per_line(
        [
            _finding("GP205", 3, 4),
            _finding("GP205", 3, 20, Severity.BLOCKER),
            _finding("GP205", 3, 30),
            _finding("GP206", 3, 4),
            _finding("GP205", 4, 4),
        ]
    )
    assert [(f.rule_id, f.location.line, f.severity) for f in got] == [
        ("GP205", 3, Severity.BLOCKER),
        ("GP206", 3, Severity.MAJOR),
        ("GP205", 4, Severity.MAJOR),
    ]
    assert got[0].message == "at 20 (and 2 more on this line)"
    assert got[2].message == "at 4"


def test_two_capability_compares_on_one_line_are_one_finding(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "gate.py": "import torch\nmajor, minor = torch.cuda.get_device_capability()\n"
            "use_fa3 = major == 9 and minor >= 0\n"
        },
    )
    assert _rules(root, select=frozenset({"GP205"})) == [("GP205", "gate.py")]


@pytest.mark.parametrize("layout", ["empty", "unknown-only", "missing-kind-file"])
def test_an_empty_scan_is_an_error_not_ready(tmp_path: Path, layout: str) -> None:
    if layout == "unknown-only":
        _write(tmp_path, {"README.md": "hi", "data/x.csv": "1,2"})
    target = tmp_path
    if layout == "missing-kind-file":
        target = tmp_path / "notes.md"
        target.write_text("x")
    with pytest.raises(GpuportError, match=r"nothing to scan|not a file kind"):
        scan_path(target, ScanOptions(jobs=1))


def test_empty_folder_from_the_cli_exits_2_with_one_line(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("scan", str(tmp_path))
    assert result.code == 2
    assert result.out == ""
    lines = [ln for ln in result.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "nothing to scan" in lines[0]


def _git_track(root: Path, paths: list[str]) -> None:
    """Make ``root`` a git work tree tracking ``paths`` (dulwich: git itself is never run)."""
    from dulwich.repo import Repo

    repo = Repo.init(str(root))
    worktree = repo.get_worktree() if hasattr(repo, "get_worktree") else repo
    worktree.stage([p.encode() for p in paths])


SHFL = "__global__ void k(float* x) { x[0] = __shfl_xor_sync(0xffffffff, x[0], 1); }\n"


def test_gitignore_hides_untracked_files_only(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            ".gitignore": "*.cuh\nbuild_hip/\n",
            "csrc/tracked.cuh": SHFL,
            "csrc/generated.cuh": SHFL,  # ignored and untracked: build output
            "build_hip/kept.cu": SHFL,  # an ignored folder with a tracked file in it
            "build_hip/gen.cu": SHFL,
        },
    )
    _git_track(root, [".gitignore", "csrc/tracked.cuh", "build_hip/kept.cu"])
    got = {path for rule, path in _rules(root) if rule == "GP302"}
    assert got == {"csrc/tracked.cuh", "build_hip/kept.cu"}


def test_without_a_git_index_gitignore_applies_to_every_file(tmp_path: Path) -> None:
    root = _write(tmp_path, {".gitignore": "*.cuh\n", "a.cuh": SHFL, "b.cu": SHFL})
    assert {path for _, path in _rules(root)} == {"b.cu"}


def test_scanning_a_subfolder_of_a_work_tree_uses_its_index(tmp_path: Path) -> None:
    root = _write(tmp_path, {"pkg/.gitignore": "*.cuh\n", "pkg/k.cuh": SHFL})
    _git_track(root, ["pkg/.gitignore", "pkg/k.cuh"])
    assert {path for _, path in _rules(root / "pkg")} == {"k.cuh"}


def test_a_folder_named_submodules_is_first_party_unless_gitmodules_lists_it(
    tmp_path: Path,
) -> None:
    root = _write(
        tmp_path,
        {
            ".gitmodules": '[submodule "ck"]\n\tpath = csrc/composable_kernel\n'
            "\turl = https://github.com/ROCm/composable_kernel\n",
            "models/mimo/submodules/audio.cu": SHFL,  # first party
            "csrc/composable_kernel/k.cu": SHFL,  # a submodule checkout
            "third_party/lib/k.cu": SHFL,  # vendored by name
        },
    )
    report = scan_path(root, ScanOptions(jobs=1))
    assert {f.location.path for f in report.findings} == {"models/mimo/submodules/audio.cu"}
    reasons = {s.path: s.reason for s in report.skipped}
    assert "git submodule" in reasons["csrc/composable_kernel/"]
    assert "vendored" in reasons["third_party/"]
    everything = scan_path(root, ScanOptions(jobs=1, include_vendored=True))
    assert len({f.location.path for f in everything.findings}) == 3


def test_an_unreadable_index_is_said_not_hidden(tmp_path: Path) -> None:
    root = _write(tmp_path, {".gitignore": "*.cuh\n", "a.cuh": SHFL, "b.cu": SHFL})
    (root / ".git").mkdir()
    (root / ".git" / "index").write_bytes(b"DIRC\x00\x00\x00\x63garbage")
    report = scan_path(root, ScanOptions(jobs=1))
    assert any(s.path == ".git/index" for s in report.skipped)
    assert {f.location.path for f in report.findings} == {"b.cu"}


def test_a_package_scanned_as_the_root_owns_only_its_own_name(tmp_path: Path) -> None:
    # scanning site-packages/torch: torch/cuda/ is torch.cuda, so `import cuda` (cuda-python)
    # inside it is still a third-party import
    root = _write(tmp_path / "torch", {"__init__.py": "", "cuda/__init__.py": "", "random.py": ""})
    assert own_packages(root) == frozenset({"torch"})


def test_a_requirement_on_the_project_itself_is_not_a_dependency(tmp_path: Path) -> None:
    own = _write(
        tmp_path / "own",
        {
            "pyproject.toml": "[project]\nname = 'AutoAWQ'\ndependencies = ['numpy']\n"
            "[project.optional-dependencies]\nall = ['autoawq[eval]']\n",
            "requirements-dev.txt": "autoawq==0.2.9\n",
        },
    )
    assert scan_path(own, ScanOptions(jobs=1)).findings == []
    other = _write(tmp_path / "other", {"requirements.txt": "autoawq==0.2.9\n"})
    assert [f.rule_id for f in scan_path(other, ScanOptions(jobs=1)).findings] == ["GP101"]


def test_own_distributions_from_setup_py_and_setup_cfg(tmp_path: Path) -> None:
    from gpuport.scan.project.own_names import own_distributions

    root = _write(
        tmp_path,
        {
            "setup.py": "from setuptools import setup\nsetup(name='Flash_Attn', version='2')\n",
            "sub/setup.cfg": "[metadata]\nname = vllm.rocm\n",
        },
    )
    assert own_distributions(root, [root / "sub"]) == {"flash-attn", "vllm-rocm"}


def test_an_empty_scan_through_kind_says_so(tmp_path: Path) -> None:
    from gpuport.scan.rules import FileKind

    _write(tmp_path, {"app.py": "import torch\n"})
    with pytest.raises(GpuportError, match=r"--kind cuda/c\+\+"):
        scan_path(tmp_path, ScanOptions(jobs=1, kinds=frozenset({FileKind.NATIVE})))
