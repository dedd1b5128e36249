"""Issue 23: what the twentieth independent re-run found (session 9), each asked of the code
that failed, timed against a bound scaled to this machine (see test_stalls.py)."""

from __future__ import annotations

from pathlib import Path

from tests.security.test_stalls import _scan, _within


def test_compose_services_that_all_merge_one_big_anchor(tmp_path: Path) -> None:
    """F1: 4,000 services that are each only ``<<: *big``, a mapping of 4,000 keys (128 KB):
    every key looked up of every service walked the whole of ``big`` (11 s; 0.5 MB past
    2 min). Each mapping's own keys are indexed once and each (mapping, key) answer kept."""
    n = 4_000
    text = "x-big: &big\n" + "".join(f"  k{i}: v\n" for i in range(n))
    text += "services:\n" + "".join(f"  s{i}:\n    <<: *big\n" for i in range(n))
    text += "  gpu:\n    <<: *big\n    image: rocm/pytorch:latest\n"
    (tmp_path / "docker-compose.yml").write_text(text)
    _within(lambda: _scan(tmp_path), 2.0)


def test_a_merge_still_answers_own_keys_first_and_cycles_end() -> None:
    import yaml

    from gpuport.scan.rules.containers.compose import _get, _path

    doc = yaml.compose(
        "a: &a\n  image: one\n  env: x\nb: &b\n  <<: *a\n  image: two\n"
        "c:\n  <<: [*b, *a]\n  other: 1\n"
    )
    assert doc is not None
    top = {k.value: v for k, v in doc.value}
    assert getattr(_path(top["b"], "image"), "value", None) == "two"  # its own key wins
    assert getattr(_path(top["c"], "image"), "value", None) == "two"  # the first merge wins
    assert getattr(_path(top["c"], "env"), "value", None) == "x"  # through b's merge
    assert _get(top["c"], "missing") is None
