"""Two ~500-file projects with few findings, long verdict reasons and long knowledge-base
fixes (issue 29): shaped like torchtune (4 findings above info, a route named by three files)
and pytorch-lightning (13; torch's install fix, nvidia-smi, NVIDIA-only imports)."""

from __future__ import annotations

from pathlib import Path


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _filler(root: Path, package: str, written: int, files: int) -> Path:
    for i in range(files - written):
        _write(
            root,
            f"{package}/modules/experimental/module_with_a_long_descriptive_name_{i}.py",
            f"import math\n\n\ndef f{i}(x):\n    return math.tanh(x)\n",
        )
    return root


def build_tune(root: Path, files: int = 500) -> Path:
    """torchtune's shape: a ROCm route in a wheel workflow, the README and the install docs;
    in core a CUDA-graph capture and cudnn.benchmark; an extra's loose pin; an example."""
    _write(
        root,
        "pyproject.toml",
        '[project]\nname = "acme-tune"\nversion = "1.0"\ndependencies = ["numpy>=1.26"]\n\n'
        '[project.optional-dependencies]\ndev = ["bitsandbytes>=0.43.0"]\n',
    )
    _write(
        root,
        ".github/workflows/build_linux_wheels_for_every_platform.yaml",
        "name: wheels\non: push\njobs:\n  build:\n    uses: pytorch/test-infra/.github/"
        "workflows/build_wheels_linux.yml@main\n    with:\n      with-rocm: enable\n",
    )
    install = (
        "pip install --pre torch torchvision --index-url "
        "https://download.pytorch.org/whl/nightly/cu126 # options: cpu/cu126/rocm6.3\n"
    )
    _write(root, "README.md", "# acme-tune\n\n" + install)
    _write(root, "docs/source/install.rst", "Install\n=======\n\n::\n\n    " + install)
    _write(
        root,
        "acme_tune/modules/attention_utils.py",
        'import torch\n\n\ndef compiled(m):\n    return torch.compile(m, mode="max-autotune")\n',
    )
    _write(
        root,
        "acme_tune/training/seed.py",
        "import torch\n\n\ndef seed():\n    torch.backends.cudnn.benchmark = True\n",
    )
    _write(
        root,
        "recipes/generate.py",
        'import torch\n\n\ndef gen(m):\n    return torch.compile(m, mode="max-autotune")\n',
    )
    return _filler(root, "acme_tune", 7, files)


def build_lightning(root: Path, files: int = 500) -> Path:
    """pytorch-lightning's shape: no route; torch required by two requirement files of core
    (the install fix is a long command), nvidia-smi, Torch-TensorRT and Transformer Engine
    imports in core; examples, tests and tooling with the same and more."""
    for part in ("fabric", "pytorch"):
        _write(root, f"requirements/{part}/base.txt", "numpy>=1.26\npackaging\ntorch>=2.1\n")
        _write(root, f"examples/{part}/fp8_transformer/requirements.txt", "torchao>=0.7\n")
        _write(root, f"examples/{part}/fp8_transformer/train.py", "import torchao\n")
        _write(
            root,
            f"tests/tests_{part}/launchers/test_multiprocessing.py",
            "import torch\n\n\ndef test_x():\n    torch.backends.cudnn.benchmark = True\n",
        )
    _write(root, "requirements/typing.txt", "torch>=2.1\n")
    _write(
        root,
        "pyproject.toml",
        '[project]\nname = "acme-lightning"\nversion = "1.0"\ndependencies = ["torch>=2.1"]\n',
    )
    _write(
        root,
        "src/acme_lightning/accelerators/cuda.py",
        "import subprocess\n\n\ndef smi():\n"
        '    return subprocess.run(["nvidia-smi", "-L"], capture_output=True)\n',
    )
    _write(
        root,
        "src/acme_lightning/core/module.py",
        "def export(m):\n    import torch_tensorrt\n\n    return torch_tensorrt.compile(m)\n",
    )
    _write(
        root,
        "src/acme_lightning/plugins/precision/transformer_engine.py",
        "def plugin():\n    import transformer_engine.pytorch as te\n\n    return te\n",
    )
    _write(
        root,
        "tests/tests_pytorch/models/test_torch_tensorrt.py",
        "def test_trt():\n    import torch_tensorrt\n\n    assert torch_tensorrt\n",
    )
    return _filler(root, "src/acme_lightning", 15, files)
