#include "train/sd/sd_registration.h"

#include <spdlog/spdlog.h>

#include "io/safetensors.h"
#include "models/checkpoints/sd_checkpoint.h"
#include "network/lora_network.h"
#include "train/objectives/unet_train_step.h"
#include "train/sd/sd_module_outputs.h"
#include "train/sd/sd_family.h"

namespace sinter::train {

namespace {

FamilyRegistration sdRegistration(Family family) {
  const models::SdVersion version = family == Family::SD15 ? models::SdVersion::V1 : models::SdVersion::V2;
  FamilyRegistration r;
  r.family = family;
  r.make = [version](const RunContext& run) -> std::unique_ptr<FamilyPart> { return std::make_unique<SdFamily>(run, version); };
  r.compileTargets = unetCompileTargets();
  // No compile panel (SDXL's and FLUX's): the runner captures the step itself on CUDA, the text
  // encoder inside it from staged token ids where it trains.
  r.capturesWithoutPanel = true;
  r.stagedTextEncoders = [version](const Config&) {
    return std::string(version == models::SdVersion::V1 ? "CLIP ViT-L" : "OpenCLIP ViT-H");
  };
  r.writeRandomCheckpoint = [version](const std::string& out, bool tiny, std::uint64_t seed, const Config&) {
    spdlog::info("writing a {} {} checkpoint with random weights to {}", tiny ? "tiny" : "full-size",
                 version == models::SdVersion::V1 ? "SD 1.5" : "SD 2.1", out);
    models::writeRandomSdCheckpoint(out, version, tiny, seed);
    spdlog::info("wrote {}", out);
  };
  r.moduleOutputs = sdModuleOutputsTool;
  // merge_lora.py's modules: the U-Net under diffusers' names, the text encoder as Hugging Face's
  // CLIP (SD 2.x's OpenCLIP read as one). A merged SD 2.x file (or extracted LoRA) says v-prediction
  // at 768², as merge_lora.py's and extract_lora_from_models.py's --v2 write it.
  r.checkpointLoraLayout = [version](const io::SafetensorsFile& file, const std::string& role) {
    using network::CheckpointPartLayout;
    using network::LoraComponent;
    CheckpointLoraLayout layout;
    if (role != "model") return layout;
    const bool v1 = version == models::SdVersion::V1;
    const int64_t resBlocks = models::SdCheckpointConfig::inferFromCheckpoint(file).unet.numResBlocks;
    layout.parts = {{"model.diffusion_model.", network::sdLoraRule(LoraComponent::Unet, resBlocks), CheckpointPartLayout::Model},
                    {models::sdTextEncoderPrefix(version), network::sdLoraRule(LoraComponent::TextEncoder, resBlocks),
                     v1 ? CheckpointPartLayout::HuggingFaceClip : CheckpointPartLayout::OpenClip}};
    layout.checkpointModelSpec = v1 ? network::ModelSpecBasics{"stable-diffusion-v1", "https://github.com/Stability-AI/generative-models",
                                                               "512x512", "epsilon"}
                                    : network::ModelSpecBasics{"stable-diffusion-v2-768-v",
                                                               "https://github.com/Stability-AI/generative-models", "768x768", "v"};
    layout.loraModelSpec = layout.checkpointModelSpec;
    layout.loraModelSpec.implementation = "diffusers";
    layout.baseModelVersion = v1 ? "sd_v1" : "sd_v2_v";  // extract_lora_from_models: v_parameterization defaults to v2
    return layout;
  };
  // train_textual_inversion.py: an embedding for the one text encoder (emb_params).
  r.textualInversion = true;
  r.checkConfig = [family](const Config& config, PreflightChecks& k) {
    bool ok = true;
    // sd-scripts' v2 says the checkpoint is SD 2.x; the run trains what the checkpoint is.
    if (family == Family::SD15 && config.getBool("v2")) {
      k.error("v2", "v2 = true, but the checkpoint is SD 1.x (its text encoder is CLIP ViT-L under cond_stage_model.transformer.)");
      ok = false;
    }
    if (family == Family::SD2 && !config.getBool("v2"))
      k.warning("v2", "the checkpoint is SD 2.x (OpenCLIP ViT-H under cond_stage_model.model.) and is trained as SD 2.x; "
                      "sd-scripts needs v2 = true for it");
    // Per-block ranks are counted in SDXL's 23 blocks here; SD's 25 are not built yet.
    ok &= k.parse("network_args", [&] {
      const network::LoraNetworkArgs a = network::parseNetworkArgs(config.getList("network_args"), config.getString("network_module"));
      if (a.blockDims || a.blockAlphas || a.convBlockDims || a.convBlockAlphas || a.blockLrWeight)
        throw std::invalid_argument("block_dims, block_alphas, conv_block_dims, conv_block_alphas and down/mid/up_lr_weight are "
                                    "built for SDXL's 23 blocks; SD 1.x/2.x's 25 blocks are not built yet");
    });
    return ok;
  };
  return r;
}

}  // namespace

FamilyRegistration sd15Registration() { return sdRegistration(Family::SD15); }
FamilyRegistration sd2Registration() { return sdRegistration(Family::SD2); }

}  // namespace sinter::train
