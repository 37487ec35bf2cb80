#include "tools/extract_lora_command.h"

#include <spdlog/spdlog.h>


#include "core/exit_codes.h"
#include "core/family_table.h"
#include "network/lora_file.h"
#include "network/lora_metadata.h"
#include "network/python_format.h"
#include "tools/checkpoint_lora_layout.h"
#include "tools/low_rank_factors.h"
#include "tools/tool_files.h"
#include "tools/tool_flags.h"

namespace sinter::tools {

int runExtractLora(const std::vector<std::string>& args) {
  const ToolFlags flags(args, *findLoraTool("extract_lora_from_models"));
  const std::string org = flags.valueOr("model_org", ""), tuned = flags.valueOr("model_tuned", ""), saveTo = flags.valueOr("save_to", "");
  if (org.empty()) throw std::invalid_argument("--model_org: the original checkpoint is required");
  if (tuned.empty()) throw std::invalid_argument("--model_tuned: the tuned checkpoint is required");
  if (saveTo.empty()) throw std::invalid_argument("--save_to: the LoRA file to write is required");
  requireSafetensorsPath("--save_to", saveTo, true);
  const int64_t dim = flags.integer("dim").value_or(4);
  const std::optional<long long> convDim = flags.integer("conv_dim");
  if (dim < 1) throw std::invalid_argument("--dim must be at least 1, not " + std::to_string(dim));
  if (convDim && *convDim < 1) throw std::invalid_argument("--conv_dim must be at least 1, not " + std::to_string(*convDim));
  const double clampQuantile = flags.number("clamp_quantile").value_or(0.99);
  if (!(clampQuantile > 0.0 && clampQuantile <= 1.0))
    throw std::invalid_argument("--clamp_quantile must be in (0, 1], not " + network::pythonFloatRepr(clampQuantile));
  const double minDiff = flags.number("min_diff").value_or(0.01);
  const torch::Dtype saveDtype = network::savePrecisionDtype(flags.valueOr("save_precision", "float"));
  const std::optional<torch::Dtype> loadDtype =
      flags.value("load_precision") ? std::optional<torch::Dtype>(network::savePrecisionDtype(*flags.value("load_precision"))) : std::nullopt;
  const torch::Device device = toolDevice("--device", flags.valueOr("device", "cpu"));
  for (const char* accepted : {"v2", "sdxl", "v_parameterization", "mem_eff_safe_open"})
    if (flags.has(accepted)) spdlog::info("--{}: not needed here: the family is read from the files' keys", accepted);

  spdlog::info("loading original model: {}", org);
  const CheckpointForLora original = openCheckpointForLora("--model_org", org, "model");
  spdlog::info("loading tuned model: {}", tuned);
  const CheckpointForLora tunedFile = openCheckpointForLora("--model_tuned", tuned, "model");
  if (tunedFile.family != original.family)
    throw std::invalid_argument("--model_tuned " + tuned + " is " + familyRow(tunedFile.family->family).label + " and --model_org " +
                                org + " is " + familyRow(original.family->family).label + ": a LoRA is the difference of two checkpoints of one model");

  // The modules sd-scripts' create_network(dim, conv_dim) makes, and the tuned file's weight for each.
  const std::vector<std::string> targets = network::sdScriptsLoraTargets(original.slots, original.layout.parts, convDim.has_value());
  auto weight = [&](const CheckpointForLora& c, const network::LoraWeightSlot& slot) {
    torch::Tensor w = c.file.tensor(slot.key);
    if (slot.rows >= 0) w = w.narrow(0, slot.rowOffset, slot.rows);
    if (loadDtype) w = w.to(*loadDtype);
    return w.to(device, torch::kFloat32);
  };
  std::map<std::string, torch::Tensor> diffs;
  double textEncoderDiff = 0;  // the largest |difference| of a text encoder's weight
  for (const std::string& name : targets) {
    const network::LoraWeightSlot& slot = original.slots.at(name);
    const auto other = tunedFile.slots.find(name);
    if (other == tunedFile.slots.end() || other->second.shape != slot.shape)
      throw std::invalid_argument("--model_tuned " + tuned + ": " + (other == tunedFile.slots.end() ? "has no weight for " + name
                                                                        : name + " is " + c10::str(c10::IntArrayRef(other->second.shape)) +
                                                                              " where the original's is " + c10::str(c10::IntArrayRef(slot.shape))) +
                                "; are both checkpoints of the same model?");
    torch::Tensor diff = weight(tunedFile, other->second) - weight(original, slot);
    if (original.layout.parts[slot.part].rule.component != network::LoraComponent::Unet)
      textEncoderDiff = std::max(textEncoderDiff, diff.abs().max().item<double>());
    diffs.emplace(name, std::move(diff));
  }
  if (textEncoderDiff <= minDiff) {
    bool dropped = false;
    for (auto it = diffs.begin(); it != diffs.end();) {
      const bool text = original.layout.parts[original.slots.at(it->first).part].rule.component != network::LoraComponent::Unet;
      dropped |= text;
      it = text ? diffs.erase(it) : std::next(it);
    }
    if (dropped) spdlog::warn("Text encoder is same (no weight differs by more than --min_diff {}). Extract U-Net only.", minDiff);
  } else {
    spdlog::info("Text encoder is different. {} > {}", textEncoderDiff, minDiff);
  }

  spdlog::info("calculating by svd: {} modules", diffs.size());
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  for (const auto& [name, diff] : diffs) {
    const bool conv3x3 = diff.dim() == 4 && !(diff.size(2) == 1 && diff.size(3) == 1);
    const LowRankFactors f = lowRankFactors(diff, conv3x3 && convDim ? *convDim : dim, clampQuantile);
    tensors.emplace_back(name + ".lora_up.weight", f.up.to(torch::kCPU, saveDtype));
    tensors.emplace_back(name + ".lora_down.weight", f.down.to(torch::kCPU, saveDtype));
    // torch.tensor(rank): an integer, which sd-scripts' save_weights writes in the save dtype.
    tensors.emplace_back(name + ".alpha", torch::tensor(f.down.size(0), torch::kFloat32).to(saveDtype));
  }

  // extract_lora_from_models.py's metadata: the family's module, version, dim, alpha and network_args.
  std::string networkArgs = "{}";
  if (convDim) networkArgs = "{\"conv_dim\": \"" + std::to_string(*convDim) + "\", \"conv_alpha\": \"" +
                             network::pythonFloatRepr(static_cast<double>(*convDim)) + "\"}";
  network::Metadata metadata{{"ss_v2", original.layout.loraModelSpec.predictionType == "v" ? "True" : "False"},
                             {"ss_base_model_version", original.layout.baseModelVersion},
                             {"ss_network_module", familyRow(original.family->family).loraModule},
                             {"ss_network_dim", std::to_string(dim)},
                             {"ss_network_alpha", network::pythonFloatRepr(static_cast<double>(dim))},
                             {"ss_network_args", networkArgs}};
  if (!flags.has("no_metadata"))
    for (const auto& kv : network::toolModelSpec(original.layout.loraModelSpec, true, fileStem(saveTo), "", network::unixTimeNow()))
      metadata[kv.first] = kv.second;
  io::writeSafetensors(saveTo, tensors, metadata);
  spdlog::info("LoRA weights are saved to: {}", saveTo);
  return kExitOk;
}

}  // namespace sinter::tools
