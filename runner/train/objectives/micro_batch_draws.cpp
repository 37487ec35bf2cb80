#include "train/objectives/micro_batch_draws.h"

#include <stdexcept>
#include <string>

namespace sinter::train {

std::vector<torch::Tensor> drawPerMicroBatch(int64_t microBatches, const std::vector<torch::Tensor>& inputs, const MicroBatchDraw& draw) {
  if (microBatches <= 1) return draw(inputs);
  if (inputs.empty()) throw std::invalid_argument("drawPerMicroBatch: no inputs to cut into micro-batches");
  const int64_t rows = inputs.front().size(0);
  if (rows % microBatches != 0)
    throw std::invalid_argument("drawPerMicroBatch: " + std::to_string(rows) + " samples do not make " + std::to_string(microBatches) +
                                " equal micro-batches");
  const int64_t each = rows / microBatches;
  std::vector<std::vector<torch::Tensor>> parts;
  for (int64_t m = 0; m < microBatches; ++m) {
    std::vector<torch::Tensor> slice;
    for (const torch::Tensor& t : inputs) {
      if (t.size(0) != rows) throw std::invalid_argument("drawPerMicroBatch: inputs of different batch sizes");
      slice.push_back(t.narrow(0, m * each, each));
    }
    std::vector<torch::Tensor> drawn = draw(slice);
    if (!parts.empty() && drawn.size() != parts.front().size())
      throw std::logic_error("drawPerMicroBatch: micro-batches drew different numbers of tensors");
    parts.push_back(std::move(drawn));
  }
  std::vector<torch::Tensor> joined;
  for (size_t i = 0; i < parts.front().size(); ++i) {
    std::vector<torch::Tensor> pieces;
    for (const auto& p : parts) pieces.push_back(p[i]);
    joined.push_back(torch::cat(pieces, 0));
  }
  return joined;
}

}  // namespace sinter::train
