#include "train/loop/run_summary.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <string>
#include <vector>

#include "train/base/device_info.h"
#include "train/loop/run_preflight.h"

namespace sinter::train {

void announceRun(const RunContext& run, FamilyPart& family, const data::Dataset& dataset, const data::BatchPlan& plan,
                 const data::TrainingLength& length, long long batchSize, int gradientAccumulationSteps) {
  spdlog::info("running training");
  spdlog::info("  dataset: {} images, {} skipped", dataset.images.size(), dataset.skipped.size());
  spdlog::info("  num train images * repeats: {}", dataset.numTrainImages);
  spdlog::info("  num reg images: {}", dataset.numRegImages);
  if (dataset.numValidationImages > 0) spdlog::info("  num validation images * repeats: {}", dataset.numValidationImages);
  spdlog::info("  num batches per epoch: {}", plan.batchesPerEpoch());
  if (run.group) spdlog::info("  processes: {} (each takes one of every {} batches of an epoch)", run.group->size(), run.group->size());
  spdlog::info("  num epochs: {}", length.numEpochs);
  spdlog::info("  batch size per device: {}", batchSize);
  spdlog::info("  gradient accumulation steps: {}", gradientAccumulationSteps);
  spdlog::info("  total batch size (with parallel & distributed & accumulation): {}",
               batchSize * run.worldSize() * gradientAccumulationSteps);
  spdlog::info("  total optimization steps: {}", length.maxTrainSteps);
  spdlog::info("setup took {:.1f} s", std::chrono::duration<double>(std::chrono::steady_clock::now() - run.setupStart).count());
  // With several ranks the app's run line says how many train: "cuda:0 (NVIDIA H200) + 1 more rank".
  const std::string devices = describeDevice(run.device) + (run.worldSize() > 1 ? " + " + std::to_string(run.worldSize() - 1) +
                                                                                      (run.worldSize() == 2 ? " more rank" : " more ranks")
                                                                                : std::string());
  const std::vector<std::string> tokenizers = tokenizerLines(run.config);
  for (const std::string& line : tokenizers) spdlog::info("  {}", line);
  run.events.emit(events::Start{SINTER_VERSION, devices, family.facts().familyName, toString(run.config.tab()), length.maxTrainSteps,
                                length.numEpochs, tokenizers, static_cast<long long>(dataset.images.size()),
                                static_cast<long long>(dataset.skipped.size())});
}

}  // namespace sinter::train
