#include "train/methods/embedding_file.h"

#include "core/ascii_text.h"
#include "io/safetensors.h"
#include "network/lora_network.h"
#include "train/base/run_errors.h"

namespace sinter::train {

namespace {

// "emb_params", "a, b, c, d, e and 2514 more" (a checkpoint or a LoRA given for an embedding).
std::string embeddingKeysText(const std::vector<std::string>& keys) {
  constexpr size_t kShown = 5;
  std::string s;
  for (size_t i = 0; i < keys.size() && i < kShown; ++i) s += (s.empty() ? "" : ", ") + keys[i];
  if (keys.size() > kShown) s += " and " + std::to_string(keys.size() - kShown) + " more";
  return s.empty() ? "no tensors" : s;
}

}  // namespace

void writeEmbeddingFile(const std::string& path, const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                        std::optional<torch::Dtype> dtype, const std::map<std::string, std::string>& metadata) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& [key, t] : tensors) out.emplace_back(key, t.detach().to(torch::kCPU, dtype.value_or(t.scalar_type())).contiguous());
  io::writeSafetensors(path, out, metadata);
}

std::vector<torch::Tensor> readEmbeddingFile(const std::string& path, const std::vector<ExpectedEmbedding>& expected,
                                             const EmbeddingFileReading& reading) {
  const std::string& option = reading.option;
  for (const char* pickled : {".pt", ".ckpt", ".bin"})
    if (endsWith(lowerAscii(path), pickled))
      throw InputError(option + ": '" + path + "' is a pickled file; Sinter reads embeddings from .safetensors files only");
  std::optional<io::SafetensorsFile> file;
  try {
    file.emplace(path);
  } catch (const std::exception& e) {
    throw InputError(option + ": " + std::string(e.what()));
  }
  const std::vector<std::string> keys = file->keys();
  std::vector<torch::Tensor> out;
  for (const ExpectedEmbedding& e : expected) {
    std::string key = e.key;
    if (!file->has(key) && reading.anyNameForOne && expected.size() == 1 && keys.size() == 1) key = keys.front();
    if (!file->has(key))
      throw InputError(option + ": '" + path + "' has no " + e.key + " tensor (it holds " + embeddingKeysText(keys) + ")");
    torch::Tensor t = file->tensor(key);
    if (t.dim() == 1) t = t.unsqueeze(0);
    if (t.sizes().vec() != e.shape)
      throw InputError(option + ": " + key + " in '" + path + "' is " + network::shapeText(t.sizes()) + ", this run's " + e.key +
                       " rows are " + network::shapeText(e.shape) + " (num_vectors_per_token x the text encoder's width)");
    if (!t.is_floating_point())
      throw InputError(option + ": " + key + " in '" + path + "' is " + std::string(c10::toString(t.scalar_type())) + ", not floating point");
    out.push_back(t.to(torch::kFloat32).clone());
  }
  return out;
}

}  // namespace sinter::train
