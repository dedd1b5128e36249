"""Issue 23: the eighteenth independent re-run's stalls (session 8), each asked of the code
that stalled, against a bound scaled to this machine (see test_stalls.py)."""

from __future__ import annotations

from tests.security.test_stalls import _within


def test_makefiles_that_all_include_each_other() -> None:
    """F1: N Makefiles that each ``include *.mk`` (with a finding each): every Makefile matched
    its pattern against every build file and read the uses of every other one's text (200 KB of
    small files: 38 s, 400 KB past 120 s). Each pattern is matched once per scan and each
    file's uses read once now."""
    from gpuport.scan.project.on_route import make_flow_of

    n = 3_000
    files = {
        f"mk/f{i:05}.mk": f"include *.mk\nNVCCFLAGS{i} = -arch=sm_80 $(X{i})\n"
        f"k{i}.o: k{i}.cu\n\tnvcc $(NVCCFLAGS{(i + 1) % n}) -c $<\n"
        for i in range(n)
    }

    def flows() -> None:
        for rel, text in files.items():
            flow = make_flow_of(rel, text, files)
            # used by the next file's recipe, which every file includes: on the route
            assert not flow.unshown

    _within(flows, 2.0)
