#include "tools/check_lora_weights_command.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <iostream>

#include "core/exit_codes.h"
#include "network/lora_file.h"
#include "tools/lora_file_summary.h"
#include "tools/tool_flags.h"

namespace sinter::tools {

namespace {

// `tuple(size)` with ", " as "-", as check_lora_weights.py writes a shape.
std::string shapeText(const torch::Tensor& t) {
  std::string out = "(";
  for (int64_t i = 0; i < t.dim(); ++i) out += (i ? "-" : "") + std::to_string(t.size(i));
  return out + (t.dim() == 1 ? ",)" : ")");
}

std::string csvLine(const std::string& key, const torch::Tensor& value) {
  const torch::Tensor magnitude = value.to(torch::kFloat32).abs();
  char numbers[64];
  std::snprintf(numbers, sizeof numbers, "%.8g,%.8g", magnitude.numel() ? magnitude.mean().item<double>() : 0.0,
                magnitude.numel() ? magnitude.min().item<double>() : 0.0);
  return key + "," + shapeText(value) + "," + numbers;
}

}  // namespace

int runCheckLoraWeights(const std::vector<std::string>& args) {
  const ToolFlags flags(args, *findLoraTool("check_lora_weights"));
  const std::string file = flags.valueOr("file", "");
  if (file.empty()) throw std::invalid_argument("the LoRA file to check is required: check_lora_weights FILE.safetensors");
  spdlog::info("loading: {}", file);
  const std::map<std::string, torch::Tensor> tensors = network::readLoraTensors(file);
  const network::Metadata metadata = network::readLoraMetadata(file);
  for (const std::string& line : summarizeLoraFile(tensors, metadata, file).lines()) std::cout << line << "\n";
  // The training metadata worth a glance (sd-scripts writes some 80 ss_ keys).
  for (const char* key : {"ss_output_name", "ss_sd_model_name", "ss_network_dim", "ss_network_alpha", "ss_network_args",
                          "ss_training_comment", "ss_steps", "ss_epoch", "ss_num_train_images", "ss_resolution",
                          "ss_optimizer", "ss_learning_rate", "ss_unet_lr", "ss_text_encoder_lr", "ss_mixed_precision"})
    if (const auto it = metadata.find(key); it != metadata.end()) std::cout << "metadata: " << key << " = " << it->second << "\n";

  std::vector<std::string> loraKeys, others;
  for (const auto& [key, value] : tensors)
    (key.find("lora_up") != std::string::npos || key.find("lora_down") != std::string::npos ? loraKeys : others).push_back(key);
  std::cout << "number of LoRA modules: " << loraKeys.size() << "\n";
  if (flags.has("show_all_keys")) {
    loraKeys.insert(loraKeys.end(), others.begin(), others.end());
    std::cout << "number of all modules: " << loraKeys.size() << "\n";
  }
  for (const std::string& key : loraKeys) std::cout << csvLine(key, tensors.at(key)) << "\n";
  return kExitOk;
}

}  // namespace sinter::tools
