#include "tools/lora_file_summary.h"

#include <set>
#include <sstream>

#include "core/family_table.h"
#include "core/model_family_detect.h"
#include "network/python_format.h"
#include "tools/bundled_embeddings.h"

namespace sinter::tools {

namespace {

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// The algorithm a module's tensor names say (LyCORIS's key names, sd-scripts' for LoRA).
std::string algorithmOf(const std::map<std::string, torch::Tensor>& tensors, const std::string& prefix) {
  const auto has = [&](const std::string& suffix) { return tensors.count(prefix + "." + suffix) != 0; };
  if (has("hada_w1_a")) return "LoHa";
  if (has("lokr_w1") || has("lokr_w1_a")) return "LoKr";
  if (has("lora_down.weight")) {
    const torch::Tensor& down = tensors.at(prefix + ".lora_down.weight");
    return down.dim() == 4 && down.size(2) > 1 ? "LoCon (3x3 conv)" : "LoRA";
  }
  if (has("diff")) return "full diff";
  return "other";
}

template <typename Map>
std::string counts(const Map& m, const std::string& unit) {
  std::string out;
  for (const auto& [value, n] : m) {
    std::ostringstream v;
    v << value;
    out += (out.empty() ? "" : ", ") + v.str() + " (" + std::to_string(n) + " " + unit + ")";
  }
  return out.empty() ? "-" : out;
}

}  // namespace

LoraFileSummary summarizeLoraFile(const std::map<std::string, torch::Tensor>& file, const std::map<std::string, std::string>& metadata,
                                  const std::string& path) {
  LoraFileSummary s;
  const LoraWithEmbeddings split = splitBundledEmbeddings(file, path);
  const std::map<std::string, torch::Tensor>& tensors = split.modules;
  for (const BundledEmbedding& e : split.embeddings) s.embeddings.push_back(e.describe());
  std::set<std::string> prefixes;
  for (const auto& [key, value] : tensors) prefixes.insert(key.substr(0, key.find('.')));
  s.modules = static_cast<int64_t>(prefixes.size());
  for (const std::string& prefix : prefixes) {
    const std::string algorithm = algorithmOf(tensors, prefix);
    ++s.algorithms[algorithm];
    if (tensors.count(prefix + ".dora_scale")) ++s.algorithms["DoRA scale"];
    if (const auto down = tensors.find(prefix + ".lora_down.weight"); down != tensors.end()) ++s.ranks[down->second.size(0)];
    if (const auto alpha = tensors.find(prefix + ".alpha"); alpha != tensors.end())
      ++s.alphas[network::pythonFloatRepr(alpha->second.item<double>())];
  }
  const auto meta = [&](const char* key) {
    const auto it = metadata.find(key);
    return it == metadata.end() ? std::string() : it->second;
  };
  // The family: from the metadata, else the module names (SD 1.x's and 2.x's by lora_te_'s width).
  std::vector<std::string> keys;
  int64_t textEncoderWidth = 0;
  for (const auto& [key, value] : tensors) {
    keys.push_back(key);
    if (!textEncoderWidth && key.rfind("lora_te_", 0) == 0 && contains(key, ".lora_down.weight") && value.dim() == 2)
      textEncoderWidth = value.size(1);
  }
  const std::optional<LoraFileFamily> family = detectLoraFileFamily(keys, metadata, textEncoderWidth);
  s.family = family ? std::string(familyRow(family->family).label) + " (" + family->reason + ")"
                    : "not told by its metadata or module names";
  s.network = meta("ss_network_module");
  if (s.network.empty())
    s.network = s.algorithms.count("LoHa") || s.algorithms.count("LoKr") ? "lycoris.kohya (by its keys; no ss_network_module)"
                : std::string(family ? familyRow(family->family).loraModule : "networks.lora") + " (by its keys; no ss_network_module)";
  s.model = meta("ss_base_model_version");
  if (s.model.empty()) s.model = meta("modelspec.architecture");
  if (s.model.empty()) s.model = "not in the metadata";
  return s;
}

std::vector<std::string> LoraFileSummary::lines() const {
  std::vector<std::string> out;
  out.push_back("family: " + family);
  out.push_back("network: " + network);
  out.push_back("model: " + model);
  out.push_back("modules: " + std::to_string(modules) + ": " + counts(algorithms, "modules"));
  out.push_back("ranks: " + counts(ranks, "modules"));
  out.push_back("alphas: " + counts(alphas, "modules"));
  if (!embeddings.empty()) {
    std::string list;
    for (const std::string& e : embeddings) list += (list.empty() ? "" : ", ") + e;
    out.push_back("bundled embeddings: " + std::to_string(embeddings.size()) + ": " + list);
  }
  return out;
}

}  // namespace sinter::tools
