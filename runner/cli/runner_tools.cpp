#include "cli/runner_tools.h"

#include <spdlog/spdlog.h>

#include <ATen/Context.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <iostream>

#include "cli/demo_assets.h"
#include "cli/flux_module_outputs.h"
#include "cli/lora_layout.h"
#include "core/exit_codes.h"
#include "io/safetensors.h"
#include "models/flux_checkpoint.h"
#include "models/flux_random_checkpoint.h"
#include "models/text_encoder_random_checkpoint.h"
#include "network/lora_network.h"
#include "models/random_checkpoint.h"
#include "models/sd_checkpoint.h"
#include "train/base/device_info.h"
#include "train/base/vram_budget.h"
#include "train/base/run_errors.h"
#include "train/bench/step_profiler.h"
#include "train/parts/family_registration.h"
#include "train/sd/sd_module_outputs.h"
#include "train/sdxl/sdxl_module_outputs.h"

namespace sinter::runner {

namespace {

std::optional<std::string> value(const ParsedArgs& args, const char* name) {
  auto it = args.extraValues.find(name);
  if (it == args.extraValues.end()) return std::nullopt;
  return it->second;
}

// --model_size full|tiny (full when absent)
std::optional<bool> tinySize(const ParsedArgs& args) {
  const std::string size = value(args, "model_size").value_or("full");
  if (size == "full") return false;
  if (size == "tiny") return true;
  spdlog::error("--model_size takes full or tiny, not '{}'", size);
  return std::nullopt;
}

std::map<std::string, torch::Tensor> readInputs(const std::string& path) {
  std::map<std::string, torch::Tensor> inputs;
  io::SafetensorsFile file(path);
  for (const std::string& key : file.keys()) inputs[key] = file.tensor(key);
  return inputs;
}

// The training device, set up for a comparison in fp32.
torch::Device comparisonDevice(const Config& config) {
  const torch::Device device = train::trainingDevice();
  // A comparison in fp32 means fp32: cuDNN's TF32 (on by default in PyTorch) is off unless asked for.
  const bool tf32 = config.getBool("cuda_allow_tf32");
  if (device.is_cuda() && !tf32) {
    at::globalContext().setAllowTF32CuDNN(false);
    at::globalContext().setAllowTF32CuBLAS(false);
  }
  const std::string flags = train::applyCudaMathFlags(device, tf32, false);
  if (!flags.empty()) spdlog::info("{}", flags);
  return device;
}

// --module_outputs OUT --module_inputs IN: the checkpoint's models in fp32 on the training device.
int writeModuleOutputs(const Config& config, const std::string& outPath, const std::string& inPath) {
  const std::string checkpoint = config.getString("pretrained_model_name_or_path");
  if (checkpoint.empty()) {
    spdlog::error("--module_outputs needs --pretrained_model_name_or_path (an SDXL or SD 1.x/2.x single-file checkpoint)");
    return kExitBadInput;
  }
  const std::map<std::string, torch::Tensor> inputs = readInputs(inPath);
  const torch::Device device = comparisonDevice(config);
  // The family's models and how they run on the inputs (SD 1.x/2.x: UNet and text encoder; SDXL: all four).
  models::SdCheckpoint sd;
  train::SdxlModelSet sdxl;
  std::function<std::map<std::string, torch::Tensor>()> outputsOf;
  std::string inputNames;
  if (config.family() == Family::SD15 || config.family() == Family::SD2) {
    sd = models::loadSdCheckpoint(checkpoint);
    for (torch::nn::Module* m : {static_cast<torch::nn::Module*>(sd.unet.get()), &sd.textEncoder()}) {
      m->to(device, torch::kFloat32);
      m->eval();
    }
    outputsOf = [&] { return train::sdModuleOutputs(sd, inputs); };
    inputNames = "x, timesteps, context; input_ids";
  } else {
    sdxl = train::loadSdxlModelSet(checkpoint, config.getString("vae"));
    sdxl.toDevice(device, torch::kFloat32);
    sdxl.setTraining(false);
    outputsOf = [&] { return train::sdxlModuleOutputs(sdxl, inputs); };
    inputNames = "x, timesteps, context, y; images; input_ids";
  }
  spdlog::info("running the models of {} on {} in fp32", checkpoint, train::describeDevice(device));
  std::vector<std::pair<std::string, torch::Tensor>> outputs;
  try {
    for (auto& [name, tensor] : outputsOf()) outputs.emplace_back(name, tensor.cpu());
  } catch (const std::invalid_argument& e) {
    spdlog::error("{}: {}", inPath, e.what());
    return kExitBadInput;
  }
  if (outputs.empty()) {
    spdlog::error("{}: no model has all of its inputs ({})", inPath, inputNames);
    return kExitBadInput;
  }
  io::writeSafetensors(outPath, outputs, {{"checkpoint", checkpoint}});
  spdlog::info("wrote {} outputs to {}", outputs.size(), outPath);
  return kExitOk;
}

// --module_outputs OUT --module_inputs IN --model_family flux: the FLUX transformer
// (--pretrained_model_name_or_path) and autoencoder (--ae), either or both, in fp32.
int writeFluxModuleOutputs(const Config& config, const std::string& outPath, const std::string& inPath) {
  const std::string transformerPath = config.getString("pretrained_model_name_or_path"), aePath = config.getString("ae"),
                    t5Path = config.getString("t5xxl");
  if (transformerPath.empty() && aePath.empty() && t5Path.empty()) {
    spdlog::error("--module_outputs --model_family flux needs --pretrained_model_name_or_path (a FLUX.1 transformer), "
                  "--ae (ae.safetensors) and/or --t5xxl (a T5 encoder)");
    return kExitBadInput;
  }
  const std::map<std::string, torch::Tensor> inputs = readInputs(inPath);
  const torch::Device device = comparisonDevice(config);
  models::FluxTransformer transformer{nullptr};
  models::FluxAutoencoder ae{nullptr};
  if (!transformerPath.empty()) {
    transformer = models::loadFluxTransformer(transformerPath, torch::kFloat32);
    transformer->to(device);
    transformer->eval();
  }
  if (!aePath.empty()) {
    ae = models::loadFluxAutoencoder(aePath, torch::kFloat32);
    ae->to(device);
    ae->eval();
  }
  models::T5Encoder t5{nullptr};
  if (!t5Path.empty()) {
    t5 = models::loadT5Encoder(t5Path, torch::kFloat32);
    t5->to(device);
    t5->eval();
  }
  spdlog::info("running FLUX {} {} {} on {} in fp32", transformerPath, aePath, t5Path, train::describeDevice(device));
  std::vector<std::pair<std::string, torch::Tensor>> outputs;
  try {
    for (auto& [name, tensor] : fluxModuleOutputs(&transformer, &ae, &t5, inputs)) outputs.emplace_back(name, tensor.cpu());
  } catch (const std::invalid_argument& e) {
    spdlog::error("{}: {}", inPath, e.what());
    return kExitBadInput;
  }
  if (outputs.empty()) {
    spdlog::error("{}: no model has all of its inputs (img, img_ids, txt, txt_ids, timesteps, y[, guidance]; images; t5_ids)", inPath);
    return kExitBadInput;
  }
  io::writeSafetensors(outPath, outputs, {{"transformer", transformerPath}, {"ae", aePath}, {"t5xxl", t5Path}});
  spdlog::info("wrote {} outputs to {}", outputs.size(), outPath);
  return kExitOk;
}

std::uint64_t seedOf(const Config& config) { return isUnset(config.get("seed")) ? 0 : static_cast<std::uint64_t>(config.getInt("seed")); }

}  // namespace

bool isTool(const ParsedArgs& args) {
  for (const char* tool : {"init_checkpoint", "init_dataset", "init_tokenizer", "module_outputs", "benchmark_steps"})
    if (value(args, tool)) return true;
  return args.hasFlag("print_lora_layout");
}

std::optional<int> runTool(const ParsedArgs& args, const Config& config) {
  try {
    if (auto out = value(args, "init_checkpoint")) {
      if (!config.family()) {
        spdlog::error("--init_checkpoint needs --model_family sdxl, flux, sd15 or sd2");
        return kExitBadInput;
      }
      std::optional<bool> tiny = tinySize(args);
      if (!tiny) return kExitBadInput;
      const std::filesystem::path parent = std::filesystem::path(*out).parent_path();
      if (!parent.empty()) std::filesystem::create_directories(parent);
      if (config.family() == Family::FLUX) {
        // The transformer (FLUX.1-dev's layout) at OUT and the other models beside it, as FLUX
        // users keep flux1-dev.safetensors, ae.safetensors, clip_l.safetensors and t5xxl_fp16.safetensors.
        const std::string ae = (parent / "ae.safetensors").string();
        const std::string clipL = (parent / "clip_l.safetensors").string();
        const std::string t5 = (parent / "t5xxl_fp16.safetensors").string();
        spdlog::info("writing a {} FLUX.1-dev transformer with random weights to {}, and its autoencoder, CLIP-L and T5-XXL "
                     "to {}, {}, {}", *tiny ? "tiny" : "full-size", *out, ae, clipL, t5);
        models::writeRandomFluxTransformer(*out, *tiny, /*dev=*/true, seedOf(config));
        models::writeRandomFluxAutoencoder(ae, *tiny, seedOf(config) + 1);
        models::writeRandomClipL(clipL, *tiny, seedOf(config) + 2);
        models::writeRandomT5Xxl(t5, *tiny, seedOf(config) + 3);
        spdlog::info("wrote {}, {}, {} and {}", *out, ae, clipL, t5);
        return kExitOk;
      }
      if (config.family() == Family::SD15 || config.family() == Family::SD2) {
        const bool v1 = config.family() == Family::SD15;
        spdlog::info("writing a {} {} checkpoint with random weights to {}", *tiny ? "tiny" : "full-size", v1 ? "SD 1.5" : "SD 2.1", *out);
        models::writeRandomSdCheckpoint(*out, v1 ? models::SdVersion::V1 : models::SdVersion::V2, *tiny, seedOf(config));
        spdlog::info("wrote {}", *out);
        return kExitOk;
      }
      spdlog::info("writing a {} SDXL checkpoint with random weights to {}", *tiny ? "tiny" : "full-size", *out);
      models::writeRandomSdxlCheckpoint(*out, *tiny, seedOf(config));
      spdlog::info("wrote {}", *out);
      return kExitOk;
    }
    if (args.hasFlag("print_lora_layout")) {
      if (config.family() != Family::SDXL && config.family() != Family::FLUX) {
        spdlog::error("--print_lora_layout needs --model_family sdxl or flux");
        return kExitBadInput;
      }
      std::optional<bool> tiny = tinySize(args);
      if (!tiny) return kExitBadInput;
      try {
        // networks.lora_flux's train_blocks (network_args) picks the blocks, as in a run.
        const network::LoraNetworkArgs networkArgs = network::parseNetworkArgs(config.getList("network_args"), config.getString("network_module"));
        network::checkNetworkArgsFamily(networkArgs, config.family() == Family::FLUX);
        std::cout << loraLayoutJson(config.family() == Family::FLUX ? "flux" : "sdxl", *tiny, !config.getBool("network_train_unet_only"),
                                    networkArgs.trainBlocks.value_or("all"), networkArgs.trainT5xxl)
                  << std::endl;
      } catch (const std::exception& e) {
        spdlog::error("{}", e.what());
        return kExitBadInput;
      }
      return kExitOk;
    }
    if (auto dir = value(args, "init_dataset")) {
      writeDemoDataset(*dir, 12, seedOf(config));
      spdlog::info("wrote a generated dataset to {}", *dir);
      return kExitOk;
    }
    if (auto dir = value(args, "init_tokenizer")) {
      writeByteLevelClipVocabulary(*dir);
      writeDemoT5Tokenizer(*dir);
      spdlog::info("wrote a byte-level CLIP vocabulary and a small T5 SentencePiece model to {}", *dir);
      return kExitOk;
    }
    if (auto out = value(args, "module_outputs")) {
      const std::optional<std::string> in = value(args, "module_inputs");
      if (!in) {
        spdlog::error("--module_outputs needs --module_inputs IN.safetensors");
        return kExitBadInput;
      }
      if (config.family() == Family::FLUX) return writeFluxModuleOutputs(config, *out, *in);
      return writeModuleOutputs(config, *out, *in);
    }
    if (auto steps = value(args, "benchmark_steps")) {
      std::optional<bool> tiny = tinySize(args);
      if (!tiny) return kExitBadInput;
      long long n = 0;
      try {
        n = std::stoll(*steps);
      } catch (const std::exception&) {
      }
      if (n < 1) {
        spdlog::error("--benchmark_steps takes a positive number of steps, not '{}'", *steps);
        return kExitBadInput;
      }
      const bool scaling = args.hasFlag("benchmark_scaling");
      // benchmark_rows.cpp traces each row's first timed steps to output_dir; say why none will be.
      if (std::string why; config.has("profile_steps") && config.getInt("profile_steps") > 0) {
        if (!train::profilerAvailable(&why)) spdlog::warn("profile_steps: {}", why);
        else if (config.getString("output_dir").empty())
          spdlog::warn("profile_steps: the benchmark writes its traces to output_dir, which is not set");
      }
      // The family's own benchmark (its registration's), SDXL's when --model_family is not given.
      const Family family = config.family().value_or(Family::SDXL);
      // SINTER_CUDA_MEMORY_CAP_GB emulates a smaller card; vram_budget_gb plans the benchmark's step.
      if (const std::string capped = train::applyMemoryCapFromEnvironment(train::trainingDevice()); !capped.empty())
        spdlog::info("{}", capped);
      Config budgeted = config;
      if (const std::optional<VramPlan> plan = train::planBenchmark(budgeted, family)) {
        if (*tiny) spdlog::warn("vram_budget_gb plans the full-size model; with --model_size tiny its estimates do not apply");
        for (const std::string& line : plan->lines()) spdlog::info("{}", line);
        if (!plan->chosen) {
          spdlog::error("{}", plan->error());
          return kExitBadInput;
        }
      }
      const Config& benchConfig = budgeted;
      const train::FamilyRegistration* registration = train::findRegisteredFamily(family);
      if (!registration || !registration->benchmark) {
        spdlog::error("--benchmark_steps: this build has no benchmark for model_family {}", toString(family));
        return kExitBadInput;
      }
      if (args.hasFlag("benchmark_optimizers")) {
        if (!registration->optimizerBenchmark) {
          spdlog::error("--benchmark_optimizers: this build times the optimizers with model_family sdxl only, not {}",
                        toString(family));
          return kExitBadInput;
        }
        return registration->optimizerBenchmark(benchConfig, n, *tiny);
      }
      if (args.hasFlag("benchmark_networks")) {
        if (!registration->networkBenchmark) {
          spdlog::error("--benchmark_networks: this build times the LyCORIS networks with model_family sdxl only, not {}",
                        toString(family));
          return kExitBadInput;
        }
        return registration->networkBenchmark(benchConfig, n, *tiny);
      }
      return registration->benchmark(benchConfig, n, *tiny, scaling);
    }
  } catch (const std::exception& e) {
    spdlog::error("{}", train::userMessage(e));
    return kExitTrainingFailed;
  }
  return std::nullopt;
}

}  // namespace sinter::runner
