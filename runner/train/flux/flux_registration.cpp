#include "train/flux/flux_registration.h"

#include <functional>
#include <string>

#include <spdlog/spdlog.h>

#include <filesystem>

#include "core/registry.h"
#include "models/text_encoders/clip_text_model.h"
#include "models/flux/flux_config.h"
#include "models/flux/flux_layout.h"
#include "models/checkpoints/flux_random_checkpoint.h"
#include "models/checkpoints/sdxl_checkpoint.h"
#include "models/checkpoints/text_encoder_random_checkpoint.h"
#include "train/flux/flux_memory_model.h"
#include "train/flux/flux_module_outputs.h"
#include "io/safetensors.h"
#include "models/autoencoders/flux_autoencoder.h"
#include "models/weights/float8_compute.h"
#include "models/flux/flux_transformer.h"
#include "models/weights/served_weight.h"
#include "models/text_encoders/t5_encoder.h"
#include "network/lora_network.h"
#include "train/base/device_info.h"
#include "train/flux/flux_benchmark.h"
#include "train/flux/flux_family.h"
#include "train/flux/flux_model_set.h"
#include "train/objectives/flow_matching.h"

namespace sinter::train {

namespace {

// FLUX's other files (flux_train_network's --ae, --clip_l, --t5xxl) and T5's tokenizer: each set,
// there, and the model it names (read from the header only).
bool checkFluxFiles(const Config& config, PreflightChecks& k) {
  bool ok = true;
  const bool chroma = fluxRunIsChroma(config);
  struct FluxFile {
    const char* key;
    const char* what;
    std::function<void(const io::SafetensorsFile&)> check;
  };
  const FluxFile files[] = {
      {"ae", "the autoencoder (ae.safetensors)", [](const io::SafetensorsFile& f) { models::FluxAutoencoderConfig::inferFromCheckpoint(f); }},
      {"clip_l", "CLIP-L (clip_l.safetensors)", [](const io::SafetensorsFile& f) { models::ClipTextModelImpl::inferFromCheckpoint(f, clipLPrefix(f)); }},
      {"t5xxl", "the T5-XXL encoder (t5xxl_fp16.safetensors)", [](const io::SafetensorsFile& f) { models::T5EncoderConfig::inferFromCheckpoint(f); }}};
  for (const FluxFile& file : files) {
    if (chroma && std::string(file.key) == "clip_l") continue;  // Chroma has no CLIP-L (a given file is not read)
    const std::string path = config.getString(file.key);
    if (path.empty()) {
      ok = false;
      k.error(file.key, std::string(file.key) + " is not set: FLUX training needs " + file.what);
    } else if (isFile(path)) {
      ok &= k.parse(file.key, [&] { file.check(io::SafetensorsFile(path)); });
    } else {
      ok = false;  // reported by checkPaths
    }
  }
  ok &= checkT5Tokenizer(config, k);
  ok &= k.parse("timestep_sampling", [&] { FlowMatchingOptions::fromConfig(config); });
  if (chroma && !config.getBool("apply_t5_attn_mask")) {
    ok = false;
    k.error("apply_t5_attn_mask", "Chroma needs apply_t5_attn_mask = true: it attends to the caption's tokens and one padding "
                                  "token only (sd-scripts refuses Chroma without it too)");
  }
  const std::string transformerPath = config.getString("pretrained_model_name_or_path");
  if (config.getString("model_type") == "chroma" && isFile(transformerPath))
    ok &= k.parse("model_type", [&] {
      if (models::detectFluxVariant(io::SafetensorsFile(transformerPath)) != models::FluxVariant::Chroma)
        throw std::invalid_argument("model_type = \"chroma\", but " + transformerPath +
                                    " is a FLUX.1 transformer (no distilled_guidance_layer.*): give Chroma's file or model_type = \"flux\"");
    });
  // flux_train_network.py refuses it on the flag alone (even with network_train_unet_only): T5-XXL's
  // outputs change as its LoRA trains.
  const bool cachesText = config.getBool("cache_text_encoder_outputs") || config.getBool("cache_text_encoder_outputs_to_disk");
  const std::string networkModule = config.getString("network_module");  // unset: networks.lora_flux
  if (cachesText && config.tab() == Tab::LoRA && (networkModule.empty() || networkModule == "networks.lora_flux"))
    ok &= k.parse("cache_text_encoder_outputs", [&] {
      if (network::parseNetworkArgs(config.getList("network_args"), "networks.lora_flux").trainT5xxl)
        throw std::invalid_argument("cache_text_encoder_outputs cannot be used with network_args train_t5xxl=True: T5-XXL's "
                                    "outputs change as its LoRA trains, so they are encoded in each step (sd-scripts refuses "
                                    "the same)");
    });
  for (const char* key : {"fp8_base", "fp8_base_unet"})
    if (config.getBool(key) && findOption(key)->appliesToTab(config.tab()) && !models::float8InBuild())
      ok &= k.parse(key, [] { models::float8Dtype(); });  // names the libtorch (fp8_base_unet is LoRA's alone)
  if (config.getBool("fp8_scaled") && !models::float8InBuild())
    ok &= k.parse("fp8_scaled", [] { models::float8ScalarType(models::Float8Format::E4M3); });  // names the libtorch
  // fp8_fast: refused on a device (or a libtorch) without FP8 tensor cores, naming it.
  if (config.getBool("fp8_fast"))
    if (const std::string why = models::float8ComputeRefusal(trainingDevice()); !why.empty()) {
      ok = false;
      k.error("fp8_fast", why);
    }
  const std::string transformer = config.getString("pretrained_model_name_or_path");
  if (!isUnset(config.get("blocks_to_swap")) && config.getInt("blocks_to_swap") > 0 && isFile(transformer))
    ok &= k.parse("blocks_to_swap", [&] {
      const io::SafetensorsFile file(transformer);
      models::fluxBlockSwapSplit(models::FluxConfig::inferFromCheckpoint(file, models::FluxTransformerImpl::checkpointPrefix(file)),
                                 config.getInt("blocks_to_swap"));
    });
  return ok;
}

}  // namespace

FamilyRegistration fluxRegistration() {
  FamilyRegistration r;
  r.family = Family::FLUX;
  r.make = [](const RunContext& run) -> std::unique_ptr<FamilyPart> { return std::make_unique<FluxFamily>(run); };
  r.compileTargets = {"DiT model", "double and single blocks", "QK RMSNorm+RoPE, LayerNorm+modulate, gated residual, attention+GELU join",
                      "QK RMSNorm+RoPE (each head's query and key normalised, scaled and turned in float32, rounded once, in one "
                      "kernel each way where the stock operators take a dozen), LayerNorm+modulate and the gated residual (one pass "
                      "each way, the shift, scale and gate gradients summed in the same pass), and the single blocks' attention+GELU "
                      "join (linear2's input written once, GELU read in place)"};
  // The transformer (FLUX.1-dev's layout, or Chroma's with model_type = "chroma") at OUT and the other
  // models beside it, as FLUX users keep flux1-dev.safetensors, ae.safetensors, clip_l.safetensors
  // and t5xxl_fp16.safetensors (Chroma: no CLIP-L).
  r.writeRandomCheckpoint = [](const std::string& out, bool tiny, std::uint64_t seed, const Config& config) {
    const bool chroma = config.getString("model_type") == "chroma";
    const std::filesystem::path parent = std::filesystem::path(out).parent_path();
    const std::string ae = (parent / "ae.safetensors").string(), clipL = (parent / "clip_l.safetensors").string(),
                      t5 = (parent / "t5xxl_fp16.safetensors").string();
    if (chroma) {
      spdlog::info("writing a {} Chroma transformer with random weights to {}, and its autoencoder and T5-XXL to {}, {}",
                   tiny ? "tiny" : "full-size", out, ae, t5);
      models::writeRandomFluxTransformer(out, tiny ? models::FluxConfig::tinyChroma() : models::FluxConfig::chromaFull(), seed,
                                         tiny ? torch::kFloat32 : torch::kBFloat16);
    } else {
      spdlog::info("writing a {} FLUX.1-dev transformer with random weights to {}, and its autoencoder, CLIP-L and T5-XXL to {}, {}, {}",
                   tiny ? "tiny" : "full-size", out, ae, clipL, t5);
      models::writeRandomFluxTransformer(out, tiny, /*dev=*/true, seed);
    }
    models::writeRandomFluxAutoencoder(ae, tiny, seed + 1);
    if (!chroma) models::writeRandomClipL(clipL, tiny, seed + 2);
    models::writeRandomT5Xxl(t5, tiny, seed + 3);
    spdlog::info("wrote {}", out);
  };
  r.moduleOutputs = [](const Config& config, const ModuleInputs& inputs, const torch::Device& device) {
    return fluxModuleOutputsTool(config, inputs.tensors, device);  // token ids only: no prompt, no embedding
  };
  r.sizeMemoryModel = sizeFluxMemoryModel;
  r.loraLayout = [](bool tiny, const Config& config) {
    using network::LoraComponent;
    const bool textEncoders = !config.getBool("network_train_unet_only");
    const network::LoraNetworkArgs args = network::parseNetworkArgs(config.getList("network_args"), config.getString("network_module"));
    const std::string trainBlocks = args.trainBlocks.value_or("all");
    const bool chroma = config.getString("model_type") == "chroma";  // no CLIP-L (sd-scripts' use_clip_l False)
    LoraLayoutModels models;
    // FLUX's CLIP-L is SDXL's first text encoder (clip_l.safetensors); T5-XXL gets none unless train_t5xxl.
    const models::SdxlCheckpointConfig sdxl = tiny ? models::SdxlCheckpointConfig::tiny() : models::SdxlCheckpointConfig::full();
    if (textEncoders && !chroma)
      models.emplace_back(network::fluxLoraRule(LoraComponent::TextEncoder1), layoutShapes(models::clipTextLinearLayers(sdxl.clipL)));
    if (textEncoders && args.trainT5xxl)
      models.emplace_back(network::fluxT5LoraRule(),
                          layoutShapes(models::t5EncoderLinearLayers(tiny ? models::T5EncoderConfig::tiny() : models::T5EncoderConfig::xxl())));
    const models::FluxConfig flux = chroma ? (tiny ? models::FluxConfig::tinyChroma() : models::FluxConfig::chromaFull())
                                           : (tiny ? models::FluxConfig::tiny() : models::FluxConfig::dev());
    models.emplace_back(network::fluxLoraRule(LoraComponent::Unet, trainBlocks), layoutShapes(models::fluxTransformerLinearLayers(flux)));
    return models;
  };
  // flux_merge_lora.py's names: each file's own keys (the transformer's in BFL's layout, also under
  // ComfyUI's "model.diffusion_model."), CLIP-L and T5-XXL given apart.
  r.checkpointLoraLayout = [](const io::SafetensorsFile& file, const std::string& role) {
    using network::CheckpointPartLayout;
    using network::LoraComponent;
    CheckpointLoraLayout layout;
    if (role == "clip_l") {
      layout.parts = {{"", network::fluxLoraRule(LoraComponent::TextEncoder1), CheckpointPartLayout::HuggingFaceClip}};
    } else if (role == "t5xxl") {
      layout.parts = {{"", network::fluxT5LoraRule(), CheckpointPartLayout::Model}};
    } else if (role == "model") {
      const std::string prefix = file.hasKeyStartingWith("model.diffusion_model.") ? "model.diffusion_model." : "";
      layout.parts = {{prefix, network::fluxLoraRule(LoraComponent::Unet), CheckpointPartLayout::Model}};
      const bool dev = file.has(prefix + "guidance_in.in_layer.weight");
      const bool chroma = file.has(prefix + "distilled_guidance_layer.in_proj.weight");
      layout.checkpointModelSpec = chroma ? network::ModelSpecBasics{"chroma", "https://huggingface.co/lodestones/Chroma", "1024x1024", ""}
                                          : network::ModelSpecBasics{dev ? "flux-1-dev" : "flux-1-schnell",
                                                                     "https://github.com/black-forest-labs/flux", "1024x1024", ""};
      layout.loraModelSpec = layout.checkpointModelSpec;
      layout.baseModelVersion = chroma ? "chroma" : "flux1";  // flux_utils.MODEL_VERSION_CHROMA / MODEL_VERSION_FLUX_V1
    }
    return layout;
  };
  r.checkConfig = checkFluxFiles;
  // A Chroma file is trained as Chroma whatever model_type says (sd-scripts needs the flag): the
  // resolved config says so.
  r.resolveFromFiles = [](const Config& config, Config& resolved) {
    if (config.getString("model_type") != "chroma" && fluxRunIsChroma(config)) {
      resolved.set("model_type", std::string("chroma"), config.whereSet("pretrained_model_name_or_path"));
      spdlog::info("{} is a Chroma transformer: model_type = \"chroma\"", config.getString("pretrained_model_name_or_path"));
    }
  };
  // sd-scripts samples FLUX with its own Euler loop and ignores sample_sampler and --ss.
  r.fixedSampler = "the flow-matching Euler sampler";
  r.fp8Base = true;
  r.fullWeightsTextEncoderRefusal = "flux_train.py trains the FLUX transformer only";
  // Where the text outputs are not all cached the step stages CLIP-L's (and T5-XXL's) token ids and
  // encodes them itself (flux_family.h), so trained text encoders are inside a captured step.
  r.stagedTextEncoders = [](const Config& config) {
    const bool cached = config.getBool("cache_text_encoder_outputs") || config.getBool("cache_text_encoder_outputs_to_disk");
    if (fluxRunIsChroma(config))  // T5-XXL alone
      return cached ? std::string() : std::string(fluxT5xxlTrains(config) ? "T5-XXL" : "T5-XXL's frozen forward");
    if (!cached) return std::string(fluxT5xxlTrains(config) ? "CLIP-L and T5-XXL" : "CLIP-L, with T5-XXL's frozen forward");
    return std::string("CLIP-L; T5-XXL's outputs cached");
  };
  r.benchmark = runFluxBenchmark;
  return r;
}

}  // namespace sinter::train
