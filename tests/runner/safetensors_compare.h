#pragma once
// Whether two safetensors files hold the same keys with values within `tol` (absolute), for the
// run tests that compare what two runs saved.
#include <torch/torch.h>

#include <string>

#include "io/safetensors.h"

namespace sinter::test {

inline bool sameTensors(const std::string& a, const std::string& b, double tol) {
  io::SafetensorsFile fa(a), fb(b);
  if (fa.keys() != fb.keys()) return false;
  for (const auto& k : fa.keys())
    if (!torch::allclose(fa.tensor(k).to(torch::kFloat64), fb.tensor(k).to(torch::kFloat64), 0, tol)) return false;
  return true;
}

}  // namespace sinter::test
