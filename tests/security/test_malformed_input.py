"""Issue 14 item 6: every malformed JSON/TOML input is a one-line error with exit 2.

Python's parsers raise ``ValueError`` on a 5,000-digit integer (``int()``'s 4,300-digit
limit) and ``RecursionError`` on 100,000 nested brackets; both used to escape as exit 4
("internal error") from bench/validate JSON, ``.gpv`` headers and manifests, the
project's ``gpuport.toml``/``pyproject.toml`` and ``--knowledge`` TOML. They all go
through :mod:`gpuport.safeparse` now. A NUL byte in a ``-r`` path past byte 8192 crashed
the requirements checker and dropped the file's findings (the verdict became ``ready``).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from gpuport.models import GpuportError
from gpuport.safeparse import MAX_DEPTH, ParseError, json_value, toml_table
from tests.conftest import run_subprocess

HUGE = "9" * 5000
DEEP_JSON = "[" * 100_000 + "]" * 100_000
DEEP_TOML = "x = " + "[" * 50_000 + "]" * 50_000 + "\n"


def _one_line_exit_2(res: object, *needles: str) -> None:
    code, err = res.code, res.err  # type: ignore[attr-defined]
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("gpuport: error:") and "internal error" not in err
    for needle in needles:
        assert needle in err


# -- the helper itself -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (HUGE, "a number of 5000 characters"),
        ('{"a": ' + HUGE + "}", "a number of 5000 characters"),
        ("1." + HUGE, "a number of 5002 characters"),
        (DEEP_JSON, "nested too deeply"),
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "nested too deeply"),
        ('{"a": 1', "Expecting"),
        (b"\xff\xfe{", "not UTF-8"),
    ],
)
def test_json_value_refuses_in_one_line(text: str | bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message) as err:
        json_value(text)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f"a = {HUGE}\n", "a number longer than"),
        (f"[tool.x]\na = {HUGE}\n", "a number longer than"),
        (f"a = 1.{HUGE}\n", "a number of"),
        (DEEP_TOML, "nested too deeply"),
        ("x = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n", "nested too deeply"),
        ("a = [\n", "Invalid value"),
    ],
)
def test_toml_table_refuses_in_one_line(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=message) as err:
        toml_table(text)
    assert "\n" not in str(err.value)


def test_what_is_inside_the_bounds_parses() -> None:
    nested = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    assert json_value('{"a": [1, 2.5e10, "x", null], "b": ' + nested + "}")["a"][1] == 2.5e10
    assert toml_table("a = 12345678901234567890\n[t]\nb = [1, 'x']\n")["t"]["b"] == [1, "x"]


# -- through the CLI ---------------------------------------------------------------------------


@pytest.mark.parametrize("body", [HUGE, DEEP_JSON])
def test_bench_json_with_huge_number_or_deep_nesting(tmp_path: Path, body: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "gpuport.bench", "schema_version": "1.0", "x": ' + body + "}")
    res = run_subprocess("compare", str(bad), str(bad))
    _one_line_exit_2(res, "is not JSON")


def test_validate_json_with_huge_number(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "requirements.txt").write_text("torch\n")
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "gpuport.validate", "counts": {"wrong": ' + HUGE + "}}")
    res = run_subprocess("assess", str(project), "--validate", str(bad), "--no-progress")
    _one_line_exit_2(res, "is not JSON", "5000 characters")


@pytest.mark.parametrize("body", [f"a = {HUGE}\n", DEEP_TOML])
def test_gpuport_toml_with_huge_number_or_deep_nesting(tmp_path: Path, body: str) -> None:
    (tmp_path / "gpuport.toml").write_text(body)
    res = run_subprocess("assess", str(tmp_path), "--no-progress")
    _one_line_exit_2(res, "gpuport.toml is not valid TOML")


def test_pyproject_with_huge_number_in_another_tools_table(tmp_path: Path) -> None:
    # The pyproject serves other tools too: assess goes on without its settings, and says so.
    (tmp_path / "pyproject.toml").write_text(f"[tool.other]\nx = {HUGE}\n")
    (tmp_path / "requirements.txt").write_text("torch\n")
    res = run_subprocess("assess", str(tmp_path), "--no-progress", "--format", "json")
    assert res.code == 0, res.err
    assert "not valid TOML (a number longer than" in res.out
    assert "internal error" not in res.err


@pytest.mark.parametrize("body", [f'[[packages]]\nname = "x"\nn = {HUGE}\n', DEEP_TOML])
def test_knowledge_toml_with_huge_number_or_deep_nesting(tmp_path: Path, body: str) -> None:
    knowledge = tmp_path / "kb"
    knowledge.mkdir()
    (knowledge / "packages.toml").write_text(body)
    project = tmp_path / "p"
    project.mkdir()
    (project / "requirements.txt").write_text("torch\n")
    res = run_subprocess("scan", str(project), "--knowledge", str(knowledge))
    _one_line_exit_2(res, "knowledge file", "not valid TOML")


def _gpv(path: Path, header: bytes) -> Path:
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 16)
    return path


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (b'{"t": {"dtype": "F32", "shape": [' + HUGE.encode() + b"]}}", "5000 characters"),
        (b'{"x": ' + DEEP_JSON.encode() + b"}", "nested too deeply"),
        (
            json.dumps({"__metadata__": {"gpuport.validate": '{"kind": ' + HUGE + "}"}}).encode(),
            "manifest is not valid JSON",
        ),
    ],
)
@pytest.mark.torch
def test_gpv_header_and_manifest(tmp_path: Path, header: bytes, message: str) -> None:
    from gpuport.validate.gpv import GpvFile

    with pytest.raises(GpuportError, match=message) as err:
        GpvFile(_gpv(tmp_path / "cap.gpv", header))
    assert "\n" not in str(err.value)


@pytest.mark.torch
def test_gpv_header_through_the_cli(tmp_path: Path) -> None:
    a = _gpv(tmp_path / "a.gpv", b'{"x": ' + HUGE.encode() + b"}")
    res = run_subprocess("validate", "diff", str(a), str(a))
    _one_line_exit_2(res, "not a gpuport capture")


# -- a NUL byte in a -r path -------------------------------------------------------------------


def test_nul_in_a_requirements_include_keeps_the_files_findings(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_bytes(
        b"flash-attn\n" + b"#" * 9000 + b"\n-r other\x00.txt\ntorch\n"
    )
    res = run_subprocess("scan", str(tmp_path), "--format", "json")
    assert res.code in (0, 1), res.err
    data = json.loads(res.out)
    messages = [f["message"] for f in data["findings"]]
    assert any(m.startswith("flash-attn") for m in messages)
    assert any("NUL byte" in m and "\\0" in m for m in messages)
    assert not data["skipped"] and data["verdict"] != "ready"
    assert "please report" not in res.out + res.err


def test_deep_json_in_a_dockerfile_exec_form_keeps_the_files_findings(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text(
        "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\nRUN " + "[" * 5000 + "]" * 5000 + "\n"
    )
    res = run_subprocess("scan", str(tmp_path), "--format", "json")
    data = json.loads(res.out)
    assert not data["skipped"], data["skipped"]
    assert any("nvidia/cuda" in f["message"] for f in data["findings"])


# -- integer literals in C++ (found by tools/fuzz.py) -----------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 0024);\n",
        "cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 09);\n",
        f"cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, {HUGE});\n",
        f"#if __CUDA_ARCH__ >= {HUGE}\nint x;\n#endif\n",
        f"#if {HUGE}\nint x;\n#endif\n",
        f"k<<<1, 1, {HUGE}>>>(a);\n",
    ],
)
def test_odd_integer_literals_in_cuda_do_not_lose_the_file(source: str) -> None:
    from gpuport.knowledge import load_packages, resolve_target
    from gpuport.scan.engine import check_text
    from gpuport.scan.rules import FileKind

    text = '#include <cuda_runtime.h>\n__global__ void k(int*a){asm("mov.u32 %0, 1;");}\n' + source
    found, skipped = check_text(
        "k.cu", text, FileKind.NATIVE, resolve_target("gfx942"), load_packages()
    )
    assert skipped is None
    assert any(f.rule_id == "GP301" for f in found)  # the file's other findings are kept


@pytest.mark.parametrize("name", ["a" * 5000, "a\\u0000b"])
def test_settings_reference_no_file_can_have(tmp_path: Path, name: str) -> None:
    # found by tools/fuzz.py: Path.exists() raised ENAMETOOLONG (exit 4) on a long bench ref
    from gpuport.assess.config import load_settings

    (tmp_path / "gpuport.toml").write_text(f'bench = ["{name}"]\n')
    if "\\u0000" in name:
        with pytest.raises(GpuportError, match="not a file name"):
            load_settings(tmp_path)
        return
    settings = load_settings(tmp_path)
    assert settings.bench == (str(tmp_path / name),)  # a project file: loading says "no such file"


def test_a_version_of_5000_digits_in_requirements(tmp_path: Path) -> None:
    # found by tools/fuzz.py: packaging's Version() raised int()'s ValueError, the file was lost
    (tmp_path / "requirements.txt").write_text(f"bitsandbytes<{HUGE}\ntorch\n")
    res = run_subprocess("scan", str(tmp_path), "--format", "json")
    data = json.loads(res.out)
    assert not data["skipped"], data["skipped"]
    assert any(f["message"].startswith("torch") for f in data["findings"])


def test_python_the_parser_cannot_hold_is_skipped_with_its_reason() -> None:
    """Found by `make fuzz` (python target, seed 9, input 89721, kept gzipped beside this
    file): CPython's parser raised MemoryError on the reduced text of a 200 KB file, and only
    the second parse caught it. Now either parse turns it into a skipped file with its reason."""
    import gzip

    from gpuport.knowledge import load_packages, resolve_target
    from gpuport.scan.engine import check_text
    from gpuport.scan.rules import FileKind
    from tests.security.fuzz_targets import TARGETS

    data = gzip.decompress(
        (Path(__file__).parent / "crashes" / "python-memoryerror.py.gz").read_bytes()
    )
    TARGETS["python"](data)  # raised MemoryError before the fix
    text = data.decode("utf-8", "replace")
    _, reason = check_text("m.py", text, FileKind.PYTHON, resolve_target("gfx942"), load_packages())
    assert reason is None or "could not be parsed" in reason or "syntax error" in reason
