#include "models/checkpoints/random_parts_writer.h"

#include <optional>

#include "io/safetensors.h"

namespace sinter::models {

torch::Dtype storedType(const torch::Tensor& t, torch::Dtype dtype) { return t.is_floating_point() ? dtype : t.scalar_type(); }

void writeRandomParts(const std::string& path, int64_t parts, const std::function<NamedWeights(int64_t part)>& buildPart,
                      torch::Dtype dtype, const std::map<std::string, std::string>& metadata) {
  torch::NoGradGuard noGrad;
  // Names and shapes for the header, one part alive at a time.
  std::vector<io::TensorDeclaration> entries;
  std::vector<std::pair<int64_t, size_t>> source;  // (part, index within the part's entries)
  for (int64_t p = 0; p < parts; ++p) {
    const NamedWeights tensors = buildPart(p);
    for (size_t i = 0; i < tensors.size(); ++i) {
      entries.push_back({tensors[i].first, storedType(tensors[i].second, dtype), tensors[i].second.sizes().vec()});
      source.emplace_back(p, i);
    }
  }
  // The writer asks in file order (by name): each block's keys come together, part 0's keys may
  // come in runs around the blocks, so part 0 is kept and a block part is rebuilt when the order
  // reaches it.
  std::optional<NamedWeights> stem;
  int64_t currentBlock = -1;
  NamedWeights blockTensors;
  io::writeSafetensorsStreaming(path, entries, metadata, [&](size_t index) {
    const auto [part, i] = source[index];
    const NamedWeights* tensors = nullptr;
    if (part == 0) {
      if (!stem) stem = buildPart(0);
      tensors = &*stem;
    } else {
      if (part != currentBlock) {
        blockTensors.clear();  // free the previous block first
        blockTensors = buildPart(part);
        currentBlock = part;
      }
      tensors = &blockTensors;
    }
    const torch::Tensor& t = (*tensors)[i].second;
    return t.to(storedType(t, dtype));
  });
}

}  // namespace sinter::models
