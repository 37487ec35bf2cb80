#include "train/sd3/sd3_registration.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <optional>

#include "core/registry.h"
#include "io/safetensors.h"
#include "models/checkpoints/sd3_checkpoint.h"
#include "models/checkpoints/text_encoder_random_checkpoint.h"
#include "models/sd3/sd3_mmdit.h"
#include "models/sd3/sd3_mmdit_layout.h"
#include "models/text_encoders/clip_text_model.h"
#include "models/text_encoders/t5_encoder.h"
#include "models/weights/served_weight.h"
#include "network/lora_network.h"
#include "train/base/config_values.h"
#include "train/objectives/flow_matching.h"
#include "train/sd3/sd3_checkpoint_lora_layout.h"
#include "train/sd3/sd3_family.h"
#include "train/sd3/sd3_model_set.h"
#include "train/sd3/sd3_module_outputs.h"

namespace sinter::train {

namespace {

// sd3_train_network's files and options, read as the run reads them (headers only).
bool checkSd3Config(const Config& config, PreflightChecks& k) {
  bool ok = true;
  const std::string checkpoint = config.getString("pretrained_model_name_or_path");
  std::optional<io::SafetensorsFile> file;  // the checkpoint's header, read once
  if (isFile(checkpoint))
    ok &= k.parse("pretrained_model_name_or_path", [&] {
      file.emplace(checkpoint);
      models::Sd3MmditConfig::inferFromCheckpoint(*file, models::kSd3MmditPrefix);
    });
  for (const bool bigG : {false, true}) {
    const char* key = bigG ? "clip_g" : "clip_l";
    const std::string path = config.getString(key);
    if (!path.empty()) {
      if (isFile(path)) ok &= k.parse(key, [&] { sd3ClipShape(io::SafetensorsFile(path), bigG); });
      continue;
    }
    if (file && !file->hasKeyStartingWith(bigG ? models::kSd3ClipGPrefix : models::kSd3ClipLPrefix)) {
      ok = false;
      k.error(key, std::string(key) + " is not set and " + checkpoint + " holds no " + (bigG ? "CLIP-G" : "CLIP-L") +
                       " (text_encoders." + key + ".*): give " + key + ".safetensors");
    }
  }
  const std::string t5 = config.getString("t5xxl");
  if (file && models::sd3CheckpointHoldsT5xxl(*file)) {  // read from there, before any t5xxl file (sd3_utils.load_t5xxl)
    ok &= k.parse("pretrained_model_name_or_path", [&] { models::T5EncoderConfig::inferFromCheckpoint(*file, models::kSd3T5xxlPrefix); });
  } else if (t5.empty()) {
    ok = false;
    k.error("t5xxl", "t5xxl is not set" + (file ? " and " + checkpoint + " holds no T5-XXL" : std::string()) +
                         ": SD 3.x training needs the T5-XXL encoder (t5xxl_fp16.safetensors)");
  } else if (isFile(t5)) {
    ok &= k.parse("t5xxl", [&] { models::T5EncoderConfig::inferFromCheckpoint(io::SafetensorsFile(t5)); });
  }
  ok &= checkT5Tokenizer(config, k);
  ok &= k.parse("weighting_scheme", [&] { FlowMatchingOptions::fromConfig(config); });
  for (const char* key : {"fp8_base", "fp8_base_unet"})
    if (config.getBool(key) && findOption(key)->appliesToTab(config.tab()) && !models::float8InBuild())
      ok &= k.parse(key, [] { models::float8Dtype(); });  // names the libtorch
  // sd3_train.py's asserts: T5-XXL trains beside the CLIPs, and from its own outputs, not cached ones.
  if (config.tab() != Tab::LoRA && config.getBool("train_t5xxl")) {
    if (!config.getBool("train_text_encoder")) {
      ok = false;
      k.error("train_t5xxl", "train_t5xxl needs train_text_encoder: T5-XXL trains beside CLIP-L and CLIP-G (sd3_train.py asserts it)");
    }
    for (const char* key : {"cache_text_encoder_outputs", "cache_text_encoder_outputs_to_disk"})
      if (config.getBool(key)) {
        ok = false;
        k.error(key, std::string(key) + " cannot be used with train_t5xxl: T5-XXL's outputs change as it trains (sd3_train.py asserts it)");
      }
  }
  // blocks_to_swap's limit from the checkpoint's depth (sd-scripts asserts it when the MMDiT loads).
  if (const std::string checkpoint = config.getString("pretrained_model_name_or_path");
      !isUnset(config.get("blocks_to_swap")) && config.getInt("blocks_to_swap") > 0 && isFile(checkpoint))
    ok &= k.parse("blocks_to_swap", [&] {
      const io::SafetensorsFile file(checkpoint);
      models::checkSd3BlocksToSwap(models::Sd3MmditConfig::inferFromCheckpoint(file, models::kSd3MmditPrefix), config.getInt("blocks_to_swap"));
    });
  // sd3_train_network's post_process_network: T5-XXL's outputs change as its LoRA trains.
  const bool cachesText = config.getBool("cache_text_encoder_outputs") || config.getBool("cache_text_encoder_outputs_to_disk");
  if (cachesText && config.tab() == Tab::LoRA && !config.getBool("network_train_unet_only"))
    ok &= k.parse("cache_text_encoder_outputs", [&] {
      if (network::parseNetworkArgs(config.getList("network_args"), config.getString("network_module")).trainT5xxl)
        throw std::invalid_argument("cache_text_encoder_outputs cannot be used with network_args train_t5xxl=True: T5-XXL's outputs "
                                    "change as its LoRA trains (sd-scripts refuses the same)");
    });
  return ok;
}

}  // namespace

FamilyRegistration sd3Registration() {
  FamilyRegistration r;
  r.family = Family::SD3;
  r.make = [](const RunContext& run) -> std::unique_ptr<FamilyPart> { return std::make_unique<Sd3Family>(run); };
  r.compileTargets = {"MMDiT", "joint blocks", "", ""};  // no compile panel: SD 3.x trains eagerly
  // SD 3.5 Medium's file (MMDiT-X, both CLIPs inside, as sd3.5_medium_incl_clips) at OUT, T5-XXL beside it.
  r.writeRandomCheckpoint = [](const std::string& out, bool tiny, std::uint64_t seed, const Config&) {
    const std::string t5 = (std::filesystem::path(out).parent_path() / "t5xxl_fp16.safetensors").string();
    spdlog::info("writing a {} SD 3.5 Medium checkpoint (MMDiT, VAE, CLIP-L, CLIP-G) with random weights to {}, and T5-XXL to {}",
                 tiny ? "tiny" : "full-size", out, t5);
    models::writeRandomSd3Checkpoint(out, models::Sd3Variant::Medium35, tiny, seed);
    models::writeRandomT5Xxl(t5, tiny, seed + 3);
    spdlog::info("wrote {}", out);
  };
  r.moduleOutputs = [](const Config& config, const ModuleInputs& inputs, const torch::Device& device) {
    return sd3ModuleOutputsTool(config, inputs.tensors, device);  // token ids only: no prompt, no embedding
  };
  r.loraLayout = [](bool tiny, const Config& config) {
    using network::LoraComponent;
    LoraLayoutModels models;
    const network::LoraNetworkArgs args = network::parseNetworkArgs(config.getList("network_args"), config.getString("network_module"));
    if (!config.getBool("network_train_unet_only")) {
      models.emplace_back(network::sd3LoraRule(LoraComponent::TextEncoder1),
                          layoutShapes(models::clipTextLinearLayers(tiny ? models::ClipTextConfig::tinySd3ClipL() : models::ClipTextConfig::sd3ClipL())));
      models.emplace_back(network::sd3LoraRule(LoraComponent::TextEncoder2),
                          layoutShapes(models::clipTextLinearLayers(tiny ? models::ClipTextConfig::tinySd3ClipG() : models::ClipTextConfig::sd3ClipG())));
      if (args.trainT5xxl)
        models.emplace_back(network::sd3LoraRule(LoraComponent::TextEncoder3),
                            layoutShapes(models::t5EncoderLinearLayers(tiny ? models::T5EncoderConfig::tiny() : models::T5EncoderConfig::xxl())));
    }
    models.emplace_back(network::sd3LoraRule(LoraComponent::Unet, args.sd3EmbDims),
                        layoutShapes(models::sd3MmditLinearLayers(tiny ? models::Sd3MmditConfig::tiny() : models::Sd3MmditConfig::sd35Medium())));
    return models;
  };
  // The LoRA tools: SAI's single file and the text encoder files given apart (sd3_checkpoint_lora_layout.h).
  r.checkpointLoraLayout = sd3CheckpointLoraLayout;
  r.checkConfig = checkSd3Config;
  r.fixedSampler = "the flow-matching Euler sampler";  // sd-scripts' do_sample ignores sample_sampler
  // fp8_base / fp8_base_unet: the MMDiT's Linear weights stored in float8 (sd3_family.cpp); LoRA only,
  // as full-weight runs refuse it (methods/full_weights_method.cpp).
  r.fp8Base = true;
  return r;
}

}  // namespace sinter::train
