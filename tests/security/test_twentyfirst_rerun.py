"""Issue 23: what the twenty-first re-run found (session 9, a short pass on the code of that
session), each asked of the code that failed."""

from __future__ import annotations

from tests.security.test_stalls import _within


def test_a_test_operand_of_many_two_valued_arguments_is_unknown() -> None:
    """F1: ``RUN if [ "$A$A...$A" = x ]`` with A known to take two values (the Dockerfile's
    default and compose's build arg) was expanded for every combination, one per reference
    (20 references: 2^20 strings, 68 s; distinct names the same). A name takes one value per
    combination now, and more than 64 combinations is unknown."""
    from gpuport.port.docker_args import MOST_COMBOS, _operand

    values: dict[str, list[str] | None] = {"A": ["0", "1"], "B": ["x", "y"]}
    assert sorted(_operand('"$A$A"', values) or []) == ["00", "11"]  # one value per name
    assert sorted(_operand("${A}-${B}", values) or []) == ["0-x", "0-y", "1-x", "1-y"]
    many = {f"A{i}": ["0", "1"] for i in range(40)}
    word = "".join(f"$A{i}" for i in range(40))
    _within(lambda: _operand(word, dict(many)), 0.2)
    assert _operand(word, dict(many)) is None
    assert 2**6 <= MOST_COMBOS < 2**7


def test_an_argument_chain_that_doubles_its_value_is_unknown() -> None:
    """F2: ``ARG A{k}=${A{k-1}}${A{k-1}}`` doubled the stored value per line (a 718-byte
    Dockerfile wanted 2 GB, then 8 GB; past a memory limit an internal error). An expanded
    value over 4 KB is unknown now, and so is every value built from it."""
    from gpuport.port.docker_args import MOST_VALUE, ArgScope

    scope = ArgScope()
    scope.feed("ARG A0=xy")
    for k in range(1, 60):
        scope.feed(f"ARG A{k}=${{A{k - 1}}}${{A{k - 1}}}")
    assert scope.value("A11") == "xy" * 2**11  # 4 KB: kept
    assert len("xy" * 2**12) > MOST_VALUE and scope.value("A12") is None
    assert scope.value("A59") is None


def test_many_arguments_in_one_stage() -> None:
    """Beside F2: each ARG line copied every name seen so far (quadratic in the ARG lines of
    a stage); the names are looked up through a view now."""
    from gpuport.port.docker_args import ArgScope

    def feed() -> ArgScope:
        scope = ArgScope()
        scope.feed("ARG G=1")
        scope.feed("FROM ubuntu")
        for k in range(30_000):
            scope.feed(f"ARG A{k}=${{G}}{k}")
        return scope

    _within(feed, 1.0)
    assert feed().value("A29999") == "129999"


def _old_live(text: str, dead: list[tuple[int, int, str]]) -> str:
    out = list(text)
    for lo, hi, _ in dead:
        for i in range(lo, hi):
            if out[i] != "\n":
                out[i] = " "
    return "".join(out)


def test_nested_false_tests_in_one_run_blank_in_linear_time() -> None:
    """F5: N nested ``if [ a = b ]; then`` in one RUN are N dead ranges over nearly all of it,
    each blanked character by character (460 KB: 109 s). The ranges are merged first; the text
    is the same as before (checked on random ranges)."""
    import random

    from gpuport.port.docker_args import Branches

    rng = random.Random(23)  # noqa: S311 - test data, not secrets
    for _ in range(300):
        text = "".join(rng.choice("ab \n;") for _ in range(rng.randrange(0, 80)))
        dead = []
        for _ in range(rng.randrange(0, 6)):
            lo = rng.randrange(0, len(text) + 1)
            dead.append((lo, rng.randrange(lo, len(text) + 1), "why"))
        assert Branches(dead=dead, unknown=[]).live(text) == _old_live(text, dead)
    n = 20_000
    text = "if [ a = b ]; then " * n + "pip install torch; " + "fi; " * n
    dead = [(19 * i, len(text) - 4 * i, "a = b") for i in range(n)]
    branches = Branches(dead=dead, unknown=[])
    _within(lambda: branches.live(text), 0.5)


def test_many_build_arg_values_are_unknown_past_the_combinations() -> None:
    """F4: 8,000 ``docker build --build-arg A=v{i}`` lines gave A 8,000 values, and every
    ``[ "$A" = "$A" ]`` compared all pairs (291 KB: 22 s, times the tests). An operand of more
    than 64 combinations is unknown (F1's bound)."""
    from gpuport.port.docker_args import _test

    values: dict[str, list[str] | None] = {"A": [f"v{i}" for i in range(8_000)]}
    _within(lambda: _test('[ "$A" = "$A" ]', values), 0.1)
    assert _test('[ "$A" = "$A" ]', values) is None
    assert _test('[ "$A" = "v1" ]', {"A": ["v1"]}) is True
