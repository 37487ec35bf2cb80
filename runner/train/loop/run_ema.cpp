#include "train/loop/run_ema.h"

#include <spdlog/spdlog.h>

#include <filesystem>

namespace sinter::train {

namespace fs = std::filesystem;

std::string emaFilePath(const std::string& modelPath) {
  const fs::path p(modelPath);
  return (p.parent_path() / (p.stem().string() + kEmaStemSuffix + p.extension().string())).string();
}

RunEma::RunEma(const RunContext& run, FamilyPart& family, MethodPart& method, const Optimizer& optimizer, NamedTensors resumedEma,
               const std::string& resumeFolder)
    : method_(method), options_(EmaOptions::fromConfig(run.config)) {
  if (run.rank() != 0) return;
  if (!options_.enabled()) {
    if (!resumedEma.empty()) spdlog::info("resume: {} holds an EMA of the weights; ema_decay is unset, so it is left alone", resumeFolder);
    return;
  }
  // blocks_to_swap's masters in host memory hold the step's values once the ring has written them back.
  std::function<void()> settle;
  if (!family.blockSwaps().empty())
    settle = [&family] {
      for (const auto& swap : family.blockSwaps()) swap->synchronize();
    };
  ema_ = std::make_unique<WeightEma>(optimizer.parameters(), options_, std::move(settle));
  if (!resumeFolder.empty() && resumedEma.empty()) {
    const std::string message = "resume: " + resumeFolder + " holds no EMA of the weights (saved without ema_decay): the EMA starts "
                                "from the resumed weights";
    spdlog::warn("{}", message);
    run.events.emit(events::Warning{message});
  } else if (!resumeFolder.empty()) {
    ema_->loadStateTensors(resumedEma, (fs::path(resumeFolder) / "ema.safetensors").string());
    spdlog::info("resume: the EMA of the weights continues from {} after {} update{}", resumeFolder, ema_->updates(),
                 ema_->updates() == 1 ? "" : "s");
  }
  const std::string samples = run.config.getString("sample_prompts").empty() ? ""
                              : options_.forSamples ? "; sample images show its weights" : "; sample images show the trained weights";
  spdlog::info("EMA of the trained weights: ema_decay {}{}, updated every {} steps, {} tensors ({:.1f} MiB, float32) {}{}", options_.decay,
               options_.warmup ? " after a warm-up (ema_warmup)" : "", options_.updateEvery, ema_->size(),
               static_cast<double>(ema_->bytes()) / 1048576.0, options_.inHostMemory ? "in host memory" : "beside the weights", samples);
}

RunEma::~RunEma() = default;

void RunEma::afterStep(long long globalStep) {
  if (ema_) ema_->afterStep(globalStep);
}

std::string RunEma::saveBeside(const std::string& modelPath, const SaveStamp& stamp) {
  if (!ema_) return {};
  const std::string path = emaFilePath(modelPath);
  showEma();
  try {
    method_.saveModel(path, stamp);
  } catch (...) {
    showTrained();
    throw;
  }
  showTrained();
  spdlog::info("saved {} (the EMA of the weights, {} update{})", path, ema_->updates(), ema_->updates() == 1 ? "" : "s");
  return path;
}

NamedTensors RunEma::stateTensors() { return ema_ ? ema_->stateTensors() : NamedTensors{}; }

void RunEma::showEma() {
  ema_->swapIn();
  method_.trainedWeightsChanged();
}

void RunEma::showTrained() {
  ema_->swapOut();
  method_.trainedWeightsChanged();
}

EmaWeightsForSamples::EmaWeightsForSamples(RunEma* ema) : ema_(ema && ema->forSamples() ? ema : nullptr) {
  if (ema_) ema_->showEma();
}

EmaWeightsForSamples::~EmaWeightsForSamples() {
  if (ema_) ema_->showTrained();
}

}  // namespace sinter::train
