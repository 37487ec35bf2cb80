#include "train/loop/run_saves.h"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "train/base/train_state.h"
#include "train/loop/rank_noise_states.h"
#include "train/loop/resume_settings.h"
#include "train/loop/save_schedule.h"
#include "train/loop/stop_request.h"

namespace sinter::train {

namespace fs = std::filesystem;

RunSaves::RunSaves(const RunContext& run, FamilyPart& family, MethodPart& method, Optimizer& optimizer, const LoopOptions& options,
                   const EpochLayout& layout, std::function<data::DataOrderState()> dataPosition)
    : run_(run), family_(family), method_(method), optimizer_(optimizer), options_(options), layout_(layout),
      dataPosition_(std::move(dataPosition)), writes_(run.rank() == 0) {}

std::string RunSaves::write(const std::string& stem, const SaveStamp& stamp) {
  SaveInProgress saving;
  const std::string path = (fs::path(options_.outputDir) / (stem + ".safetensors")).string();
  method_.saveModel(path, stamp);
  spdlog::info("saved {}", path);
  return path;
}

void RunSaves::model(const std::string& stem, const std::string& kind, long long globalStep, long long epoch) {
  if (!writes_) return;
  run_.events.emit(events::Saved{write(stem, SaveStamp{globalStep, epoch}), kind});
}

std::string RunSaves::bestModel(const std::string& stem, long long globalStep, long long epoch, double validationLoss) {
  if (!writes_) return {};
  return write(stem, SaveStamp{globalStep, epoch, validationLoss});
}

void RunSaves::state(const std::string& folderName, long long globalStep) {
  TrainState state;
  const torch::Tensor noise = generatorState(family_.generator());
  state.rng = {{"device", noise}};
  if (run_.group) gatherNoiseStates(*run_.group, noise, ++stateSaves_, state.rng);  // every rank's, written by rank 0
  if (!writes_) return;
  SaveInProgress saving;
  state.network = method_.stateTensors();
  state.optimizer = optimizer_.stateTensors();
  state.progress = {{"global_step", globalStep}, {"data", dataPositionJson(dataPosition_(), layout_)}, {"settings", settingsJson(run_.config)}};
  const std::string path = (fs::path(options_.outputDir) / folderName).string();
  saveTrainState(path, state);
  spdlog::info("saved state {}", path);
  run_.events.emit(events::Saved{path, "state"});
}

void RunSaves::afterStep(long long globalStep, long long epoch) {
  const SaveSchedule& saves = options_.saves;
  scheduled("step", stepFileStem, stepStateFolderName, globalStep, globalStep, epoch, saves.stepToRemove(globalStep),
            saves.stepStateToRemove(globalStep));
}

void RunSaves::afterEpoch(long long done, long long globalStep) {
  const SaveSchedule& saves = options_.saves;
  scheduled("epoch", epochFileStem, epochStateFolderName, done, globalStep, done, saves.epochToRemove(done), saves.epochStateToRemove(done));
}

void RunSaves::scheduled(const std::string& kind, FileStem stem, StateFolder folder, long long number, long long globalStep,
                         long long epoch, std::optional<long long> oldModel, std::optional<long long> oldState) {
  const std::string& name = options_.outputName;
  model(stem(name, number), kind, globalStep, epoch);
  if (options_.saves.saveState) state(folder(name, number), globalStep);
  if (oldModel) removeModel(stem(name, *oldModel));
  if (oldState) removeState(folder(name, *oldState));
}

void RunSaves::atEnd(long long globalStep, long long numEpochs) {
  const std::string& name = options_.outputName;
  model(name, "final", globalStep, numEpochs);
  if (options_.saves.saveState || options_.saves.saveStateOnTrainEnd) state(lastStateFolderName(name), globalStep);
  spdlog::info("model saved: {}", (fs::path(options_.outputDir) / (name + ".safetensors")).string());
}

void RunSaves::atStop(long long globalStep, long long epoch) {
  model(stepFileStem(options_.outputName, globalStep), "stopped", globalStep, epoch);
  state(stepStateFolderName(options_.outputName, globalStep), globalStep);
}

void RunSaves::requested(long long globalStep, long long epoch) {
  model(stepFileStem(options_.outputName, globalStep), "requested", globalStep, epoch);
  if (options_.saves.saveState) state(stepStateFolderName(options_.outputName, globalStep), globalStep);
}

void RunSaves::removeModel(const std::string& stem) const {
  std::error_code ec;
  if (writes_ && fs::remove(fs::path(options_.outputDir) / (stem + ".safetensors"), ec)) spdlog::info("removed old model {}.safetensors", stem);
}

void RunSaves::removeState(const std::string& folderName) const {
  std::error_code ec;
  if (writes_ && fs::remove_all(fs::path(options_.outputDir) / folderName, ec) > 0) spdlog::info("removed old state {}", folderName);
}

}  // namespace sinter::train
