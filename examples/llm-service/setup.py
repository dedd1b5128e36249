"""Builds the fused RMSNorm kernel used by the service."""

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

NVCC_FLAGS = [
    "-O3",
    "--use_fast_math",
    "-gencode", "arch=compute_80,code=sm_80",
    "-gencode", "arch=compute_90,code=sm_90",
]

setup(
    name="llm-service",
    version="0.3.0",
    packages=["service"],
    ext_modules=[
        CUDAExtension(
            name="service._fused",
            sources=["csrc/fused_rmsnorm.cu", "csrc/bindings.cpp"],
            extra_compile_args={"cxx": ["-O3"], "nvcc": NVCC_FLAGS},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
    install_requires=["torch>=2.3", "transformers>=4.44"],
)
