#pragma once
// A run's EMA of its trained weights (ema_decay; the rule in optim/weight_ema.h, DESIGN.md §8): made
// once the run's start is known, from its weights or from the resumed state's EMA; updated after each
// step; written beside every saved model as <name>-ema.safetensors, by the method that writes the
// model (its format, its metadata), the EMA's weights in the models while it writes; kept in each
// training state; and in the models for sample images with ema_for_samples. Rank 0 alone keeps it:
// every rank's weights are the same after each step, and rank 0 alone samples and writes files.
#include <memory>
#include <string>

#include "train/optim/optimizer.h"
#include "train/optim/weight_ema.h"
#include "train/parts/training_parts.h"

namespace sinter::train {

// What an EMA file's stem ends with: "<stem>-ema" beside the model file "<stem>".
inline constexpr const char* kEmaStemSuffix = "-ema";
// "<folder>/<stem>-ema.safetensors" beside the model file "<folder>/<stem>.safetensors".
std::string emaFilePath(const std::string& modelPath);

class RunEma {
 public:
  // `resumedEma`: the resumed state's EMA (TrainState::ema), empty where the state has none or the
  // run starts afresh; `resumeFolder`: the state's folder, empty for a fresh run.
  RunEma(const RunContext& run, FamilyPart& family, MethodPart& method, const Optimizer& optimizer, NamedTensors resumedEma,
         const std::string& resumeFolder);
  ~RunEma();
  RunEma(const RunEma&) = delete;
  RunEma& operator=(const RunEma&) = delete;

  bool active() const { return ema_ != nullptr; }
  bool forSamples() const { return ema_ && options_.forSamples; }
  // After the run's step `globalStep` (an update every ema_update_every steps).
  void afterStep(long long globalStep);
  // The EMA file beside the model file `modelPath`, written as the method writes that model, with
  // `stamp`; its path, or empty where there is no EMA.
  std::string saveBeside(const std::string& modelPath, const SaveStamp& stamp);
  // The EMA's part of a training state (empty where there is none).
  NamedTensors stateTensors();
  // The models hold the EMA's weights, then the trained ones again (exactly as they were).
  void showEma();
  void showTrained();

 private:
  MethodPart& method_;
  EmaOptions options_;
  std::unique_ptr<WeightEma> ema_;
};

// While it lives the models hold the EMA's weights, for sample images (ema_for_samples); nothing
// changes where there is no EMA or the option is off.
class EmaWeightsForSamples {
 public:
  explicit EmaWeightsForSamples(RunEma* ema);
  ~EmaWeightsForSamples();
  EmaWeightsForSamples(const EmaWeightsForSamples&) = delete;
  EmaWeightsForSamples& operator=(const EmaWeightsForSamples&) = delete;
  bool shown() const { return ema_ != nullptr; }

 private:
  RunEma* ema_ = nullptr;
};

}  // namespace sinter::train
