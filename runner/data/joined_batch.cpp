#include "data/joined_batch.h"

#include <functional>

namespace sinter::data {

namespace {

std::string batchShapeLabel(const Batch& b) {
  return std::to_string(b.lossWeights.defined() ? b.lossWeights.size(0) : 0) + "x" + toString(b.bucket);
}

// The batches' `field` (undefined in all, or defined in all with one shape past dim 0) joined along
// dim 0; false when they differ.
bool joinTensor(const std::vector<Batch>& batches, const std::function<const torch::Tensor&(const Batch&)>& field, torch::Tensor* out) {
  const torch::Tensor& first = field(batches.front());
  std::vector<torch::Tensor> parts;
  for (const Batch& b : batches) {
    const torch::Tensor& t = field(b);
    if (t.defined() != first.defined()) return false;
    if (!t.defined()) continue;
    if (t.dim() == 0 || t.dim() != first.dim() || t.sizes().slice(1) != first.sizes().slice(1) || t.scalar_type() != first.scalar_type() ||
        t.device() != first.device())
      return false;
    parts.push_back(t);
  }
  if (first.defined()) *out = torch::cat(parts, 0);
  return true;
}

// The batches' maps of tensors (token ids, cached text outputs), name by name.
bool joinTensorMaps(const std::vector<Batch>& batches, const std::function<const std::map<std::string, torch::Tensor>&(const Batch&)>& field,
                    std::map<std::string, torch::Tensor>* out) {
  for (const Batch& b : batches) {
    const auto& map = field(b);
    if (map.size() != field(batches.front()).size()) return false;
    for (const auto& entry : map)
      if (!field(batches.front()).count(entry.first)) return false;
  }
  for (const auto& entry : field(batches.front())) {
    const std::string& name = entry.first;
    if (!joinTensor(batches, [&](const Batch& b) -> const torch::Tensor& { return field(b).at(name); }, &(*out)[name])) return false;
  }
  return true;
}

}  // namespace

std::optional<Batch> joinBatches(const std::vector<Batch>& batches, std::string* whyNot) {
  auto refuse = [&](const std::string& why) -> std::optional<Batch> {
    if (whyNot) *whyNot = why;
    return std::nullopt;
  };
  if (batches.size() < 2) return refuse("a single micro-batch");
  const Batch& first = batches.front();
  for (const Batch& b : batches) {
    if (!(b.bucket == first.bucket) || b.lossWeights.size(0) != first.lossWeights.size(0) || b.microBatches != 1) {
      std::string shapes;
      for (const Batch& s : batches) shapes += (shapes.empty() ? "" : ", ") + batchShapeLabel(s);
      return refuse("micro-batches of different shapes (" + shapes + ")");
    }
    if (b.networkMultiplier != first.networkMultiplier) return refuse("micro-batches of datasets with different network_multiplier");
  }
  Batch joined;
  const Batch& last = batches.back();
  joined.epoch = last.epoch;
  joined.indexInEpoch = last.indexInEpoch;
  joined.datasetIndex = last.datasetIndex;
  joined.bucket = first.bucket;
  joined.networkMultiplier = first.networkMultiplier;
  joined.microBatches = static_cast<int>(batches.size());
  for (const Batch& b : batches) {
    joined.imageIndices.insert(joined.imageIndices.end(), b.imageIndices.begin(), b.imageIndices.end());
    joined.captions.insert(joined.captions.end(), b.captions.begin(), b.captions.end());
    joined.flipped.insert(joined.flipped.end(), b.flipped.begin(), b.flipped.end());
  }
  using Field = torch::Tensor Batch::*;
  for (const auto& [member, name] : std::vector<std::pair<Field, const char*>>{{&Batch::images, "images"},
                                                                               {&Batch::latents, "latents"},
                                                                               {&Batch::originalSizesHW, "original sizes"},
                                                                               {&Batch::cropTopLefts, "crops"},
                                                                               {&Batch::targetSizesHW, "target sizes"},
                                                                               {&Batch::lossWeights, "loss weights"},
                                                                               {&Batch::lossMasks, "loss masks"}})
    if (!joinTensor(batches, [m = member](const Batch& b) -> const torch::Tensor& { return b.*m; }, &(joined.*member)))
      return refuse(std::string("micro-batches whose ") + name + " differ in kind or shape");
  if (!joinTensorMaps(batches, [](const Batch& b) -> const TokenIds& { return b.tokenIds; }, &joined.tokenIds))
    return refuse("micro-batches whose token ids differ in kind or length");
  if (!joinTensorMaps(batches, [](const Batch& b) -> const TextOutputs& { return b.textOutputs; }, &joined.textOutputs))
    return refuse("micro-batches whose cached text outputs differ in kind or shape");
  return joined;
}

}  // namespace sinter::data
