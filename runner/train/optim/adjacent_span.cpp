#include "train/optim/adjacent_span.h"

namespace sinter::train {

torch::Tensor adjacentSpan(const std::vector<torch::Tensor>& tensors) {
  if (tensors.empty()) return {};
  const torch::Tensor& first = tensors.front();
  if (!first.defined() || !first.has_storage()) return {};
  int64_t next = first.storage_offset(), total = 0;
  for (const torch::Tensor& t : tensors) {
    if (!t.defined() || !t.has_storage() || !t.is_contiguous() || t.scalar_type() != first.scalar_type() ||
        t.device() != first.device() || !t.storage().is_alias_of(first.storage()) || t.storage_offset() != next)
      return {};
    next += t.numel();
    total += t.numel();
  }
  // A view of the first tensor's storage over all of them: writes through it reach every tensor.
  return first.as_strided({total}, {1}, first.storage_offset());
}

std::vector<torch::Tensor> asOneSpanIfAdjacent(const std::vector<torch::Tensor>& tensors) {
  const torch::Tensor span = adjacentSpan(tensors);
  if (span.defined()) return {span};
  return tensors;
}

std::vector<torch::Tensor> zerosAdjacent(const std::vector<torch::Tensor>& like) {
  std::vector<torch::Tensor> out;
  if (like.empty()) return out;
  int64_t total = 0;
  for (const torch::Tensor& t : like) total += t.numel();
  const torch::Tensor flat = torch::zeros({total}, like.front().options());
  int64_t offset = 0;
  for (const torch::Tensor& t : like) {
    out.push_back(flat.narrow(0, offset, t.numel()).view(t.sizes()));
    offset += t.numel();
  }
  return out;
}

}  // namespace sinter::train
