#include "cli/runner_tools.h"

#include <spdlog/spdlog.h>

#include <ATen/Context.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <iostream>

#include "cli/demo_assets.h"
#include "cli/lora_layout.h"
#include "core/exit_codes.h"
#include "core/family_table.h"
#include "io/safetensors.h"
#include "network/lora_network.h"
#include "train/base/device_info.h"
#include "train/base/vram_budget.h"
#include "train/base/run_errors.h"
#include "train/bench/step_profiler.h"
#include "train/parts/family_registration.h"

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

// The families whose registration has a tool, by name, for the refusal of another ("sdxl or flux").
std::string familiesWith(const std::function<bool(const train::FamilyRegistration&)>& has) {
  std::vector<std::string> names;
  for (const train::FamilyRegistration& r : train::registeredFamilies())
    if (has(r)) names.emplace_back(toString(r.family));
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

const train::FamilyRegistration* toolFamily(const Config& config) {
  return config.family() ? train::findRegisteredFamily(*config.family()) : nullptr;
}

// Why --module_outputs cannot put the config's embedding (token_string, weights) or a prompt on the
// family's text encoders, or "". Checked before any model loads.
std::string moduleTextRefusal(const Config& config, const train::FamilyRegistration& registration, bool prompt) {
  const std::string tokenString = config.getString("token_string"), weights = config.getString("weights");
  const bool embedding = !tokenString.empty() || !weights.empty();
  if (!embedding && !prompt) return "";
  if (!registration.textualInversion)
    return std::string("--module_outputs takes ") + (prompt ? "--prompt" : "an embedding (token_string, weights)") +
           " for the families whose CLIP tokenizer and text encoders train textual inversion (" +
           familiesWith([](const train::FamilyRegistration& r) { return r.textualInversion && bool(r.moduleOutputs); }) + "), not " +
           toString(registration.family) + ": give its token ids as module inputs";
  if (!embedding) return "";
  // token_string, weights and num_vectors_per_token are textual inversion's keys; another training
  // type ignores them (as the warnings above say), so the tool does not read them there either.
  if (config.tab() != Tab::TextualInversion)
    return "--module_outputs reads an embedding with textual inversion's options: add --training_type textual_inversion "
           "to --token_string, --weights and --num_vectors_per_token";
  if (tokenString.empty()) return "--weights needs --token_string: the embedding's rows are its tokens' (token_string, token_string1, ...)";
  if (weights.empty()) return "--token_string needs --weights EMB.safetensors: the embedding file whose rows its tokens take";
  return "";
}

// --module_outputs OUT [--module_inputs IN] [--prompt TEXT]: the family's models in fp32 on the
// training device, with the config's embedding on its text encoders where one is given.
int writeModuleOutputs(const Config& config, const std::string& outPath, const std::optional<std::string>& inPath,
                       const std::optional<std::string>& prompt) {
  const Family family = config.family().value_or(kDefaultFamily);
  const train::FamilyRegistration* registration = train::findRegisteredFamily(family);
  if (!registration || !registration->moduleOutputs) {
    spdlog::error("--module_outputs runs the models of model_family {}, not {}",
                  familiesWith([](const train::FamilyRegistration& r) { return bool(r.moduleOutputs); }), toString(family));
    return kExitBadInput;
  }
  if (const std::string why = moduleTextRefusal(config, *registration, prompt.has_value()); !why.empty()) {
    spdlog::error("{}", why);
    return kExitBadInput;
  }
  train::ModuleInputs inputs;
  if (inPath) inputs.tensors = readInputs(*inPath);
  inputs.prompt = prompt;
  const std::string inputsName = inPath ? *inPath : std::string("--prompt");
  const torch::Device device = comparisonDevice(config);
  train::ModuleOutputs outputs;
  try {
    outputs = registration->moduleOutputs(config, inputs, device);
  } catch (const std::invalid_argument& e) {
    spdlog::error("{}: {}", inputsName, e.what());
    return kExitBadInput;
  } catch (const train::InputError& e) {  // the embedding file, its tokens
    spdlog::error("{}", e.what());
    return kExitBadInput;
  }
  if (!outputs.missing.empty()) {
    spdlog::error("--module_outputs needs {}", outputs.missing);
    return kExitBadInput;
  }
  if (outputs.tensors.empty()) {
    spdlog::error("{}: no model has all of its inputs ({})", inputsName, outputs.inputNames);
    return kExitBadInput;
  }
  io::writeSafetensors(outPath, outputs.tensors, std::map<std::string, std::string>(outputs.metadata.begin(), outputs.metadata.end()));
  spdlog::info("wrote {} outputs to {}", outputs.tensors.size(), outPath);
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
      const train::FamilyRegistration* registration = toolFamily(config);
      if (!registration || !registration->writeRandomCheckpoint) {
        spdlog::error("--init_checkpoint needs --model_family {}",
                      familiesWith([](const train::FamilyRegistration& r) { return bool(r.writeRandomCheckpoint); }));
        return kExitBadInput;
      }
      std::optional<bool> tiny = tinySize(args);
      if (!tiny) return kExitBadInput;
      const std::filesystem::path parent = std::filesystem::path(*out).parent_path();
      if (!parent.empty()) std::filesystem::create_directories(parent);
      registration->writeRandomCheckpoint(*out, *tiny, seedOf(config), config);
      return kExitOk;
    }
    if (args.hasFlag("print_lora_layout")) {
      const train::FamilyRegistration* registration = toolFamily(config);
      if (!registration || !registration->loraLayout) {
        spdlog::error("--print_lora_layout needs --model_family {}",
                      familiesWith([](const train::FamilyRegistration& r) { return bool(r.loraLayout); }));
        return kExitBadInput;
      }
      std::optional<bool> tiny = tinySize(args);
      if (!tiny) return kExitBadInput;
      try {
        // networks.lora_flux's train_blocks (network_args) picks the blocks, as in a run.
        const network::LoraNetworkArgs networkArgs = network::parseNetworkArgs(config.getList("network_args"), config.getString("network_module"));
        network::checkNetworkArgsFamily(networkArgs, network::loraNetworkModuleNamed(familyRow(registration->family).loraModule));
        const train::LoraLayoutModels models = registration->loraLayout(*tiny, config);
        std::cout << loraLayoutJson(toString(registration->family), *tiny, models) << std::endl;
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
      const std::optional<std::string> in = value(args, "module_inputs"), prompt = value(args, "prompt");
      if (!in && !prompt) {
        spdlog::error("--module_outputs needs --module_inputs IN.safetensors or --prompt TEXT");
        return kExitBadInput;
      }
      return writeModuleOutputs(config, *out, in, prompt);
    }
    if (value(args, "prompt")) {
      spdlog::error("--prompt goes with --module_outputs (the text encoders' outputs on a prompt); a run's prompts are sample_prompts");
      return kExitBadInput;
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
      const Family family = config.family().value_or(kDefaultFamily);
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
