"""Issue 24: an NVIDIA-only backend that the package does not require and its ROCm route does
not install is optional (scope extra); one the package requires stays core."""

from __future__ import annotations

from pathlib import Path

from gpuport.scan.model import ScanReport, Verdict
from tests.scan.project_files import scan_files

README = "Install on AMD GPUs:\n\n    pip install torch --index-url https://download.pytorch.org/whl/rocm6.2\n"
BACKEND = "import tensorrt_llm\n\n\ndef generate(x):\n    return tensorrt_llm.run(x)\n"


def _backend(r: ScanReport) -> set[str]:
    return {f.scope for f in r.findings if f.location.path == "app/loaders/trt.py"}


def test_an_undeclared_nvidia_backend_beside_a_route_is_optional(tmp_path: Path) -> None:
    files = {"README.md": README, "requirements.txt": "torch>=2.3\n", "app/loaders/trt.py": BACKEND}
    r = scan_files(tmp_path, files)
    assert _backend(r) == {"extra"}
    msg = next(f.message for f in r.findings if f.rule_id == "GP201")
    assert "optional NVIDIA-only backend" in msg
    assert r.verdict is not Verdict.BLOCKED


def test_a_required_nvidia_package_stays_core(tmp_path: Path) -> None:
    files = {
        "README.md": README,
        "requirements.txt": "torch>=2.3\ntensorrt-llm==0.12\n",
        "app/loaders/trt.py": BACKEND,
    }
    assert _backend(scan_files(tmp_path, files)) == {"core"}


def test_without_a_route_the_import_stays_core(tmp_path: Path) -> None:
    files = {"README.md": "An app.\n", "requirements.txt": "torch\n", "app/loaders/trt.py": BACKEND}
    assert _backend(scan_files(tmp_path, files)) == {"core"}


def test_an_import_inside_a_function_does_not_make_the_module_optional(tmp_path: Path) -> None:
    lazy = "def generate(x):\n    import tensorrt_llm\n    return tensorrt_llm.run(x)\n"
    files = {"README.md": README, "requirements.txt": "torch\n", "app/loaders/trt.py": lazy}
    assert _backend(scan_files(tmp_path, files)) == {"core"}


def test_a_module_level_import_that_reraises_makes_the_backend_optional(tmp_path: Path) -> None:
    strict = (
        "try:\n    import tensorrt_llm\nexcept ImportError as exc:\n"
        "    raise ImportError('pip install tensorrt-llm') from exc\n"
    )
    files = {"README.md": README, "requirements.txt": "torch\n", "app/loaders/trt.py": strict}
    assert _backend(scan_files(tmp_path, files)) == {"extra"}


def test_every_module_of_a_backend_gets_the_same_words(tmp_path: Path) -> None:
    """Issue 29: the note named each module's own import (`(path:line)`), so the 14 modules of
    Liger-Kernel's cutlass backend printed 14 seven-line messages in the terminal, one per
    place; the same words group them into one message with its places under it."""
    files = {
        "README.md": README,
        "requirements.txt": "torch>=2.3\n",
        "app/loaders/trt.py": BACKEND,
        "app/loaders/trt_b.py": "\n\n" + BACKEND,
    }
    r = scan_files(tmp_path, files)
    messages = {f.message for f in r.findings if f.rule_id == "GP201"}
    assert len(messages) == 1 and "this module imports tensorrt" in messages.pop()


# --- a feature's own requirements file beside the plain one -----------------------------


def _req_scopes(r: ScanReport, path: str) -> set[str]:
    return {f.scope for f in r.findings if f.location.path == path}


def test_a_features_requirements_file_beside_a_route_is_optional(tmp_path: Path) -> None:
    files = {
        "README.md": README,
        "requirements/requirements.txt": "torch>=2.3\n",
        "requirements/requirements-moe.txt": "grouped_gemm==0.1.4\n",
        "requirements/requirements-gpu.txt": "flash-attn==2.5.0\n",
    }
    r = scan_files(tmp_path, files)
    assert _req_scopes(r, "requirements/requirements-moe.txt") == {"extra"}
    moe = next(f for f in r.findings if f.location.path == "requirements/requirements-moe.txt")
    assert "optional dependency set beside requirements/requirements.txt" in moe.message
    # the file named for the GPU install is the install itself
    assert _req_scopes(r, "requirements/requirements-gpu.txt") == {"core"}


def test_a_features_requirements_file_stays_core_without_a_route(tmp_path: Path) -> None:
    moe = {"requirements-moe.txt": "grouped_gemm==0.1.4\n"}
    no_route = scan_files(tmp_path / "a", {"requirements.txt": "torch>=2.3\n", **moe})
    assert _req_scopes(no_route, "requirements-moe.txt") == {"core"}
