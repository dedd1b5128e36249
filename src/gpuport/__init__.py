"""gpuport: answers for *your* project about moving AI workloads between CUDA and ROCm."""

__version__ = "0.1.0"
