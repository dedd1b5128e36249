"""A ROCm wheel workflow beside the CUDA one, and its wheel-index (PEP 503) entries.

Python bindings of a vendored C++ build (llama.cpp in llama-cpp-python, NexaAI's SDK) build
their CUDA wheels in a release workflow that hands the vendored build a CMake switch
(``CMAKE_ARGS="-DGGML_CUDA=on" python -m build --wheel``); the CUDA code lives in a submodule
``scan`` does not see. Their real ROCm ports (J32 GenieX #90, J35 llama-cpp-python #2252)
added a workflow beside the CUDA one (``build-wheels-rocm*.yaml``: the same wheel built in
``rocm/dev-ubuntu-22.04`` with the HIP switch, released as ``<tag>-rocm<version>``) and the
index entries: the index workflow also runs after it, builds ``index/whl/rocm<version>``, and
the index script links it. This family writes the same, only on positive evidence:

* a workflow that builds wheels with a CMake option turned on in ``CMAKE_ARGS`` whose HIP
  counterpart ``knowledge/release_switches.toml`` knows (``GGML_CUDA`` -> ``GGML_HIP``, with
  sources); where upstream renamed the HIP option, the project's docs (``-DGGML_HIP=on`` in
  its README) or its vendored CMake files (``option(GGML_HIP ...)``) choose, else every name
  is passed (CMake warns about, and ignores, an option the project does not declare);
* a job that runs on Linux (a Windows-only workflow would need AMD's HIP SDK installer);
* no workflow of the project builds for ROCm already.

A CUDA switch the table does not know, or CUDA artefacts built another way (a toolkit action,
an ``nvidia/cuda`` container, a CUDA torch index), get no workflow: a report line says why.
So does a gate of the CUDA release job the ROCm one would not copy, also one inside a project
script or a local action the job runs (``./scripts/check_release.sh`` running ``git describe
--exact-match``: forty-third re-run F1), a make target, a ``python -m`` module or a nested
local action it runs, read through the project's files and folder listings (forty-fourth
re-run F1, F2, F3).

The CUDA workflows are not touched (their bytes are the same); the index workflow and script
get one line each beside their CUDA lines. **Unsafe**: publishing is release policy. Once
dispatched, the workflow publishes wheels under a new release tag that the index offers to
users, built in AMD's image but never run on an AMD GPU.
"""

from __future__ import annotations

from pathlib import PurePosixPath

import yaml

from gpuport import textre
from gpuport.knowledge.port_routes import load_port_routes
from gpuport.knowledge.release_switches import ReleaseSwitches, load_release_switches
from gpuport.models import Location, Severity
from gpuport.port.context import PortContext, Proposal
from gpuport.port.release_workflows import (
    CU_SUFFIX,
    CudaWorkflow,
    compose_workflow,
    cuda_evidence,
    index_lines,
    link_lines,
    linux_build,
    read_workflow,
    rocm_present,
    run_texts,
    shell_code,
)
from gpuport.scan.finding import Finding

__all__ = ["RULE", "propose"]

#: the label of the findings this family reads itself (scan reads no workflow files)
RULE = "port-rocm-release"
_DIR = ".github/workflows"
_DROP = textre.compile(r"CUDA|CUBLAS|NVCC|CUDNN|NVIDIA|^CMAKE_(?:C|CXX)_COMPILER", 0)
#: options that load code into the configure or the build (a script, a toolchain file, a
#: compiler launcher): never carried into the ROCm build (thirty-ninth re-run F2)
_LOADS = textre.compile(
    r"^CMAKE_PROJECT_\w*INCLUDE|TOOLCHAIN_FILE|_LAUNCHER$|USER_MAKE_RULES_OVERRIDE|^CMAKE_\w*_PATH$",
    0,
)
#: an option value written back into a double-quoted ``CMAKE_ARGS``: plain words only
_PLAIN_VALUE = textre.compile(r"[\w.,;:/+=@%-]+")
_DOCS = ("README.md", "README.rst", "README", "docs/install.md", "docs/build.md")


def _finding(path: str, line: int, message: str, snippet: str = "") -> Finding:
    return Finding(
        rule_id=RULE,
        title="CUDA release workflow without a ROCm counterpart",
        severity=Severity.MINOR,
        location=Location(path=path, line=line, snippet=snippet or None),
        message=message,
        fix="a ROCm build of the same artefacts in AMD's image, and its index entries",
    )


def _hip_names(ctx: PortContext, names: tuple[str, ...]) -> tuple[tuple[str, ...], str]:
    """The HIP option(s) to pass and why: the project's docs, then its vendored CMake."""
    if len(names) == 1:
        return names, "knowledge/release_switches.toml"
    for doc in _DOCS:
        text = ctx.read(doc) or ""
        for name in names:
            if textre.search(rf"-D{name}=", text):
                return (name,), f"{doc} builds with -D{name}"
    gitmodules = ctx.read(".gitmodules") or ""
    for m in textre.finditer(r"(?m)^\s*path\s*=\s*([\w./+-]+)\s*$", gitmodules):
        # a plain path only: it is quoted in the workflow's comments (thirty-seventh re-run
        # F3: U+2028, a YAML line break, and ESC came through `\S`)
        for sub in ("CMakeLists.txt", "ggml/CMakeLists.txt", "vendor/llama.cpp/CMakeLists.txt"):
            text = ctx.read(f"{m.group(1)}/{sub}") or ""
            for name in names:
                if textre.search(rf"option\(\s*{name}\b", text):
                    return (name,), f"{m.group(1)}/{sub} declares {name}"
    return names, (
        "every name the option had upstream, as the vendored build is not in the tree; "
        "CMake ignores the one it does not declare"
    )


def _cmake_args(ctx: PortContext, wf: CudaWorkflow, table: ReleaseSwitches) -> tuple[str, str]:
    """The ROCm build's CMAKE_ARGS (the CUDA ones with the switch swapped, CUDA-only options
    dropped) and where the HIP names came from."""
    out: list[str] = []
    whence: list[str] = []
    for name, value, _ in wf.options:
        entry = table.hip_for(name)
        if entry is not None and value.lower() in ("on", "1", "true", "yes"):
            hip, why = _hip_names(ctx, entry.hip)
            out += [f"-D{h}={value}" for h in hip]
            whence.append(f"{name} -> {'/'.join(hip)} ({why})")
        elif (
            not _DROP.search(name.upper())
            and not _LOADS.search(name.upper())
            and _PLAIN_VALUE.fullmatch(value)
        ):
            out.append(f"-D{name}={value}")
    return " ".join(dict.fromkeys(out)), "; ".join(dict.fromkeys(whence))


def _target(path: str) -> str:
    p = PurePosixPath(path)
    low = p.name.lower()
    if "cuda" in low:
        i = low.index("cuda")
        return str(p.with_name(p.name[:i] + "rocm" + p.name[i + 4 :]))
    return str(p.with_name(f"{p.stem}-rocm{p.suffix}"))


def _rocm_name(name: str) -> str:
    if textre.search(r"\bCUDA\b", name):
        return textre.sub(r"\bCUDA\b", "ROCm", name)
    return f"{name} (ROCm)" if name else "Build Wheels (ROCm)"


def _workflow(
    wf: CudaWorkflow, name: str, args: str, whence: str, image: str, tag: str, targets: str,
    submodules: bool, label: str,
) -> str:  # fmt: skip
    pythons = ", ".join(f'"{v}"' for v in (wf.pythons or ["3.11"]))
    lines = [
        f"# ROCm wheels beside {wf.path}, written by `gpuport port` ({label}):",
        "# the same wheel built with the HIP switch in AMD's image, "
        + (
            f"released as <tag>{tag}."
            if wf.release_tag is not None
            else "kept as a workflow artifact."
        ),
        f"# HIP switch: {whence}.",
        f"name: {name}",
        "",
        *(wf.on_block or ["on: workflow_dispatch"]),
        "",
    ]
    if wf.permissions:
        lines += [*wf.permissions, ""]
    lines += [
        "jobs:",
        "  build_wheels:",
        f"    name: Build Wheel ${{{{ matrix.pyver }}}} {tag.lstrip('-')}",
        "    runs-on: ubuntu-22.04",
        f"    container: {image}",
        "    strategy:",
        "      fail-fast: false",
        "      matrix:",
        f"        pyver: [{pythons}]",
        "    steps:",
        "      - name: Install build tools",
        "        run: |",
        "          apt-get update",
        "          apt-get install -y --no-install-recommends git cmake ninja-build",
        "",
        "      - uses: actions/checkout@v4",
    ]
    if submodules:
        lines += ["        with:", '          submodules: "recursive"']
    lines += [
        "",
        "      - uses: actions/setup-python@v5",
        "        with:",
        "          python-version: ${{ matrix.pyver }}",
        "",
        "      - name: Build Wheel",
        "        env:",
        f'          AMDGPU_TARGETS: "{targets}"',
        "        run: |",
        "          export ROCM_PATH=/opt/rocm",
        '          export PATH="$ROCM_PATH/bin:$ROCM_PATH/llvm/bin:$PATH"',
        '          export CC="$ROCM_PATH/llvm/bin/clang" CXX="$ROCM_PATH/llvm/bin/clang++"',
        '          export HIPCXX="$ROCM_PATH/llvm/bin/clang"',
        f'          export CMAKE_ARGS="{args} -DAMDGPU_TARGETS=$AMDGPU_TARGETS'
        ' -DCMAKE_HIP_ARCHITECTURES=$AMDGPU_TARGETS"',
        "          export CMAKE_BUILD_PARALLEL_LEVEL=$(nproc)",
        "          python -m pip install build wheel",
        f"          {wf.build}",
        "",
    ]
    if wf.release_tag is not None:
        lines += ["      - uses: softprops/action-gh-release@v2"]
        if wf.release_if:
            lines += [f"        if: {wf.release_if}"]
        lines += [
            "        with:",
            "          files: dist/*",
            f"          tag_name: {CU_SUFFIX.sub(tag, wf.release_tag, count=1)}",
            "        env:",
            "          GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
        ]
    else:
        lines += [
            "      - uses: actions/upload-artifact@v4",
            "        with:",
            f"          name: wheels{tag}-py${{{{ matrix.pyver }}}}",
            "          path: dist/*.whl",
        ]
    return "\n".join(lines) + "\n"


def _after(text: str, index: int, new: str) -> tuple[int, str]:
    """Where to insert ``new`` as a line after 0-based line ``index``, and the text to
    insert (the file's own line ending)."""
    eol = PortContext.eol(text)
    pos = 0
    for i, line in enumerate(text.splitlines(keepends=True)):
        pos += len(line)
        if i == index:
            if not line.endswith(("\n", "\r")):
                return pos, eol + new
            break
    return pos, new + eol


def _index_edits(
    ctx: PortContext, prop: Proposal, texts: dict[str, str], wf: CudaWorkflow, name: str,
    short: str, version: str, found: Finding,
) -> list[str]:  # fmt: skip
    """The wheel index's entries: a page for the ROCm tag beside the CUDA pages, the index
    workflow run after the ROCm one, the index script's link. Returns the files edited; an
    entry gpuport cannot place as the shell reads it is left out, said in the note."""
    edited: list[str] = []
    for path, text in texts.items():
        rows = index_lines(text)
        if path == wf.path or not rows:
            continue
        i, line = rows[-1]
        why = _workflow_line_refusal(text, i)
        if why is not None:
            _left_out(prop, f"{path}:{i + 1} {why}")
            continue
        new = textre.sub(r"whl/cu\d+", f"whl/{short}", line)
        new = textre.sub(r"-cu\d+", f"-{short}", new)
        prop.edit(path, *_pos(text, i, new), (found,))
        end = _workflows_list_end(text)
        if end is not None:
            prop.edit(path, end, end, f', "{name}"', (found,))
        edited.append(path)
        for script in dict.fromkeys(textre.findall(r"(?:\./)?([\w./-]+\.sh)\b", line)):
            _link_edit(ctx, prop, script.removeprefix("./"), short, version, found, edited)
    return edited


def _left_out(prop: Proposal, what: str) -> None:
    prop.note = f"{prop.note}; wheel index entry not added ({what})"


def _line_refusal(before: list[str], code: list[str] | str) -> str | None:
    """Why a line (the last of ``before``) is not copied as one more command: the shell
    text up to it is not followed (a heredoc, an open quote: thirty-ninth re-run F1), or it
    continues a command or is continued."""
    if isinstance(code, str):
        return code
    if len(before) > 1 and before[-2].rstrip().endswith("\\"):
        return "it continues the line above"
    if before[-1].rstrip().endswith("\\"):
        return "it is continued on the next line"
    return None


def _workflow_line_refusal(text: str, index: int) -> str | None:
    """Why 0-based line ``index`` of a workflow is not copied: it must be a line of a run
    step's literal block, the file line being the shell line, that gpuport follows up to it
    (:func:`_line_refusal`)."""
    root = compose_workflow(text)
    lines = text.splitlines()
    runs = run_texts(root, lines) if root is not None else "not YAML gpuport reads"
    if isinstance(runs, str):
        return runs
    for first, body in runs:
        if first <= index < first + len(body):
            if lines[index].strip() != body[index - first].strip():
                # a one-line `run: cmd`: the copy would be a second `run:` key of the step,
                # which GitHub rejects (fortieth re-run F21)
                return "it is a one-line `run:` value, not a line of a run block"
            before = body[: index - first + 1]
            return _line_refusal(before, shell_code(before))
    return "not a line of a run step"


def _workflows_list_end(text: str) -> int | None:
    """Where ``, "name"`` goes in ``on: workflow_run: workflows: [..., "... (CUDA)"]``: the
    offset of the one-line flow list's ``]``, read from the YAML (not a line like it)."""
    node: yaml.Node | None = compose_workflow(text)
    for key in ("on", "workflow_run", "workflows"):
        if not isinstance(node, yaml.MappingNode):
            return None
        node = next((v for k, v in node.value if getattr(k, "value", None) == key), None)
    if not isinstance(node, yaml.SequenceNode) or not node.flow_style:
        return None
    if node.start_mark.line != node.end_mark.line:
        return None
    if not any(isinstance(x, yaml.ScalarNode) and "CUDA" in str(x.value) for x in node.value):
        return None
    end = node.end_mark.index - 1
    return end if 0 <= end < len(text) and text[end] == "]" else None


def _pos(text: str, index: int, new: str) -> tuple[int, int, str]:
    at, insert = _after(text, index, new)
    return at, at, insert


def _link_edit(
    ctx: PortContext, prop: Proposal, script: str, short: str, version: str, found: Finding,
    edited: list[str],
) -> None:  # fmt: skip
    text = ctx.read(script)
    if text is None or script in edited:
        return
    rows = link_lines(text)
    if not rows:
        return
    i, line = rows[-1]
    before = text.splitlines()[: i + 1]
    why = _line_refusal(before, shell_code(before, bash=True))
    if why is not None:
        _left_out(prop, f"{script}:{i + 1} {why}")
        return
    new = textre.sub(r"cu\d+/", f"{short}/", line)
    new = textre.sub(r"CUDA [\d.]+", f"ROCm {version}", new)
    prop.edit(script, *_pos(text, i, new), (found,))
    edited.append(script)


def propose(ctx: PortContext) -> list[Proposal]:
    names = [n for n in ctx.listdir(_DIR) if n.endswith((".yml", ".yaml"))]
    texts = {f"{_DIR}/{n}": t for n in names if (t := ctx.read(f"{_DIR}/{n}")) is not None}
    if not texts or any(rocm_present(t) for t in texts.values()):
        return []
    table = load_release_switches()
    routes = load_port_routes()
    for path, text in texts.items():
        wf = read_workflow(path, text, table, ctx.read, ctx.listdir)
        if wf is not None and wf.refused:
            ctx.report_line(
                _finding(path, wf.build_line, "builds CUDA wheels with a CMake switch"),
                f"no ROCm workflow: {wf.refused}",
            )
            continue
        if wf is None:
            evidence = cuda_evidence(text)
            if evidence is not None:
                what, at = evidence
                ctx.report_line(
                    _finding(path, at, f"builds CUDA artefacts ({what})"),
                    f"no ROCm workflow: it builds CUDA artefacts ({what}) with no CMake "
                    "switch gpuport knows a HIP counterpart of (knowledge/release_switches.toml)",
                )
            continue
        if not wf.switches:
            opt, line = wf.unknown[0]
            ctx.report_line(
                _finding(path, line, f"builds CUDA wheels with -D{opt}=on"),
                f"no ROCm workflow: gpuport knows no HIP counterpart of -D{opt} "
                "(knowledge/release_switches.toml)",
            )
            continue
        opt, line = wf.switches[0]
        found = _finding(
            path, line, f"builds CUDA wheels with -D{opt}=on and no ROCm workflow beside it",
            text.splitlines()[line - 1].strip(),
        )  # fmt: skip
        if not linux_build(text, wf.build_line):
            ctx.report_line(found, "no ROCm workflow: the CUDA wheels are built on Windows only "
                       "(a ROCm build there needs AMD's HIP SDK installer)")  # fmt: skip
            continue
        target = _target(path)
        if ctx.exists(target):
            ctx.report_line(found, f"no ROCm workflow: {target} exists")
            continue
        version = routes.rocm
        short = "rocm" + version.replace(".", "")
        image = f"rocm/dev-ubuntu-{routes.default_ubuntu}:{version}-complete"
        args, whence = _cmake_args(ctx, wf, table)
        name = _rocm_name(wf.name)
        label = f"{RULE} {path}:{line}"
        prop = Proposal(
            id=f"rocm-release:{target}",
            family="ci",
            title=f"{target}: ROCm wheels beside {path}",
            safe=False,
            why=(
                "publishing is the project's release policy: once dispatched, the workflow "
                f"releases wheels as {short} builds and the wheel index offers them to users, "
                "built in AMD's image but never run on an AMD GPU; the CUDA workflows are "
                "unchanged"
            ),
            findings=[found],
            note=(
                f"{image} (ROCm {version}, knowledge/port_routes.toml); HIP switch: {whence}; "
                "check the vendored build's HIP option and the GPU targets"
            ),
            resolves=False,
        )
        prop.creates[target] = _workflow(
            wf, name, args, whence, image, f"-{short}", table.amdgpu_targets,
            ctx.exists(".gitmodules"), label,
        )  # fmt: skip
        _index_edits(ctx, prop, texts, wf, name, short, version, found)
        return [prop]
    return []
