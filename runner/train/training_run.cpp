#include "train/training_run.h"

#include <spdlog/spdlog.h>

#include "core/compile_settings.h"
#include "core/model_family_detect.h"
#include "train/sdxl_lora_trainer.h"

namespace sinter::train {

namespace {

constexpr int kExitOk = 0, kExitFailed = 1, kExitBadInput = 2;

int fail(EventSink& events, int code, const std::string& message) {
  spdlog::error("{}", message);
  events.emit(events::Error{message});
  events.emit(events::Done{"failed", 0, 0});
  return code;
}

// The compile engine is a later piece of work: say plainly what is and is not on.
void reportCompilePlan(const Config& config, EventSink& events) {
  CompileRequest request = resolveCompileRequest(config);
  for (const auto& note : request.notes) spdlog::warn("{}", note), events.emit(events::Warning{note});
  events::CompilePlan plan;
  plan.enabled = request.enabled;
  plan.backend = request.backend;
  plan.mode = request.mode;
  plan.dynamic = request.dynamic;
  plan.fullgraph = request.fullgraph;
  plan.cache_size_limit = request.cacheSizeLimit;
  if (request.enabled) {
    plan.unavailable.push_back("graph capture and fused kernels: the compile engine is not in this build; the step runs eagerly");
    spdlog::warn("compile requested ({}), but the compile engine is not in this build: training runs eagerly",
                 request.logLine("U-Net"));
  }
  events.emit(plan);
}

}  // namespace

int runTraining(const Config& config, EventSink& events) {
  // Which model this is: the config says so, or the checkpoint's tensor names do.
  std::optional<Family> family = config.family();
  const std::string checkpoint = config.getString("pretrained_model_name_or_path");
  if (!family && !checkpoint.empty()) {
    try {
      family = detectModelFamily(checkpoint);
    } catch (const std::exception& e) {
      return fail(events, kExitBadInput, e.what());
    }
    if (!family) return fail(events, kExitBadInput, "cannot tell the model family of '" + checkpoint + "'; set model_family");
    spdlog::info("model family: {} (detected from {})", toString(*family), checkpoint);
  }
  if (family != Family::SDXL)
    return fail(events, kExitBadInput,
                std::string("training ") + (family ? toString(*family) : "this model") +
                    " is not in this build yet: sinter-runner trains SDXL LoRA");
  if (config.tab() != Tab::LoRA)
    return fail(events, kExitBadInput,
                std::string(toString(config.tab())) + " training is not in this build yet: sinter-runner trains SDXL LoRA");
  Config resolved = config;
  resolved.set("model_family", std::string("sdxl"));
  // sd-scripts requires network_module; Sinter picks the family's (it is written into the metadata).
  if (resolved.getString("network_module").empty()) resolved.set("network_module", std::string("networks.lora"));
  reportCompilePlan(resolved, events);

  // Anything that goes wrong before the first step is bad input (exit 2); after it, a failed run (1).
  bool trainingStarted = false;
  try {
    return trainSdxlLora(resolved, events, trainingStarted);
  } catch (const std::exception& e) {
    return trainingStarted ? fail(events, kExitFailed, std::string("training failed: ") + e.what())
                           : fail(events, kExitBadInput, e.what());
  }
}

}  // namespace sinter::train
