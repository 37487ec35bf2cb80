#pragma once
// What a LoRA or LyCORIS file holds, as check_lora_weights tells a user before they use it: the
// model family and network, its algorithms, the modules' ranks and alphas, the model it was trained
// for (from the metadata sd-scripts writes), the embeddings it bundles, and the training metadata
// worth a glance.
#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

namespace sinter::tools {

struct LoraFileSummary {
  int64_t modules = 0;                        // distinct module prefixes ("lora_unet_..._to_q")
  std::map<std::string, int64_t> algorithms;  // "LoRA", "LoCon (3x3 conv)", "LoHa", "LoKr", "DoRA scale", "full diff", "other" → modules
  std::map<int64_t, int64_t> ranks;           // lora_down rows → modules (LoRA/LoCon)
  std::map<std::string, int64_t> alphas;      // alpha, as Python prints it → modules
  std::string family;                         // "SD 3.x (ss_network_module = networks.lora_sd3)", or "not told ..."
  std::string network;                        // ss_network_module, or what the keys say
  std::string model;                          // ss_base_model_version / modelspec.architecture, or "not in the metadata"
  // Its bundled embeddings (bundle_emb.*, pivotal tuning), each as BundledEmbedding::describe says it:
  // token, vectors, each part's width. They are not counted as modules.
  std::vector<std::string> embeddings;
  std::vector<std::string> lines() const;     // the summary as check_lora_weights prints it
};

// `path` names the file where a bundled embedding's key is malformed (std::invalid_argument).
LoraFileSummary summarizeLoraFile(const std::map<std::string, torch::Tensor>& tensors, const std::map<std::string, std::string>& metadata,
                                  const std::string& path = "the file");

}  // namespace sinter::tools
