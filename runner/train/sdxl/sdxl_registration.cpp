#include "train/sdxl/sdxl_registration.h"

#include <spdlog/spdlog.h>

#include "core/registry.h"
#include "io/safetensors.h"
#include "models/text_encoders/clip_text_model.h"
#include "models/checkpoints/random_checkpoint.h"
#include "models/checkpoints/sdxl_checkpoint.h"
#include "train/objectives/unet_train_step.h"
#include "train/sdxl/sdxl_memory_model.h"
#include "train/sdxl/sdxl_module_outputs.h"
#include "models/weights/served_weight.h"
#include "train/methods/block_learning_rates.h"
#include "train/sdxl/sdxl_benchmark.h"
#include "train/sdxl/sdxl_block_lr.h"
#include "train/sdxl/sdxl_family.h"

namespace sinter::train {

FamilyRegistration sdxlRegistration() {
  FamilyRegistration r;
  r.family = Family::SDXL;
  r.make = [](const RunContext& run) -> std::unique_ptr<FamilyPart> { return std::make_unique<SdxlFamily>(run); };
  r.compileTargets = unetCompileTargets();
  r.writeRandomCheckpoint = [](const std::string& out, bool tiny, std::uint64_t seed, const Config&) {
    spdlog::info("writing a {} SDXL checkpoint with random weights to {}", tiny ? "tiny" : "full-size", out);
    models::writeRandomSdxlCheckpoint(out, tiny, seed);
    spdlog::info("wrote {}", out);
  };
  r.moduleOutputs = sdxlModuleOutputsTool;
  r.sizeMemoryModel = sizeSdxlMemoryModel;
  r.loraLayout = [](bool tiny, const Config& config) {
    using network::LoraComponent;
    const bool textEncoders = !config.getBool("network_train_unet_only");
    const models::SdxlCheckpointConfig sdxl = tiny ? models::SdxlCheckpointConfig::tiny() : models::SdxlCheckpointConfig::full();
    LoraLayoutModels models;
    if (textEncoders) {
      models.emplace_back(network::sdxlLoraRule(LoraComponent::TextEncoder1), layoutShapes(models::clipTextLinearLayers(sdxl.clipL)));
      models.emplace_back(network::sdxlLoraRule(LoraComponent::TextEncoder2), layoutShapes(models::clipTextLinearLayers(sdxl.bigG)));
    }
    models.emplace_back(network::sdxlLoraRule(LoraComponent::Unet), layoutShapes(models::sdxlUnetLinearLayers(sdxl.unet)));
    return models;
  };
  // sdxl_merge_lora.py's modules: the U-Net in SAI's layout, CLIP-L in Hugging Face's, bigG in OpenCLIP's.
  r.checkpointLoraLayout = [](const io::SafetensorsFile&, const std::string& role) {
    using network::CheckpointPartLayout;
    using network::LoraComponent;
    CheckpointLoraLayout layout;
    if (role != "model") return layout;
    layout.parts = {{"model.diffusion_model.", network::sdxlLoraRule(LoraComponent::Unet), CheckpointPartLayout::Model},
                    {"conditioner.embedders.0.transformer.", network::sdxlLoraRule(LoraComponent::TextEncoder1),
                     CheckpointPartLayout::HuggingFaceClip},
                    {"conditioner.embedders.1.model.", network::sdxlLoraRule(LoraComponent::TextEncoder2), CheckpointPartLayout::OpenClip}};
    layout.checkpointModelSpec = {"stable-diffusion-xl-v1-base", "https://github.com/Stability-AI/generative-models", "1024x1024",
                                  "epsilon"};
    layout.loraModelSpec = layout.checkpointModelSpec;
    layout.baseModelVersion = "sdxl_base_v1-0";
    return layout;
  };
  // Samples: sample_sampler's schedulers (sample/diffusion_samplers.h); sdxl_train.py trains the
  // text encoders with train_text_encoder.
  // fp8_base / fp8_base_unet: the U-Net (and, with fp8_base, the text encoders) stored in float8
  // (sdxl_model_set.h); LoRA only, as full-weight runs refuse it (methods/full_weights_method.cpp).
  r.fp8Base = true;
  // sdxl_train_textual_inversion.py: an embedding for each text encoder (clip_l, clip_g).
  r.textualInversion = true;
  // Without cached text outputs the step stages CLIP-L's and bigG's token ids and encodes them
  // itself (sdxl_family.h), so trained text encoders are inside a captured step.
  r.stagedTextEncoders = [](const Config&) { return std::string("CLIP-L and OpenCLIP bigG"); };
  r.benchmark = [](const Config& config, long long steps, bool tiny, bool scalingRows) {
    return runSdxlBenchmark(config, steps, tiny, scalingRows ? SdxlBenchRows::Scaling : SdxlBenchRows::Modes);
  };
  r.optimizerBenchmark = [](const Config& config, long long steps, bool tiny) {
    return runSdxlBenchmark(config, steps, tiny, SdxlBenchRows::Optimizers);
  };
  r.networkBenchmark = [](const Config& config, long long steps, bool tiny) {
    return runSdxlBenchmark(config, steps, tiny, SdxlBenchRows::Networks);
  };
  // sdxl_train.py's block_lr: 23 rates for the U-Net's blocks.
  r.blockLrCount = kSdxlBlockLrCount;
  r.blockLrIndex = sdxlBlockLrIndex;
  r.checkConfig = [](const Config& config, PreflightChecks& k) {
    bool ok = true;
    if (!config.getString("block_lr").empty())
      ok &= k.parse("block_lr", [&] { parseBlockLearningRates(config.getString("block_lr"), kSdxlBlockLrCount); });
    for (const char* key : {"fp8_base", "fp8_base_unet"})
      if (config.getBool(key) && findOption(key)->appliesToTab(config.tab()) && !models::float8InBuild())
        ok &= k.parse(key, [] { models::float8Dtype(); });  // names the libtorch (fp8_base_unet is LoRA's alone)
    // fp8_scaled and fp8_fast (musubi-tuner's, Sinter's own keys) are built for FLUX's transformer.
    for (const char* key : {"fp8_scaled", "fp8_fast"})
      if (config.getBool(key))
        k.warning(key, std::string(key) + " is built for FLUX only; SDXL's fp8_base stores its weights as a plain float8 cast, as sd-scripts does");
    return ok;
  };
  return r;
}

}  // namespace sinter::train
