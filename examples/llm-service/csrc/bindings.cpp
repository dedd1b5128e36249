#include <torch/extension.h>

torch::Tensor rmsnorm(torch::Tensor input, torch::Tensor weight, double eps);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("rmsnorm", &rmsnorm, "Fused RMSNorm (CUDA)");
}
