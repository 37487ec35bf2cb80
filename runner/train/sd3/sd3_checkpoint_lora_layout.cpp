#include "train/sd3/sd3_checkpoint_lora_layout.h"

#include "io/safetensors.h"
#include "models/checkpoints/sd3_checkpoint.h"
#include "models/sd3/sd3_mmdit_config.h"

namespace sinter::train {

namespace {

using network::CheckpointPartLayout;
using network::LoraComponent;

// T5-XXL's modules as networks.lora_sd3 names them (lora_te3_), for merges. Its create_network
// puts none there unless train_t5xxl, which extract_lora_from_models does not pass: so no module
// is a default target (extract leaves T5-XXL out), while a merge still finds every weight by name.
network::LoraTargetRule sd3LoraT5xxlRule() {
  network::LoraTargetRule rule = network::sd3LoraRule(LoraComponent::TextEncoder3);
  rule.select = [](const std::vector<std::string>& paths) { return std::vector<bool>(paths.size(), false); };
  return rule;
}

// Where a CLIP file's "text_model.*" keys start: a file of its own (""), ComfyUI's "clip_g.transformer.",
// or an SD 3 checkpoint's "text_encoders.clip_g.transformer.", as sd3_model_set.h reads them.
std::string sd3LoraClipPrefix(const io::SafetensorsFile& file, bool bigG) {
  const std::string own = bigG ? models::kSd3ClipGPrefix : models::kSd3ClipLPrefix;
  for (const std::string candidate : {own, std::string(bigG ? "clip_g." : "clip_l.") + "transformer."})
    if (file.hasKeyStartingWith(candidate)) return candidate;
  return "";
}

}  // namespace

CheckpointLoraLayout sd3CheckpointLoraLayout(const io::SafetensorsFile& file, const std::string& role) {
  CheckpointLoraLayout layout;
  const network::LoraTargetRule clipL = network::sd3LoraRule(LoraComponent::TextEncoder1);
  const network::LoraTargetRule clipG = network::sd3LoraRule(LoraComponent::TextEncoder2);
  if (role == "clip_l" || role == "clip_g") {
    const bool bigG = role == "clip_g";
    layout.parts = {{sd3LoraClipPrefix(file, bigG), bigG ? clipG : clipL, CheckpointPartLayout::HuggingFaceClip}};
  } else if (role == "t5xxl") {
    layout.parts = {{file.hasKeyStartingWith(models::kSd3T5xxlPrefix) ? models::kSd3T5xxlPrefix : "", sd3LoraT5xxlRule(),
                     CheckpointPartLayout::Model}};
  } else if (role == "model") {
    // Without emb_dims networks.lora_sd3 targets the joint blocks alone; the embedders' weights are
    // still found by name for a LoRA trained with emb_dims.
    layout.parts = {{models::kSd3MmditPrefix, network::sd3LoraRule(LoraComponent::Unet), CheckpointPartLayout::Model},
                    {models::kSd3ClipLPrefix, clipL, CheckpointPartLayout::HuggingFaceClip},
                    {models::kSd3ClipGPrefix, clipG, CheckpointPartLayout::HuggingFaceClip},
                    {models::kSd3T5xxlPrefix, sd3LoraT5xxlRule(), CheckpointPartLayout::Model}};
    const models::Sd3MmditConfig mmdit = models::Sd3MmditConfig::inferFromCheckpoint(file, models::kSd3MmditPrefix);
    // sai_model_spec's facts for SD 3 (IMPL_STABILITY_AI, no prediction type), as training writes them.
    layout.checkpointModelSpec = {models::sd3ModelSpecArchitecture(mmdit), "https://github.com/Stability-AI/generative-models",
                                  "1024x1024", ""};
    layout.loraModelSpec = layout.checkpointModelSpec;
    layout.baseModelVersion = mmdit.modelType();  // train_network's model_version: the MMDiT's model_type
  }
  return layout;
}

}  // namespace sinter::train
