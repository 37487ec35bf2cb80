#pragma once
// Whether two safetensors files hold the same keys with values within `tol` (absolute), or how far
// apart they are, for the run tests that compare what two runs saved.
#include <torch/torch.h>

#include <cmath>
#include <string>

#include "io/safetensors.h"

namespace sinter::test {

// ||a - b|| / ||b|| over every tensor of two files with the same keys (1 when they differ in keys).
inline double relativeDifference(const std::string& a, const std::string& b) {
  io::SafetensorsFile fa(a), fb(b);
  if (fa.keys() != fb.keys()) return 1.0;
  double diff = 0, norm = 0;
  for (const auto& k : fa.keys()) {
    const torch::Tensor x = fa.tensor(k).to(torch::kFloat64), y = fb.tensor(k).to(torch::kFloat64);
    diff += (x - y).pow(2).sum().item<double>();
    norm += y.pow(2).sum().item<double>();
  }
  return std::sqrt(diff / norm);
}

inline bool sameTensors(const std::string& a, const std::string& b, double tol) {
  io::SafetensorsFile fa(a), fb(b);
  if (fa.keys() != fb.keys()) return false;
  for (const auto& k : fa.keys())
    if (!torch::allclose(fa.tensor(k).to(torch::kFloat64), fb.tensor(k).to(torch::kFloat64), 0, tol)) return false;
  return true;
}

}  // namespace sinter::test
