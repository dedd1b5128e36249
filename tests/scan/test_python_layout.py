"""Issue 24 (tenth sample, lightllm): findings in the ``if __name__ == "__main__":`` block of
a package module the project never runs are a self-test, counted in the ``test`` scope; a
module the project runs (``python -m``, its file on a command line), a script outside a
package, and code outside the block stay core. Findings in a private function the project
never calls (no file names it outside uncalled code) are minor; a public one may be called by
a library's users and stays as it is."""

from __future__ import annotations

from pathlib import Path

from gpuport.models import Severity
from gpuport.scan import ScanOptions, scan_path
from gpuport.scan.finding import Finding
from gpuport.scan.project.py_layout import main_block
from tests.scan.project_files import write

_KERNEL = """import torch


def quant(x):
    return x.to(torch.float8_e4m3fn)


if __name__ == "__main__":
    a = torch.randn(16, 16, device="cuda")
    b = a.to(torch.float8_e4m3fn)
    print(b)
else:
    DEFAULT = torch.float8_e4m3fn
"""


def _scopes(root: Path, files: dict[str, str]) -> dict[int, str]:
    report = scan_path(write(root, files), ScanOptions(jobs=1, target="gfx942"))
    return {
        f.location.line: f.scope
        for f in report.findings
        if f.rule_id == "GP208" and f.location.path == "pkg/ops/quant.py"
    }


def _package(extra: dict[str, str] | None = None) -> dict[str, str]:
    return {
        "pkg/__init__.py": "",
        "pkg/ops/__init__.py": "",
        "pkg/ops/quant.py": _KERNEL,
        "README.md": "# pkg\n\n```\npip install pkg\n```\n",
        **(extra or {}),
    }


def test_the_main_block_of_a_package_module_is_a_self_test(tmp_path: Path) -> None:
    scopes = _scopes(tmp_path, _package())
    assert scopes[10] == "test"
    assert scopes[5] == "core" and scopes[13] == "core"  # the function, and `else:` on import


def test_a_module_the_readme_runs_with_dash_m_stays_core(tmp_path: Path) -> None:
    readme = "# pkg\n\nRun the check:\n\n    python -m pkg.ops.quant\n"
    assert _scopes(tmp_path, _package({"README.md": readme}))[10] == "core"


def test_a_module_a_script_runs_by_its_path_stays_core(tmp_path: Path) -> None:
    script = "#!/bin/sh\nCUDA_VISIBLE_DEVICES=0 python pkg/ops/quant.py --check\n"
    assert _scopes(tmp_path, _package({"scripts/check.sh": script}))[10] == "core"


def test_a_tail_of_the_dotted_name_counts(tmp_path: Path) -> None:
    doc = "cd pkg && python -m ops.quant\n"
    assert _scopes(tmp_path, _package({"docs/usage.md": doc}))[10] == "core"


def test_a_script_outside_a_package_stays_core(tmp_path: Path) -> None:
    files = _package()
    del files["pkg/ops/__init__.py"]
    assert _scopes(tmp_path, files)[10] == "core"


def test_the_block_ends_at_the_next_top_level_statement() -> None:
    text = 'x = 1\nif __name__ == "__main__":\n    run()\n\n# note\n    more()\nelse:\n    y()\n'
    assert main_block(text) == (2, 6)
    assert main_block("if __name__ == '__main__': main()\n") == (1, 1)
    assert main_block('def f():\n    if __name__ == "__main__":\n        g()\n') is None


_UTILS = """import subprocess


def _query_mode(gpu=0):
    return subprocess.run(["nvidia-smi", "-i", str(gpu), "--query-gpu=compute_mode"])


def _set_limit(percent):
    return _query_mode() if percent else None


def _set_default_mode(gpu=0):
    return subprocess.run(["nvidia-smi", "-i", str(gpu), "-c", "DEFAULT"])


def set_exclusive_mode(gpu=0):
    return subprocess.run(["nvidia-smi", "-i", str(gpu), "-c", "EXCLUSIVE_PROCESS"])
"""


def _gp204(root: Path, files: dict[str, str]) -> dict[int, Finding]:
    report = scan_path(write(root, files), ScanOptions(jobs=1))
    return {
        f.location.line: f
        for f in report.findings
        if f.rule_id == "GP204" and f.location.path == "app/utils.py"
    }


def _app(extra: dict[str, str] | None = None, utils: str = _UTILS) -> dict[str, str]:
    return {"app/__init__.py": "", "app/utils.py": utils, **(extra or {})}


def test_a_private_function_nothing_calls_is_minor_and_what_only_it_calls(tmp_path: Path) -> None:
    hits = _gp204(tmp_path, _app())
    assert hits[5].severity is Severity.MINOR  # _query_mode: called only by _set_limit
    assert hits[13].severity is Severity.MINOR
    assert hits[5].default_severity is Severity.MAJOR
    assert "never calls" in hits[13].message and "_set_default_mode()" in hits[13].message


def test_a_public_function_may_be_called_by_the_users_of_a_library(tmp_path: Path) -> None:
    assert _gp204(tmp_path, _app())[17].severity is Severity.MAJOR


def test_a_call_from_another_module_keeps_it(tmp_path: Path) -> None:
    server = "from app.utils import _set_limit\n\n_set_limit(50)\n"
    hits = _gp204(tmp_path, _app({"app/server.py": server}))
    assert hits[5].severity is Severity.MAJOR  # _set_limit is live, so is _query_mode
    assert hits[13].severity is Severity.MINOR


def test_a_call_from_a_public_function_keeps_it(tmp_path: Path) -> None:
    utils = _UTILS + "\n\ndef set_limit(p):\n    return _set_limit(p)\n"
    assert _gp204(tmp_path, _app(utils=utils))[5].severity is Severity.MAJOR


def test_a_name_in_the_docs_keeps_it(tmp_path: Path) -> None:
    doc = "Call `app.utils._set_default_mode()` after a crash.\n"
    hits = _gp204(tmp_path, _app({"docs/ops.md": doc}))
    assert hits[13].severity is Severity.MAJOR


def test_a_module_level_mention_or_a_decorator_keeps_it(tmp_path: Path) -> None:
    utils = _UTILS + "\nHANDLERS = {'default': _set_default_mode}\n"
    assert _gp204(tmp_path, _app(utils=utils))[13].severity is Severity.MAJOR
    decorated = _UTILS.replace("def _set_default_mode", "@register\ndef _set_default_mode")
    other = tmp_path / "other"
    assert _gp204(other, _app(utils=decorated))[14].severity is Severity.MAJOR


def test_a_call_from_the_self_test_block_only_is_no_call(tmp_path: Path) -> None:
    utils = _UTILS + '\n\nif __name__ == "__main__":\n    _set_default_mode()\n    _set_limit(1)\n'
    hits = _gp204(tmp_path, _app(utils=utils))
    assert hits[5].severity is Severity.MINOR and hits[13].severity is Severity.MINOR


def test_functions_are_read_from_the_text() -> None:
    from gpuport.scan.project.py_layout import _functions

    text = "import x\n\n\ndef a(\n    p,\n):\n    return p\n\n@deco\ndef b():\n    pass\n"
    text += "class C:\n    def m(self):\n        pass\n\nasync def c():\n    pass\n"
    assert _functions(text) == [("a", 4, 7), ("c", 16, 17)]
