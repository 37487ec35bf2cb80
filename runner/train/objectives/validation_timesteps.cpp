#include "train/objectives/validation_timesteps.h"

namespace sinter::train {

std::vector<int64_t> validationTimesteps(int64_t minTimestep, int64_t maxTimestep, int count) {
  // numpy.linspace: step = (stop - start) / (num - 1), values i * step + start, cast to int by
  // truncation; the ends (start and stop) are dropped.
  const int num = count + 2;
  const double step = static_cast<double>(maxTimestep - minTimestep) / (num - 1);
  std::vector<int64_t> out;
  for (int i = 1; i < num - 1; ++i) out.push_back(static_cast<int64_t>(i * step + static_cast<double>(minTimestep)));
  return out;
}

}  // namespace sinter::train
