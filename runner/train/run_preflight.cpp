#include "train/run_preflight.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <optional>

#include "core/model_family_detect.h"
#include "core/registry.h"
#include "io/safetensors.h"
#include "models/flux_autoencoder.h"
#include "models/flux_transformer.h"
#include "models/served_weight.h"
#include "models/t5_encoder.h"
#include "data/batch_plan.h"
#include "data/dataset_settings.h"
#include "network/lora_file.h"
#include "network/lora_network.h"
#include "text/clip_tokenizer.h"
#include "text/t5_tokenizer.h"
#include "train/capture_facts.h"
#include "sample/diffusion_samplers.h"
#include "sample/sample_prompts.h"
#include "train/device_info.h"
#include "train/diffusion_loss.h"
#include "train/flow_matching.h"
#include "train/flux_model_set.h"
#include "train/full_weights_method.h"
#include "train/fused_backward.h"
#include "train/lora_method.h"
#include "train/sample_images.h"
#include "train/lr_schedule.h"
#include "train/mixed_precision.h"
#include "train/optimizer_args.h"
#include "train/run_folders.h"
#include "train/step_profiler.h"
#include "train/training_loop.h"
#include "train/training_table.h"

namespace sinter::train {

namespace {

bool isDir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool isFile(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

class Checks {
 public:
  Checks(const Config& config, std::vector<Diagnostic>& out) : config_(config), out_(out) {}

  void error(const std::string& key, const std::string& message) {
    out_.push_back(Diagnostic{Severity::Error, config_.whereSet(key), key, message});
  }
  void warning(const std::string& key, const std::string& message) {
    out_.push_back(Diagnostic{Severity::Warning, config_.whereSet(key), key, message});
  }
  // Runs one of the parsers the run uses; what it throws becomes an error on `key`.
  bool parse(const std::string& key, const std::function<void()>& check) {
    try {
      check();
      return true;
    } catch (const ConfigError& e) {
      for (const Diagnostic& d : e.diagnostics()) out_.push_back(d);
    } catch (const std::exception& e) {
      error(key, e.what());
    }
    return false;
  }

 private:
  const Config& config_;
  std::vector<Diagnostic>& out_;
};

// Every path option that is set exists and is of the right kind; the folders the run makes
// (output_dir, logging_dir: run_folders.h) can be made and written.
void checkPaths(const Config& config, Checks& k) {
  const Tab tab = config.tab();
  const std::optional<Family> family = config.family();
  const std::vector<std::string>& created = foldersTheRunCreates();
  for (const auto& spec : optionRegistry()) {
    if (spec.type != OptionType::Path || !spec.appliesToTab(tab)) continue;
    if (family && !spec.appliesToFamily(*family)) continue;
    const std::string p = config.getString(spec.key);
    if (p.empty()) continue;
    if (std::find(created.begin(), created.end(), spec.key) != created.end()) {
      if (const std::optional<std::string> why = whyFolderCannotBeCreated(spec.key, p)) k.error(spec.key, *why);
      continue;
    }
    if (spec.pathKind == PathKind::Directory && !isDir(p)) k.error(spec.key, std::string(spec.key) + ": folder '" + p + "' does not exist");
    if (spec.pathKind == PathKind::File && !isFile(p)) k.error(spec.key, std::string(spec.key) + ": file '" + p + "' does not exist");
  }
  if (config.getString("output_dir").empty()) k.error("output_dir", "output_dir is not set");
}

// The family the config names or the checkpoint's tensor names show; nullopt after an error.
std::optional<Family> checkFamily(const Config& config, Checks& k) {
  std::optional<Family> family = config.family();
  const std::string model = config.getString("pretrained_model_name_or_path");
  if (model.empty()) {
    k.error("pretrained_model_name_or_path", "pretrained_model_name_or_path is not set");
    return std::nullopt;
  }
  if (!isFile(model)) return std::nullopt;  // reported by checkPaths
  try {
    std::optional<Family> detected = detectModelFamily(model);
    if (!detected) {
      k.error("pretrained_model_name_or_path", "cannot tell the model family of '" + model + "' from its tensor names; set model_family");
      return std::nullopt;
    }
    if (family && *family != *detected) {
      k.error("model_family", "model_family is " + std::string(toString(*family)) + " but '" + model + "' is a " +
                                  toString(*detected) + " checkpoint");
      return std::nullopt;
    }
    return detected;
  } catch (const std::exception& e) {
    k.error("pretrained_model_name_or_path", e.what());
    return std::nullopt;
  }
}

// What this build trains (training_table.h); everything else is refused before any work.
bool checkBuilt(const Config& config, Family family, Checks& k) {
  const std::optional<std::string> reason = notBuiltReason(family, config.tab());
  if (reason) k.error(config.has("training_type") ? "training_type" : "model_family", *reason);
  return !reason;
}

// The values the run parses into its parts, parsed here by the same functions. True when all parse.
bool checkValues(const Config& config, Checks& k) {
  bool ok = true;
  ok &= k.parse("mixed_precision", [&] {
    const PrecisionPlan plan = planPrecision(parseMixedPrecision(config.getString("mixed_precision")), config.getBool("full_fp16"),
                                             config.getBool("full_bf16"));
    if (plan.weightDtype == torch::kHalf && !trainingDevice().is_cuda())
      throw std::invalid_argument("mixed_precision = \"fp16\" needs a CUDA GPU; this machine has none (use \"bf16\" or \"no\")");
  });
  ok &= k.parse("optimizer_type", [&] { resolveOptimizerType(config.getString("optimizer_type")); });
  std::optional<OptimizerSettings> optimizer;
  ok &= k.parse("optimizer_args", [&] {
    optimizer = parseOptimizerSettings(config.getString("optimizer_type"), config.getList("optimizer_args"));
  });
  ok &= k.parse("lr_scheduler", [&] {
    if (optimizer) resolveLrScheduler(config.getString("lr_scheduler"), *optimizer);
    else parseLrSchedulerType(config.getString("lr_scheduler"));
  });
  if (optimizer && fusedBackwardPassRequested(config))
    ok &= k.parse("fused_backward_pass", [&] { checkFusedBackwardPass(*optimizer, config.getInt("gradient_accumulation_steps")); });
  ok &= k.parse("loss_type", [&] { parseLossType(config.getString("loss_type")); });
  ok &= k.parse("save_precision", [&] {
    if (!config.getString("save_precision").empty()) network::savePrecisionDtype(config.getString("save_precision"));
  });
  ok &= k.parse("network_args", [&] {
    network::LoraNetwork checked(loraNetworkOptions(config));  // the constructor checks rank and dropout
  });
  const std::string tokenizer = config.getString("clip_tokenizer");
  if (tokenizer.empty()) {
    ok = false;
    k.error("clip_tokenizer", "clip_tokenizer is not set: point it at a folder with the CLIP tokenizer (vocab.json and merges.txt, "
                              "or tokenizer.json); nothing is downloaded");
  } else {
    ok &= k.parse("clip_tokenizer", [&] { text::ClipTokenizer::fromPath(tokenizer); });
  }
  return ok;
}

// FLUX's other files (flux_train_network's --ae, --clip_l, --t5xxl) and T5's tokenizer: each set,
// there, and the model it names (read from the header only).
bool checkFluxFiles(const Config& config, Checks& k) {
  bool ok = true;
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
  const std::string tokenizer = config.getString("t5_tokenizer");
  if (tokenizer.empty()) {
    ok = false;
    k.error("t5_tokenizer", "t5_tokenizer is not set: point it at a folder with T5's spiece.model (google/t5-v1_1-xxl); "
                            "nothing is downloaded");
  } else {
    ok &= k.parse("t5_tokenizer", [&] { text::T5Tokenizer checked(tokenizer); });
  }
  ok &= k.parse("timestep_sampling", [&] { FlowMatchingOptions::fromConfig(config); });
  if (config.getBool("fp8_base") && !models::float8InBuild())
    ok &= k.parse("fp8_base", [] { models::float8Dtype(); });  // names the libtorch
  const std::string transformer = config.getString("pretrained_model_name_or_path");
  if (!isUnset(config.get("blocks_to_swap")) && config.getInt("blocks_to_swap") > 0 && isFile(transformer))
    ok &= k.parse("blocks_to_swap", [&] {
      const io::SafetensorsFile file(transformer);
      models::fluxBlockSwapSplit(models::FluxConfig::inferFromCheckpoint(file, models::FluxTransformerImpl::checkpointPrefix(file)),
                                 config.getInt("blocks_to_swap"));
    });
  return ok;
}

// The images, and (when the values parsed) the schedule's arithmetic that needs their count.
std::optional<data::Dataset> checkDataset(const Config& config, bool valuesParsed, Checks& k) {
  const std::string key = config.getString("dataset_config").empty() ? "train_data_dir" : "dataset_config";
  if (config.getString("train_data_dir").empty() && config.getString("dataset_config").empty()) {
    k.error("train_data_dir", "no training data: set train_data_dir or dataset_config");
    return std::nullopt;
  }
  std::optional<data::Dataset> dataset;
  k.parse(key, [&] {
    std::vector<std::string> warnings;
    std::vector<data::DatasetSettings> settings = data::datasetSettingsFromConfig(config, warnings);
    data::DiscoveryOptions discovery;
    discovery.workers = std::max(1, static_cast<int>(config.getInt("max_data_loader_n_workers")));
    dataset = data::buildDataset(std::move(settings), discovery);
    for (const auto& w : warnings) k.warning(key, w);
    if (std::string report = dataset->report(); !report.empty()) k.warning(key, report);
  });
  if (!dataset) return std::nullopt;
  if (!valuesParsed) return dataset;
  k.parse("lr_warmup_steps", [&] {
    const LoopOptions options = LoopOptions::fromConfig(config, PrecisionPlan{});
    const LrSchedule checked(planSchedule(options, data::BatchPlan(*dataset, 0).batchesPerEpoch()).lr);
  });
  return dataset;
}

// Sample images: the prompt file parses, and SDXL's samplers are ones this build renders. FLUX has
// one sampler (sd-scripts ignores sample_sampler and --ss there). Prompts without a trigger, or a
// trigger without prompts, make no samples, as in sd-scripts; the run says so.
void checkSamples(const Config& config, std::optional<Family> family, Checks& k) {
  const std::string file = config.getString("sample_prompts");
  const bool trigger = config.getBool("sample_at_first") || !isUnset(config.get("sample_every_n_steps")) ||
                       !isUnset(config.get("sample_every_n_epochs"));
  if (file.empty()) {
    if (trigger) k.warning("sample_every_n_steps", "sample_at_first/sample_every_n_* are set but sample_prompts is not: no sample images are made");
    return;
  }
  if (!isFile(file)) return;  // checkPaths said so
  if (!trigger)
    k.warning("sample_prompts", "sample_prompts is set but none of sample_at_first, sample_every_n_steps or sample_every_n_epochs: "
                                "no sample images are made (as sd-scripts)");
  std::vector<sample::SamplePrompt> prompts;
  if (!k.parse("sample_prompts", [&] { prompts = sample::loadSamplePrompts(file); })) return;
  if (family == Family::FLUX) {
    bool samplerAsked = config.has("sample_sampler");
    for (const auto& p : prompts) samplerAsked |= p.sampler.has_value();
    if (samplerAsked) k.warning("sample_sampler", "FLUX samples are made with the flow-matching Euler sampler, as sd-scripts makes them; "
                                                  "sample_sampler and --ss are not used");
    return;
  }
  k.parse("sample_sampler", [&] { sample::parseDiffusionSampler(config.getString("sample_sampler")); });
  for (const auto& p : prompts)
    if (p.sampler) k.parse("sample_prompts", [&] {
        try {
          sample::parseDiffusionSampler(*p.sampler);
        } catch (const std::invalid_argument& e) {
          throw std::invalid_argument(p.where + ": " + e.what());
        }
      });
}

}  // namespace

RunPreflight preflightRun(const Config& config, int ranks) {
  RunPreflight result;
  result.resolved = config;
  Checks k(config, result.diagnostics);
  checkPaths(config, k);
  const std::optional<Family> family = checkFamily(config, k);
  if (family && !checkBuilt(config, *family, k)) return result;
  if (family) {
    result.resolved.set("model_family", std::string(toString(*family)), config.whereSet("model_family"));
    // sd-scripts requires network_module; Sinter picks the family's (it is written into the metadata).
    if (result.resolved.getString("network_module").empty())
      result.resolved.set("network_module", std::string(*family == Family::FLUX ? "networks.lora_flux" : "networks.lora"));
  }
  bool valuesParsed = checkValues(config, k);
  if (family && config.tab() != Tab::LoRA && valuesParsed)
    if (const std::optional<Refusal> refusal = fullWeightsRefusal(config)) {
      k.error(refusal->key, refusal->message);
      valuesParsed = false;
    }
  if (family == Family::FLUX) valuesParsed &= checkFluxFiles(config, k);
  if (family && *family != Family::FLUX && !config.getList("network_args").empty()) {
    k.parse("network_args", [&] {
      if (network::parseNetworkArgs(config.getList("network_args")).trainBlocks)
        throw std::invalid_argument("network_args train_blocks is an argument of networks.lora_flux (FLUX), not of " +
                                    std::string(toString(*family)) + "'s networks.lora");
    });
  }
  checkSamples(config, family, k);
  result.dataset = checkDataset(config, valuesParsed, k);
  if (std::string why; config.has("profile_steps") && !profilerAvailable(&why))
    k.warning("profile_steps", "profile_steps: " + why + "; the run trains without a trace");
  if (valuesParsed) {
    result.compilePlan = compile::planCompile(result.resolved, family, captureFacts(result.resolved, trainingDevice(), ranks));
    if (result.compilePlan->fatal) k.error("compile_fullgraph", *result.compilePlan->fatal);
  }
  return result;
}

}  // namespace sinter::train
