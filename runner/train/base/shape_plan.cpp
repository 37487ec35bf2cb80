#include "train/base/shape_plan.h"

namespace sinter::train {

std::string StepShape::describe() const {
  return "batch " + std::to_string(batch) + ", latents " + std::to_string(height) + "x" + std::to_string(width) + ", " +
         std::to_string(tokens) + " tokens" + (microBatches > 1 ? ", " + std::to_string(microBatches) + " micro-batches joined" : "");
}

double shareOfBatches(const std::vector<data::ShapeSignature>& signatures, size_t n) {
  long long covered = 0, total = 0;
  for (size_t i = 0; i < signatures.size(); ++i) {
    total += signatures[i].countPerEpoch;
    if (i < n) covered += signatures[i].countPerEpoch;
  }
  return total == 0 ? 0.0 : static_cast<double>(covered) / static_cast<double>(total);
}

StaticBuffers& ShapePlan::buffers(const StepShape& shape, const std::function<StaticBuffers()>& make) {
  auto it = buffers_.find(shape);
  if (it == buffers_.end()) it = buffers_.emplace(shape, make()).first;
  return it->second;
}

}  // namespace sinter::train
