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
                   const EpochLayout& layout, std::function<data::DataOrderState()> dataPosition, RunEma* ema)
    : run_(run), family_(family), method_(method), optimizer_(optimizer), options_(options), layout_(layout),
      dataPosition_(std::move(dataPosition)), writes_(run.rank() == 0), ema_(ema && ema->active() ? ema : nullptr) {}

RunSaves::Written RunSaves::write(const std::string& stem, const SaveStamp& stamp) {
  SaveInProgress saving;
  Written w;
  w.path = (fs::path(options_.outputDir) / (stem + ".safetensors")).string();
  method_.saveModel(w.path, stamp);
  spdlog::info("saved {}", w.path);
  if (ema_) w.emaPath = ema_->saveBeside(w.path, stamp);
  return w;
}

void RunSaves::model(const std::string& stem, const std::string& kind, long long globalStep, long long epoch) {
  if (!writes_) return;
  const Written w = write(stem, SaveStamp{globalStep, epoch});
  run_.events.emit(events::Saved{w.path, kind});
  if (!w.emaPath.empty()) run_.events.emit(events::Saved{w.emaPath, "ema"});
}

std::string RunSaves::bestModel(const std::string& stem, long long globalStep, long long epoch, double validationLoss) {
  if (!writes_) return {};
  const Written w = write(stem, SaveStamp{globalStep, epoch, validationLoss});
  if (!w.emaPath.empty()) run_.events.emit(events::Saved{w.emaPath, "ema"});
  return w.path;
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
  if (ema_) state.ema = ema_->stateTensors();
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
  const fs::path path = fs::path(options_.outputDir) / (stem + ".safetensors");
  if (writes_ && fs::remove(path, ec)) spdlog::info("removed old model {}.safetensors", stem);
  removeFilesBeside(path.string());
}

void RunSaves::removeFilesBeside(const std::string& modelPath) const {
  if (!writes_) return;
  std::vector<std::string> paths = method_.filesBeside(modelPath);
  if (ema_) {
    paths.push_back(emaFilePath(modelPath));
    for (std::string& p : method_.filesBeside(emaFilePath(modelPath))) paths.push_back(std::move(p));
  }
  std::error_code ec;
  for (const std::string& p : paths)
    if (fs::remove(p, ec)) spdlog::info("removed {}", p);
}

void RunSaves::removeState(const std::string& folderName) const {
  std::error_code ec;
  if (writes_ && fs::remove_all(fs::path(options_.outputDir) / folderName, ec) > 0) spdlog::info("removed old state {}", folderName);
}

}  // namespace sinter::train
