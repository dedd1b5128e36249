"""One fuzz target of ``tests/security/fuzz_targets.py`` under atheris (libFuzzer), coverage-
guided: gpuport's modules are instrumented, so inputs that reach new code are kept and mutated
further. Run by ``tools/fuzz.py`` (``make fuzz``), one process per target:

    python tools/fuzz_atheris.py TARGET [libFuzzer options] CORPUS_DIR [SEED_DIR ...]

A crash (an exception the target lets through) or a hang (``-timeout``) stops the process
and leaves the input in ``-artifact_prefix``.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "src"))


def main() -> None:
    import atheris

    name = sys.argv.pop(1)
    with atheris.instrument_imports(include=["gpuport"]):
        import importlib
        import pkgutil

        import gpuport

        for info in pkgutil.walk_packages(gpuport.__path__, "gpuport."):
            # every module now, instrumented (one imported later, on a path only some inputs
            # take, would not be); the CLI and the benchmark workloads are no reader
            if not any(p in info.name for p in (".fixtures", ".cli", ".workloads", ".render")):
                importlib.import_module(info.name)
        from tests.security import fuzz_targets

        target = fuzz_targets.TARGETS[name]
        for seed in fuzz_targets.seeds(name):  # imports what the target uses, instrumented
            target(seed)

    atheris.Setup(sys.argv, target)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
