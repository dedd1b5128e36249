"""Issue 23: the thirty-first re-run (full, an eleventh reviewer, on c708797). Every finding
came through a variable of the project's environment that gpuport's own process read: an
NSS module through LD_LIBRARY_PATH before the restart (F1), locale names that are paths (F2),
``_PYTHON_SYSCONFIGDATA_NAME`` + ``BROWSER`` (F3), ``PYTHONINTMAXSTRDIGITS=0`` (F4),
``TERMINAL_WIDTH`` (F5), ``OPENSSL_CONF`` (F6), ``TMP``/``TEMP`` through a link (F7),
``PYTHONTRACEMALLOC`` (F8), many deep library roots (F9). Each test fails on the code before."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tests.security.startup_env import SRC, run_python


def _project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    (proj / "lib").mkdir()
    (proj / "k.cu").write_text("__global__ void k() {}\n")
    return proj


_NO_NSS_BEFORE_RESTART = (
    "import os, sys, types\n"
    "called = []\n"
    "fake = types.ModuleType('pwd')\n"
    "def getpwuid(uid):\n"
    "    called.append(uid)\n"
    "    raise KeyError(uid)\n"
    "fake.getpwuid = getpwuid\n"
    "sys.modules['pwd'] = fake\n"
    "def execve(exe, argv, env):\n"
    "    print('restart', called, repr(env.get('LD_LIBRARY_PATH')))\n"
    "    sys.stdout.flush(); os._exit(0)\n"
    "os.execve = execve\n"
    "sys.argv = ['gpuport', *ARGS]\n"
    "from gpuport import startup\n"
    "startup.clean_start()\n"
    "print('no restart', called)\n"
)


def test_no_nss_lookup_before_the_restart_and_a_named_project_counts(tmp_path: Path) -> None:
    proj = _project(tmp_path)
    env = {"LD_LIBRARY_PATH": f"{proj / 'lib'}:/usr/lib"}
    done = run_python(proj, _NO_NSS_BEFORE_RESTART.replace("ARGS", "['--version']"), env)
    assert done.stdout.strip() == "restart [] '/usr/lib'", done.stdout + done.stderr
    # run from outside, the project named on the command line (F1, second part)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    code = _NO_NSS_BEFORE_RESTART.replace("ARGS", f"['scan', {str(proj)!r}]")
    done = run_python(outside, code, env)
    assert done.stdout.strip() == "restart [] '/usr/lib'", done.stdout + done.stderr


_AFTER_START = (
    "import os, sys, json\n"
    "from gpuport import startup\n"
    "startup.clean_start()\n"
    "import _tracemalloc\n"
    "names = ['LANGUAGE', 'LANG', '_PYTHON_SYSCONFIGDATA_NAME', 'BROWSER', 'OPENSSL_CONF',\n"
    "         'OPENSSL_MODULES', 'TERMINAL_WIDTH']\n"
    "print(json.dumps({'env': {n: os.environ.get(n) for n in names},\n"
    "                  'digits': sys.get_int_max_str_digits(),\n"
    "                  'tracing': _tracemalloc.is_tracing()}))\n"
)


def test_what_gpuports_own_process_never_needs_is_gone(tmp_path: Path) -> None:
    import json

    proj = _project(tmp_path)
    env = {
        "LANGUAGE": str(proj / "l10n"),
        "LANG": "C.UTF-8",
        "_PYTHON_SYSCONFIGDATA_NAME": "antigravity",
        "BROWSER": str(proj / "open-docs.sh"),
        "OPENSSL_CONF": str(proj / "ssl" / "openssl.cnf"),
        "OPENSSL_MODULES": str(proj / "ssl"),
        "TERMINAL_WIDTH": "150000000",
        "PYTHONINTMAXSTRDIGITS": "0",
        "PYTHONTRACEMALLOC": "5",
        "GPUPORT_CLEAN_START": "1",  # as if restarted already: what the process itself undoes
    }
    done = run_python(tmp_path, _AFTER_START, env)  # from outside a project too
    got = json.loads(done.stdout)
    assert got["env"] == {
        "LANGUAGE": None, "LANG": "C.UTF-8", "_PYTHON_SYSCONFIGDATA_NAME": None,
        "BROWSER": None, "OPENSSL_CONF": None, "OPENSSL_MODULES": None,
        "TERMINAL_WIDTH": "1000",
    }  # fmt: skip
    assert got["digits"] == 4300 and got["tracing"] is False


def test_sysconfigdata_and_browser_run_nothing(tmp_path: Path) -> None:
    proj = _project(tmp_path)
    marker = tmp_path / "ran"
    browser = proj / "open-docs.sh"
    browser.write_text(f"#!/bin/sh\ntouch {marker}\n")
    browser.chmod(0o755)
    done = subprocess.run(
        [sys.executable, "-m", "gpuport", "scan", ".", "--format", "json"], cwd=proj,
        capture_output=True, text=True, timeout=300, check=False,
        env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "h"),
             "_PYTHON_SYSCONFIGDATA_NAME": "antigravity", "BROWSER": str(browser)},
    )  # fmt: skip
    time.sleep(1)  # webbrowser starts the program without waiting for it
    assert done.returncode in (0, 1), done.stderr[-300:]
    assert not marker.exists()


def test_tmp_and_temp_through_a_project_link_are_not_used(tmp_path: Path) -> None:
    proj = _project(tmp_path)
    target = tmp_path / "anything"
    target.mkdir()
    (proj / "tmp").symlink_to(target)
    code = (
        "import tempfile, sys\n"
        "from gpuport import subproc\n"
        f"subproc.neutral_tempdir([{str(proj)!r}])\n"
        "print(tempfile.gettempdir())\n"
    )
    for name in ("TMP", "TEMP"):
        done = run_python(proj, code, {name: str(proj / "tmp"), "GPUPORT_CLEAN_START": "1"})
        assert done.stdout.strip() in ("/tmp", "/var/tmp"), (name, done.stdout, done.stderr)


def test_many_deep_library_roots_do_not_stall_the_start(tmp_path: Path) -> None:
    proj = _project(tmp_path)
    deep = ":".join(["/a" * 255] * 250)
    names = ("ROCM_PATH", "ROCM_HOME", "HIP_PATH", "HSA_PATH", "CUDA_HOME")
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "gpuport", "--version"], cwd=proj, capture_output=True,
        text=True, timeout=300, check=False,
        env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "h"),
             **dict.fromkeys(names, deep)},
    )  # fmt: skip
    assert time.monotonic() - started < 30
    assert done.returncode == 0, done.stderr[-300:]
