"""Containers: a Dockerfile's build arguments read for its ROCm copy (``port.docker_args``):
a CUDA-only install in a shell branch the build's argument values never take does not stop
the copy; an argument whose value is not known (no default, passed from the environment by
compose or a build script) keeps the refusal and says why; a base image taken from an
argument the project passes its own value for gets no copy."""

from __future__ import annotations

from pathlib import Path

import yaml

from gpuport.port.docker_args import ArgScope, expand, shell_branches
from tests.port.helpers import created, project, run

HEAD = "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nRUN apt-get install -y python3-pip\n"
GUARDED = (
    "RUN pip install einops && \\\n"
    '    if [ "$INSTALL_FLASHATTN" == "true" ]; then \\\n'
    "        pip install --no-cache-dir flash-attn --no-build-isolation; \\\n"
    "    fi\n"
)


def _reasons(report: object, rule: str = "GP501") -> list[str]:
    return [u.reason for u in report.unfixed if u.finding.rule_id == rule]  # type: ignore[attr-defined]


def test_a_cuda_install_behind_an_argument_off_by_default_keeps_the_copy(tmp_path: Path) -> None:
    """J11's class: ``ARG INSTALL_FLASHATTN=false`` and flash-attn only under ``if [ ... ==
    "true" ]``: the image does not install it, so the copy is written, the RUN kept as it is
    and a note naming the argument above it."""
    df = f"{HEAD}ARG INSTALL_FLASHATTN=false\n{GUARDED}"
    report = run(project(tmp_path, {"Dockerfile": df}))
    text = created(report, "Dockerfile.rocm")
    assert "FROM rocm/dev-ubuntu-22.04:6.4-complete" in text
    assert "pip install --no-cache-dir flash-attn --no-build-isolation" in text
    note = next(ln for ln in text.splitlines() if "flash-attn, a CUDA build" in ln)
    assert note.startswith("# gpuport:") and "ARG INSTALL_FLASHATTN=false" in note
    assert text.index(note) < text.index("RUN pip install einops")
    # idempotent: with the copy in place nothing more is written
    again = run(project(tmp_path, {"Dockerfile.rocm": text}))
    assert not any(f.path == "Dockerfile.rocm" for f in again.files)


def test_a_cuda_install_the_build_takes_still_stops_the_copy(tmp_path: Path) -> None:
    """The same RUN with the argument on by default, without a default, or without any
    branch: no copy; an unknown value is named in the reason."""
    cases = {
        "on": f"{HEAD}ARG INSTALL_FLASHATTN=true\n{GUARDED}",
        "nodefault": f"{HEAD}ARG INSTALL_FLASHATTN\n{GUARDED}",
        "undeclared": f"{HEAD}{GUARDED}",
        "plain": f"{HEAD}RUN pip install flash-attn einops\n",
        "else": f"{HEAD}ARG LITE=false\n"
        'RUN if [ "$LITE" = "true" ]; then pip install einops; '
        'else pip install flash-attn; fi\nRUN if [ "$LITE" != "true" ]; then echo x; fi\n',
    }
    for name, df in cases.items():
        report = run(project(tmp_path / name, {"Dockerfile": df}))
        assert report.files == [], name
        reasons = _reasons(report)
        assert reasons and "flash-attn the default way" in reasons[0], name
        if name == "nodefault":
            assert "INSTALL_FLASHATTN has no default" in reasons[0]
            assert "whose value is not known" in reasons[0]


def test_an_else_branch_is_dead_when_the_test_holds(tmp_path: Path) -> None:
    """``else`` runs only when no earlier test holds: with ``LITE=false`` and ``!= "true"``
    the flash-attn of the ``else`` branch is not installed (copy with the note); with the
    test the other way round it is (no copy)."""
    run_ = (
        'RUN if [ "${LITE}" OP "true" ]; then \\\n'
        "      pip install torch==2.4.0 einops; \\\n"
        "    else \\\n"
        "      pip install flash-attn; \\\n"
        "    fi\n"
    )
    df = f"{HEAD}ARG LITE=false\n{run_.replace('OP', '!=')}"
    text = created(run(project(tmp_path / "a", {"Dockerfile": df})), "Dockerfile.rocm")
    assert "pip install flash-attn" in text and "flash-attn, a CUDA build" in text
    assert "no earlier test holds" in text
    df = f"{HEAD}ARG LITE=false\n{run_.replace('OP', '=')}"
    report = run(project(tmp_path / "b", {"Dockerfile": df}))
    assert report.files == [] and "flash-attn the default way" in _reasons(report)[0]


def test_an_argument_compose_passes_from_the_environment_is_unknown(tmp_path: Path) -> None:
    """J23's class: compose passes ``USE_GPU=${USE_GPU:-false}``: a build may take the
    branch, so no copy, and the reason names compose; a literal compose value that keeps
    the branch off does not stop it, a literal one that turns it on does."""
    df = f"{HEAD}ARG INSTALL_FLASHATTN=false\n{GUARDED}"
    for name, args, copied in (
        ("env", ["INSTALL_FLASHATTN=${INSTALL_FLASHATTN:-false}"], False),
        ("bare", ["INSTALL_FLASHATTN"], False),
        ("off", {"INSTALL_FLASHATTN": False}, True),
        ("on", {"INSTALL_FLASHATTN": "true"}, False),
    ):
        compose = yaml.safe_dump(
            {"services": {"app": {"build": {"context": ".", "args": args}}}}, sort_keys=False
        )
        report = run(project(tmp_path / name, {"Dockerfile": df, "compose.yml": compose}))
        made = any(f.path == "Dockerfile.rocm" for f in report.files)
        assert made is copied, name
        if name == "env":
            reason = _reasons(report)[0]
            assert "compose.yml passes it from the environment" in reason
            assert "whose value is not known" in reason


def test_a_compose_file_with_yaml_merges_makes_every_argument_unknown(tmp_path: Path) -> None:
    """Compose files are read as YAML nodes, never expanded (a chain of merges is
    quadratic): a file whose mappings merge others may pass any argument, so the branch is
    not known dead and the refusal stands, naming the file."""
    df = f"{HEAD}ARG INSTALL_FLASHATTN=false\n{GUARDED}"
    compose = (
        "x-build: &b\n  context: .\n  args:\n    INSTALL_FLASHATTN: 'true'\n"
        "services:\n  app:\n    build:\n      <<: *b\n"
    )
    report = run(project(tmp_path, {"Dockerfile": df, "compose.yml": compose}))
    assert not any(f.path == "Dockerfile.rocm" for f in report.files)
    assert "compose.yml may pass it" in _reasons(report)[0]


def test_a_build_script_passing_the_argument_makes_it_unknown(tmp_path: Path) -> None:
    df = f"{HEAD}ARG INSTALL_FLASHATTN=false\n{GUARDED}"
    for name, line, copied in (
        ("on", "docker build --build-arg INSTALL_FLASHATTN=true -t app .", False),
        ("env", "docker build --build-arg INSTALL_FLASHATTN -t app .", False),
        ("off", "docker build --build-arg INSTALL_FLASHATTN=false -t app .", True),
        ("other", "docker build --build-arg OTHER=true -f other/Dockerfile -t b .", True),
    ):
        files = {"Dockerfile": df, "build.sh": f"#!/bin/sh\n{line}\n"}
        report = run(project(tmp_path / name, files))
        assert any(f.path == "Dockerfile.rocm" for f in report.files) is copied, name


def test_a_base_image_argument_the_project_passes_gets_no_copy(tmp_path: Path) -> None:
    """``ARG BASE=nvidia/cuda:...`` then ``FROM ${BASE}``: the copy rewrites the default, so
    it is written only when no compose service or build script passes its own BASE (a
    compose override built from the copy keeps the service's build arguments)."""
    df = "ARG BASE=nvidia/cuda:12.1.0-devel-ubuntu22.04\nFROM ${BASE}\nRUN apt-get install -y git\n"
    text = created(run(project(tmp_path / "plain", {"Dockerfile": df})), "Dockerfile.rocm")
    assert "ARG BASE=rocm/dev-ubuntu-22.04:6.4-complete" in text and "FROM ${BASE}" in text
    compose = (
        "services:\n  app:\n    build:\n      context: .\n      args:\n"
        "        - BASE=${BASE:-nvidia/cuda:12.1.0-devel-ubuntu22.04}\n"
    )
    report = run(project(tmp_path / "passed", {"Dockerfile": df, "compose.yml": compose}))
    assert not any(f.path == "Dockerfile.rocm" for f in report.files)
    reason = _reasons(report)[0]
    assert "compose.yml passes BASE from the environment" in reason
    script = "docker build --build-arg BASE=ubuntu:22.04 -t app .\n"
    report = run(project(tmp_path / "script", {"Dockerfile": df, "Makefile": f"b:\n\t{script}"}))
    assert not any(f.path == "Dockerfile.rocm" for f in report.files)
    assert "Makefile passes BASE as ubuntu:22.04" in _reasons(report)[0]
    # the default written in the FROM line itself: ${BASE:-image}, with no ARG default
    inline = (
        "ARG BASE\nFROM ${BASE:-nvidia/cuda:12.1.0-devel-ubuntu22.04}\nRUN apt-get install -y git\n"
    )
    text = created(run(project(tmp_path / "inline", {"Dockerfile": inline})), "Dockerfile.rocm")
    assert "FROM ${BASE:-rocm/dev-ubuntu-22.04:6.4-complete}" in text and "nvidia" not in text
    passed = {"Dockerfile": inline, "compose.yml": compose}
    report = run(project(tmp_path / "inline-passed", passed))
    assert not any(f.path == "Dockerfile.rocm" for f in report.files)
    assert "compose.yml passes BASE from the environment" in _reasons(report)[0]


def test_compose_points_at_the_copy_relative_to_its_build_context(tmp_path: Path) -> None:
    """A service that names its Dockerfile from a context above it (``context: ../..``,
    ``dockerfile: ./docker/cuda/Dockerfile``) gets the copy named the same way: Compose
    reads ``dockerfile`` relative to the context, so a bare ``Dockerfile.rocm`` pointed at
    the project's root."""
    compose = (
        "services:\n  app:\n    build:\n      context: ../..\n"
        "      dockerfile: ./docker/cuda/Dockerfile\n    deploy:\n      resources:\n"
        "        reservations:\n          devices:\n            - driver: nvidia\n"
        "              capabilities: [gpu]\n"
    )
    files = {
        "docker/cuda/Dockerfile": f"{HEAD}RUN pip install torch==2.4.0\n",
        "docker/cuda/docker-compose.yml": compose,
    }
    report = run(project(tmp_path, files))
    text = created(report, "docker/cuda/docker-compose.rocm.yml").replace("!reset ", "")
    override = yaml.safe_load(text)
    assert override["services"]["app"]["build"]["dockerfile"] == "docker/cuda/Dockerfile.rocm"
    assert (tmp_path / "docker/cuda/Dockerfile").exists()


def test_argument_defaults_and_shell_branches() -> None:
    scope = ArgScope()
    for chunk in (
        'ARG BASE="nvidia/cuda:12.1.0" FLAG',
        "ARG ON=${FLAG:-yes} OFF=${MISSING:-no}",
        "FROM ${BASE}",
        "ARG BASE",
        "ENV ON=1",
    ):
        scope.feed(chunk)
    assert scope.value("BASE") == "nvidia/cuda:12.1.0"  # a stage's bare ARG: the global
    assert scope.value("ON") is None  # an ENV sets it
    assert scope.value("OFF") is None  # not declared in the stage
    assert expand("${A:-x}-$B", {"A": "", "B": "b"}) == "x-b"
    assert expand("${A:-x}", {"A": None}) is None
    text = (
        'if [ "$A" = "1" ] && [ "$B" = "1" ]; then one; '
        'elif [ "$A" = "0" ] || [ -n "$C" ]; then two; else three; fi'
    )
    br = shell_branches(text, {"A": ["0"], "B": ["1"], "C": None})
    live = br.live(text)
    assert "one" not in live and "two" in live and "three" not in live
    unknown = shell_branches(text, {"A": ["2"], "B": ["1"], "C": None})
    assert "one" not in unknown.live(text) and unknown.why_unknown(text.index("two"))
    assert unknown.why_unknown(text.index("three")) is not None
    # nested: an inner branch of a dead outer one is dead too
    nested = 'if [ "$A" = "1" ]; then if [ "$B" = "1" ]; then inner; fi; fi; after'
    assert "inner" not in shell_branches(nested, {"A": ["0"], "B": ["1"]}).live(nested)
    assert "after" in shell_branches(nested, {"A": ["0"], "B": ["1"]}).live(nested)
    # a test not read is unknown, never dead
    odd = 'if grep -q x "$A"; then body; fi'
    assert "body" in shell_branches(odd, {"A": ["0"]}).live(odd)
