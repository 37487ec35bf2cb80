#pragma once
// A run's saves, with sd-scripts' names: the trained model (LoRA, network or checkpoint) and the
// state folders resume reads, after steps and epochs as the save options ask, and the old ones
// that fall out of their kept window (save_last_n_*). Rank 0 writes; with several ranks every rank
// takes part in a state's save (each rank's noise state is gathered into it).
#include <functional>
#include <optional>
#include <string>

#include "data/batch_plan.h"
#include "train/loop/resume_position.h"
#include "train/loop/run_ema.h"
#include "train/loop/training_loop.h"
#include "train/optim/optimizer.h"
#include "train/parts/training_parts.h"

namespace sinter::train {

class RunSaves {
 public:
  // `dataPosition`: where a resumed run would continue (the first batch not trained on). `ema`: the
  // run's EMA, written beside each model file (<stem>-ema.safetensors) and into each state; or null.
  RunSaves(const RunContext& run, FamilyPart& family, MethodPart& method, Optimizer& optimizer, const LoopOptions& options,
           const EpochLayout& layout, std::function<data::DataOrderState()> dataPosition, RunEma* ema = nullptr);

  // The model file <stem>.safetensors; `kind` names it in the Saved event ("step", "epoch", "final", "stopped",
  // "requested").
  void model(const std::string& stem, const std::string& kind, long long globalStep, long long epoch);
  // A save_best_k file <stem>.safetensors: the model with `validationLoss` in its metadata. Returns
  // its path (empty on the other ranks, which write nothing); the caller's event says it is kept.
  std::string bestModel(const std::string& stem, long long globalStep, long long epoch, double validationLoss);
  // A state folder (train_state.json, network, optimizer and noise states).
  void state(const std::string& folderName, long long globalStep);
  // The files beside the model file `modelPath` (a dropped save_best_k file's): its EMA file, where
  // the run keeps an EMA, and what the method wrote beside each (MethodPart::filesBeside).
  void removeFilesBeside(const std::string& modelPath) const;
  // What save_every_n_steps (with save_state and save_last_n_steps) asks after `globalStep`, in epoch `epoch` (1-based).
  void afterStep(long long globalStep, long long epoch);
  // What save_every_n_epochs (with save_state and save_last_n_epochs) asks after epoch `done` (1-based).
  void afterEpoch(long long done, long long globalStep);
  // The end of a run that was not stopped: the final model, and its state where save_state or
  // save_state_on_train_end asks.
  void atEnd(long long globalStep, long long numEpochs);
  // A stop on request: the model and a state at this step, to resume from.
  void atStop(long long globalStep, long long epoch);
  // The control channel's "save" (run_controls.h): the model as save_every_n_steps names it, and its
  // state with save_state. Nothing is pruned: a file asked for is kept.
  void requested(long long globalStep, long long epoch);

 private:
  // A save the schedule asked for after step or epoch `number`: the model, its state with
  // save_state, and the old ones (by their numbers) that left their kept window.
  using FileStem = std::string (*)(const std::string& name, long long number);
  using StateFolder = std::string (*)(const std::string& name, int64_t number);
  void scheduled(const std::string& kind, FileStem stem, StateFolder folder, long long number, long long globalStep, long long epoch,
                 std::optional<long long> oldModel, std::optional<long long> oldState);
  struct Written {
    std::string path, emaPath;  // emaPath: empty without an EMA
  };
  Written write(const std::string& stem, const SaveStamp& stamp);
  void removeModel(const std::string& stem) const;
  void removeState(const std::string& folderName) const;

  const RunContext& run_;
  FamilyPart& family_;
  MethodPart& method_;
  Optimizer& optimizer_;
  const LoopOptions& options_;
  EpochLayout layout_;
  std::function<data::DataOrderState()> dataPosition_;
  bool writes_;
  RunEma* ema_;
  long long stateSaves_ = 0;  // numbers the gathering of the ranks' noise states
};

}  // namespace sinter::train
