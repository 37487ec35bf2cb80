#include "train/loop/run_preflight.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>

#include "core/family_table.h"
#include "core/model_family_detect.h"
#include "core/registry.h"
#include "data/batch_plan.h"
#include "data/dataset_settings.h"
#include "data/latent_cache.h"
#include "distributed/torchrun_environment.h"
#include "network/lora_file.h"
#include "network/lora_network.h"
#include "text/bundled_tokenizers.h"
#include "text/hub_cache_tokenizers.h"
#include "text/clip_tokenizer.h"
#include "train/bench/capture_facts.h"
#include "sample/diffusion_samplers.h"
#include "sample/sample_prompts.h"
#include "train/base/device_info.h"
#include "train/base/mixed_precision.h"
#include "train/bench/step_profiler.h"
#include "train/base/train_state.h"
#include "train/base/vram_budget.h"
#include "train/loop/best_validation.h"
#include "train/optim/weight_ema.h"
#include "train/loop/vram_budget_plan.h"
#include "train/loop/resume_position.h"
#include "train/loop/resume_settings.h"
#include "train/loop/sample_images.h"
#include "train/loop/training_loop.h"
#include "train/loop/training_table.h"
#include "train/methods/full_weights_method.h"
#include "train/methods/lora_method.h"
#include "train/methods/pivotal_embeddings.h"
#include "train/methods/textual_inversion_options.h"
#include "train/objectives/diffusion_loss.h"
#include "train/optim/fused_backward.h"
#include "train/optim/lr_schedule.h"
#include "train/optim/lr_schedule_config.h"
#include "train/optim/optimizer_args.h"
#include "train/parts/family_registration.h"
#include "train/parts/preflight_checks.h"
#include "train/optim/optimizer_choice.h"
#include "train/loop/run_folders.h"
#include "train/loop/tracker_settings.h"

namespace sinter::train {

namespace {

// Every path option that is set exists and is of the right kind; the folders the run makes
// (output_dir, logging_dir: run_folders.h) can be made and written.
void checkPaths(const Config& config, PreflightChecks& k) {
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
std::optional<Family> checkFamily(const Config& config, PreflightChecks& k) {
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
bool checkBuilt(const Config& config, Family family, PreflightChecks& k) {
  const std::optional<std::string> reason = notBuiltReason(family, config.tab());
  if (reason) k.error(config.has("training_type") ? "training_type" : "model_family", *reason);
  return !reason;
}

// The values the run parses into its parts, parsed here by the same functions. True when all parse.
bool checkValues(const Config& config, PreflightChecks& k) {
  bool ok = true;
  ok &= k.parse("mixed_precision", [&] {
    const PrecisionPlan plan = planPrecision(parseMixedPrecision(config.getString("mixed_precision")), config.getBool("full_fp16"),
                                             config.getBool("full_bf16"));
    if (plan.weightDtype == torch::kHalf && !trainingDevice().is_cuda())
      throw std::invalid_argument("mixed_precision = \"fp16\" needs a CUDA GPU; this machine has none (use \"bf16\" or \"no\")");
  });
  ok &= k.parse("optimizer_type", [&] { resolveOptimizerType(configuredOptimizerType(config)); });
  std::optional<OptimizerSettings> optimizer;
  ok &= k.parse("optimizer_args", [&] {
    optimizer = optimizerSettingsFromConfig(config);
  });
  ok &= k.parse("lr_scheduler", [&] {
    if (optimizer) resolveLrScheduler(config.getString("lr_scheduler"), *optimizer);
    else parseLrSchedulerType(config.getString("lr_scheduler"));
  });
  if (optimizer)
    ok &= k.parse(config.getString("lr_scheduler_type").empty() ? "lr_scheduler_args" : "lr_scheduler_type",
                  [&] { lrScheduleOptionsFromConfig(config, *optimizer); });
  if (optimizer && fusedBackwardPassRequested(config))
    ok &= k.parse(fusedBackwardOption(config), [&] {
      checkFusedBackwardPass(*optimizer, config.getInt("gradient_accumulation_steps"), fusedBackwardOption(config));
    });
  ok &= k.parse("loss_type", [&] { parseLossType(config.getString("loss_type")); });
  ok &= k.parse("save_precision", [&] {
    if (!config.getString("save_precision").empty()) network::savePrecisionDtype(config.getString("save_precision"));
  });
  ok &= k.parse("network_args", [&] {
    network::LoraNetwork checked(loraNetworkOptions(config));  // the constructor checks rank and dropout
  });
  if (config.getString("network_module") == "lycoris.kohya" && config.getBool("dim_from_weights"))
    ok &= k.parse("dim_from_weights", [] { throw std::invalid_argument(network::lycorisDimFromWeightsRefusal()); });
  // Unset: the CLIP vocabulary that ships with Sinter (preflightRun puts its folder in the resolved config).
  ok &= k.parse("clip_tokenizer", [&] {
    text::ClipTokenizer::fromPath(text::tokenizerFolder("clip_tokenizer", config.getString("clip_tokenizer"), "clip"));
  });
  return ok;
}

// The images, and (when the values parsed) the schedule's arithmetic that needs their count.
std::optional<data::Dataset> checkDataset(const Config& config, bool valuesParsed, PreflightChecks& k) {
  const std::string key = config.getString("dataset_config").empty() ? "train_data_dir" : "dataset_config";
  if (config.getString("train_data_dir").empty() && config.getString("dataset_config").empty()) {
    k.error("train_data_dir", "no training data: set train_data_dir or dataset_config");
    return std::nullopt;
  }
  std::optional<data::Dataset> dataset;
  k.parse(key, [&] {
    std::vector<std::string> warnings;
    std::vector<data::DatasetSettings> settings = data::datasetSettingsFromConfig(config, warnings);
    // Without a seed the run draws one later and holds out images again with it (training_run.cpp).
    dataset = data::buildDataset(std::move(settings), data::DiscoveryOptions::fromConfig(config));
    for (const auto& w : warnings) k.warning(key, w);
    for (const auto& w : dataset->warnings) k.warning(key, w);
    // Each file left out is a warning of its own, naming it (the totals are in the run's summary
    // and start event).
    for (const auto& s : dataset->skipped) k.warning(key, "skipped " + s.path + ": " + s.reason);
  });
  if (!dataset) return std::nullopt;
  if (config.getBool("cache_latents") || config.getBool("cache_latents_to_disk"))
    if (const std::string why = data::LatentCache::refusal(*dataset); !why.empty()) k.error("cache_latents", why);
  if (!valuesParsed) return dataset;
  k.parse("lr_scheduler", [&] {
    const LoopOptions options = LoopOptions::fromConfig(config, PrecisionPlan{});
    const LrSchedule checked(planSchedule(options, data::BatchPlan(*dataset, 0).batchesPerEpoch()).lr);
  });
  k.parse(config.has("initial_step") ? "initial_step" : "initial_epoch", [&] {
    const LoopOptions options = LoopOptions::fromConfig(config, PrecisionPlan{});
    checkInitialStep(options, planSchedule(options, data::BatchPlan(*dataset, 0).batchesPerEpoch()));
  });
  return dataset;
}

// A state to resume: its train_state.json checked against this run (resume_position.h), before
// anything is made. A folder that is no state is the run's to report (train_state.h).
void checkResumeState(const Config& config, const data::Dataset& dataset, int ranks, PreflightChecks& k) {
  const std::string folder = config.getString("resume");
  if (folder.empty() || !isFile(folder + "/train_state.json")) return;
  k.parse("resume", [&] {
    if (ranks <= 0) {
      std::optional<distributed::TorchrunEnvironment> env;
      try {
        env = distributed::readTorchrunEnvironment();
      } catch (const std::invalid_argument&) {
      }
      ranks = env ? env->worldSize : 1;
    }
    const LoopOptions options = LoopOptions::fromConfig(config, PrecisionPlan{});
    const data::BatchPlan plan(dataset, 0);
    const long long batchSize = dataset.datasets.empty() ? 1 : dataset.datasets.front().batchSize;
    const EpochLayout layout{ranks, batchSize, plan.allBatchesPerEpoch()};
    const long long batchesPerRank = layout.batchesPerRank();
    const nlohmann::json progress = loadTrainStateProgress(folder);
    checkResumeProgress(progress, layout, planSchedule(options, batchesPerRank).length.maxTrainSteps,
                        options.initialStep || options.initialEpoch, folder + "/train_state.json");
    refuseUncarriedSettings(progress, config, folder + "/train_state.json");
  });
}

// Sample images: the prompt file parses, and the samplers it names are ones this build renders; a
// family with one sampler of its own (FLUX: sd-scripts ignores sample_sampler and --ss there) says
// they are not used. Prompts without a trigger, or a trigger without prompts, make no samples, as
// in sd-scripts; the run says so.
void checkSamples(const Config& config, const FamilyRegistration* family, PreflightChecks& k) {
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
  if (family && !family->fixedSampler.empty()) {
    bool samplerAsked = config.has("sample_sampler");
    for (const auto& p : prompts) samplerAsked |= p.sampler.has_value();
    if (samplerAsked)
      k.warning("sample_sampler", std::string(toString(family->family)) + " samples are made with " + family->fixedSampler +
                                      ", as sd-scripts makes them; sample_sampler and --ss are not used");
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

// vram_budget_gb: the plan chosen for this config and checkpoint, written into the resolved config
// (so the compile plan, the dry run and the run see its settings). Nothing fits (the step, or the
// start's largest stage while the caches are built): an error naming the budget.
void planMemory(RunPreflight& result, Family family, PreflightChecks& k) {
  std::optional<VramPlan> plan;
  if (!k.parse("vram_budget_gb", [&] { plan = planForRun(result.resolved, family); }) || !plan) return;
  result.vramPlan = plan;
  if (!plan->chosen) {
    k.error("vram_budget_gb", plan->error());
    return;
  }
  applyVramPlan(*plan, result.resolved);
}

}  // namespace

std::vector<std::string> tokenizerLines(const Config& resolved) {
  std::vector<std::string> lines;
  for (const auto& [key, name] : {std::pair<const char*, const char*>{"clip_tokenizer", "clip"}, {"t5_tokenizer", "t5"}})
    if (resolved.has(key) && !resolved.getString(key).empty())
      lines.push_back(text::describeTokenizer(key, resolved.getString(key), name));
  return lines;
}

compile::CompilePlan compilePlanFor(const Config& config, std::optional<Family> family, int ranks) {
  const compile::CaptureFacts facts = captureFacts(config, trainingDevice(), ranks);
  // A family without the compile panel (SD 1.x/2.x): the runner's own capture, off by SINTER_SD_CAPTURE=0.
  const FamilyRegistration* registration = family ? findRegisteredFamily(*family) : nullptr;
  if (registration && registration->capturesWithoutPanel) {
    const char* env = std::getenv("SINTER_SD_CAPTURE");
    const bool enabled = !(env && std::string(env) == "0");
    return compile::planAutomaticCapture(config, compileTargetsFor(family), facts, familyRow(*family).label, enabled);
  }
  return compile::planCompile(config, compileTargetsFor(family), facts);
}

RunPreflight preflightRun(const Config& config, int ranks) {
  RunPreflight result;
  result.resolved = config;
  PreflightChecks k(config, result.diagnostics);
  checkPaths(config, k);
  const std::optional<Family> family = checkFamily(config, k);
  if (family && !checkBuilt(config, *family, k)) return result;
  // Built, so registered (train/families.cpp): what the generic checks need to know of the family.
  const FamilyRegistration* registration = family ? findRegisteredFamily(*family) : nullptr;
  if (registration) {
    result.resolved.set("model_family", std::string(toString(*family)), config.whereSet("model_family"));
    // sd-scripts requires network_module; Sinter picks the family's (it is written into the metadata).
    if (result.resolved.getString("network_module").empty()) result.resolved.set("network_module", std::string(familyRow(registration->family).loraModule));
    if (registration->resolveFromFiles) registration->resolveFromFiles(config, result.resolved);
  }
  // An unset clip_tokenizer is the one that ships with Sinter: the run, the dry run and the start event
  // see its folder (checkValues reports it when it is missing).
  if (config.getString("clip_tokenizer").empty())
    if (const std::optional<std::string> bundled = text::findBundledTokenizer("clip")) result.resolved.set("clip_tokenizer", *bundled);
  // An unset t5_tokenizer is the copy sd-scripts downloaded into the Hugging Face cache, where there
  // is one (the family's check says where it looked when there is none).
  if (family && config.getString("t5_tokenizer").empty() && findOption("t5_tokenizer")->appliesToFamily(*family))
    if (const std::optional<std::string> cached = text::findCachedT5Tokenizer()) result.resolved.set("t5_tokenizer", *cached);
  // split_mode, deprecated in sd-scripts' flux_train_network: blocks_to_swap = 18 unless it is set, as there.
  if (config.getBool("split_mode")) {
    if (isUnset(config.get("blocks_to_swap"))) {
      result.resolved.set("blocks_to_swap", 18LL, config.whereSet("split_mode"));
      k.warning("split_mode", "split_mode is deprecated in sd-scripts: blocks_to_swap = 18 is used in its place, as sd-scripts sets it");
    } else {
      k.warning("split_mode", "split_mode is deprecated in sd-scripts and ignored here, as there, because blocks_to_swap is set");
    }
  }
  bool valuesParsed = checkValues(config, k);
  if (family && trainsFullWeights(config.tab()) && valuesParsed)
    if (const std::optional<Refusal> refusal = fullWeightsRefusal(config)) {
      k.error(refusal->key, refusal->message);
      valuesParsed = false;
    }
  if (family && config.tab() == Tab::TextualInversion && valuesParsed) {
    std::optional<Refusal> refusal;
    valuesParsed &= k.parse("clip_tokenizer", [&] { refusal = textualInversionRefusal(config); });  // it reads the tokenizer
    if (refusal) {
      k.error(refusal->key, refusal->message);
      valuesParsed = false;
    }
    // The files' name (the token where output_name is unset) also titles the embedding's metadata.
    if (config.getString("output_name").empty() && !config.getString("token_string").empty())
      result.resolved.set("output_name", runOutputName(config), config.whereSet("token_string"));
  }
  if (config.tab() == Tab::LoRA && valuesParsed && !config.getList("embeddings").empty()) {  // pivotal tuning
    std::optional<Refusal> refusal;
    valuesParsed &= k.parse("clip_tokenizer", [&] { refusal = pivotalEmbeddingsRefusal(config, registration && registration->textualInversion); });
    if (refusal) {
      k.error(refusal->key, refusal->message);
      valuesParsed = false;
    }
  }
  if (valuesParsed)
    if (const std::optional<EmaRefusal> ema = emaRefusal(config)) k.error(ema->key, ema->message);
  if (registration && registration->checkConfig) valuesParsed &= registration->checkConfig(config, k);
  // A key of the other family's network: block_dims with networks.lora_flux, train_blocks with networks.lora, ...
  if (registration && !config.getList("network_args").empty())
    k.parse("network_args", [&] {
      network::checkNetworkArgsFamily(network::parseNetworkArgs(config.getList("network_args"), result.resolved.getString("network_module")),
                                      network::loraNetworkModuleNamed(familyRow(registration->family).loraModule));
    });
  checkSamples(config, registration, k);
  checkTrackerOptions(config, k);
  result.dataset = checkDataset(config, valuesParsed, k);
  // The settings as the run resolves them (the family, its network_module, the tokenizers), as the state recorded them.
  if (result.dataset && valuesParsed) checkResumeState(result.resolved, *result.dataset, ranks, k);
  if (result.dataset && valuesParsed)
    if (const std::string why = bestValidationRefusal(config, result.dataset->numValidationImages); !why.empty())
      k.error(BestValidationOptions::fromConfig(config).keep > 0 ? "save_best_k" : "early_stop_patience", why);
  if (std::string why; config.has("profile_steps") && !profilerAvailable(&why))
    k.warning("profile_steps", "profile_steps: " + why + "; the run trains without a trace");
  if (valuesParsed && registration) planMemory(result, *family, k);
  if (valuesParsed) {
    result.compilePlan = compilePlanFor(result.resolved, family, ranks);
    if (result.compilePlan->fatal) k.error("compile_fullgraph", *result.compilePlan->fatal);
    if (result.vramPlan && result.vramPlan->chosen) {
      std::string chosen;
      for (const auto& [key, value] : result.vramPlan->settingsToApply()) chosen += (chosen.empty() ? "" : ", ") + key + " = " + asString(value);
      result.compilePlan->request.notes.push_back("vram_budget_gb plan: " + (chosen.empty() ? std::string("the settings as given") : chosen) +
                                                  " (the compile plan above is for these)");
    }
  }
  return result;
}

}  // namespace sinter::train
