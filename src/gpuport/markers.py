"""The files that mark a project's folder (standard library only: read at start-up).

Used to find the project a path or the current folder lies in (:func:`gpuport.subproc.
avoided`, :func:`gpuport.startup.project_tops`): the highest folder above it with one of these,
below ``/`` and the home folder.
"""

__all__ = ["MARKERS"]

MARKERS: tuple[str, ...] = (
    ".git", "pyproject.toml", "setup.py", "setup.cfg", "CMakeLists.txt", "Makefile",
    "requirements.txt", ".envrc", "environment.yml", "Dockerfile", ".venv",
    # the environment managers and build tools that also put a project's folders on PATH or
    # set its variables (twenty-fifth re-run F2: mise, asdf, pixi, pipenv, devbox, dotenv)
    "mise.toml", ".mise.toml", ".tool-versions", "pixi.toml", "Pipfile", "devbox.json", ".env",
    "environment.yaml", ".hg", ".svn", "meson.build", "package.json", "Cargo.toml", "go.mod",
    "flake.nix", "shell.nix", "default.nix", ".python-version", ".direnv", "WORKSPACE",
    "MODULE.bazel", "configure.ac", "justfile", "Justfile", "tox.ini", "noxfile.py",
    "conanfile.txt", "conanfile.py", "vcpkg.json", ".devcontainer",
    # mise's other config files, flox and devenv (twenty-sixth re-run F1)
    "mise.local.toml", ".mise.local.toml", ".config/mise.toml", ".config/mise", "mise",
    ".mise", ".rtx.toml", ".flox", "devenv.nix", "devenv.yaml",
)  # fmt: skip
