#include "tools/bundled_embeddings.h"

#include <stdexcept>

#include "network/lora_network.h"

namespace sinter::tools {

namespace {

const std::string kBundlePrefix = "bundle_emb.";

// Whether two embeddings of one token hold the same rows: the same parts, shapes and values.
bool sameRows(const BundledEmbedding& a, const BundledEmbedding& b) {
  if (a.parts.size() != b.parts.size()) return false;
  for (size_t i = 0; i < a.parts.size(); ++i) {
    const torch::Tensor& x = a.parts[i].second;
    const torch::Tensor& y = b.parts[i].second;
    if (a.parts[i].first != b.parts[i].first || x.sizes() != y.sizes()) return false;
    if (!x.to(torch::kFloat64).equal(y.to(torch::kFloat64))) return false;
  }
  return true;
}

}  // namespace

bool isBundledEmbeddingKey(const std::string& key) { return key.compare(0, kBundlePrefix.size(), kBundlePrefix) == 0; }

int64_t BundledEmbedding::vectors() const {
  if (parts.empty()) return 0;
  const torch::Tensor& t = parts.front().second;
  return t.dim() == 1 ? 1 : t.size(0);
}

std::vector<std::pair<std::string, torch::Tensor>> BundledEmbedding::embeddingFileTensors() const {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& [part, tensor] : parts)
    out.emplace_back(part.compare(0, 16, "string_to_param.") == 0 ? "emb_params" : part, tensor);
  return out;
}

std::string BundledEmbedding::describe() const {
  std::string widths;
  for (const auto& [key, tensor] : embeddingFileTensors())
    widths += (widths.empty() ? "" : ", ") + key + " " + std::to_string(tensor.size(-1)) + " wide";
  const int64_t n = vectors();
  return token + " (" + std::to_string(n) + (n == 1 ? " vector: " : " vectors: ") + widths + ")";
}

LoraWithEmbeddings splitBundledEmbeddings(const std::map<std::string, torch::Tensor>& tensors, const std::string& path) {
  LoraWithEmbeddings out;
  std::map<std::string, BundledEmbedding> byToken;
  for (const auto& [key, tensor] : tensors) {
    if (!isBundledEmbeddingKey(key)) {
      out.modules.emplace(key, tensor);
      continue;
    }
    const size_t dot = key.find('.', kBundlePrefix.size());
    if (dot == std::string::npos || dot == kBundlePrefix.size() || dot + 1 == key.size())
      throw std::invalid_argument(path + ": '" + key + "' names no embedding part (a bundled embedding's tensor is " +
                                  "bundle_emb.<token>.<part>, as A1111/Forge read it)");
    if (!tensor.is_floating_point() || tensor.dim() < 1 || tensor.dim() > 2)
      throw std::invalid_argument(path + ": " + key + " is " + network::shapeText(tensor.sizes()) + " " +
                                  std::string(c10::toString(tensor.scalar_type())) +
                                  ", not an embedding's rows ([vectors, width] of floating point)");
    const std::string token = key.substr(kBundlePrefix.size(), dot - kBundlePrefix.size());
    BundledEmbedding& e = byToken[token];
    e.token = token;
    e.path = path;
    e.parts.emplace_back(key.substr(dot + 1), tensor);  // the map's order: by part
  }
  for (auto& [token, e] : byToken) out.embeddings.push_back(std::move(e));
  return out;
}

std::vector<BundledEmbedding> combineBundledEmbeddings(const std::vector<std::vector<BundledEmbedding>>& perFile) {
  std::vector<BundledEmbedding> out;
  for (const std::vector<BundledEmbedding>& file : perFile)
    for (const BundledEmbedding& e : file) {
      const BundledEmbedding* seen = nullptr;
      for (const BundledEmbedding& o : out)
        if (o.token == e.token) seen = &o;
      if (!seen) {
        out.push_back(e);
        continue;
      }
      if (!sameRows(*seen, e))
        throw std::invalid_argument("the embedding \"" + e.token + "\" is bundled in " + seen->path + " and in " + e.path +
                                    " with other rows: one token cannot name two embeddings in the merged file");
    }
  return out;
}

std::vector<std::pair<std::string, torch::Tensor>> bundledEmbeddingTensors(const std::vector<BundledEmbedding>& embeddings) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const BundledEmbedding& e : embeddings)
    for (const auto& [part, tensor] : e.parts) out.emplace_back(kBundlePrefix + e.token + "." + part, tensor);
  return out;
}

}  // namespace sinter::tools
