#pragma once
// The training loop, for every family and method: the optimizer and its schedule, the data order,
// gradient accumulation, progress, events, saves, a stop that saves, and resume. What is trained
// and how the loss is computed are the parts' (training_parts.h).
#include <optional>
#include <string>

#include "data/batch_plan.h"
#include "train/loop/save_schedule.h"
#include "train/optim/lr_schedule.h"
#include "train/optim/optimizer_args.h"
#include "train/parts/training_parts.h"

namespace sinter::train {

// The config's loop options, typed.
struct LoopOptions {
  std::string outputDir;
  std::string outputName;  // runOutputName
  int gradientAccumulationSteps = 1;
  std::optional<long long> maxTrainEpochs;
  long long maxTrainSteps = 1600;
  int workers = 0;  // max_data_loader_n_workers
  OptimizerSettings optimizer;  // optimizer_type and optimizer_args
  bool fusedBackwardPass = false;
  LrScheduleOptions lr;      // totalSteps and warmupSteps are set once the length is known
  bool lrSchedulerReplaced = false;  // Adafactor's relative step took the named lr_scheduler's place
  double lrWarmupSteps = 0;  // lr_warmup_steps as given: steps, or a fraction of the total
  double lrDecaySteps = 0;   // lr_decay_steps as given (warmup_stable_decay)
  double maxGradNorm = 1.0;
  bool lossScaling = false;
  std::string resume;  // a state folder, or empty
  // train_network.py's initial_step / initial_epoch (1-based) and skip_until_initial_step.
  std::optional<long long> initialStep, initialEpoch;
  bool skipUntilInitialStep = false;
  SaveSchedule saves;
  long long profileSteps = 0;  // profile_steps (0: off)

  static LoopOptions fromConfig(const Config& config, const PrecisionPlan& precision);
};

// The run's length and learning-rate schedule from the options and the batches per epoch: the loop
// and the preflight compute them the same way.
struct RunSchedule {
  data::TrainingLength length;
  LrScheduleOptions lr;
  long long initialStep = 0;  // initial_step, or the first step of initial_epoch (0: none)
};
RunSchedule planSchedule(const LoopOptions& options, long long batchesPerEpoch);
// initial_step / initial_epoch within the run (below max_train_steps); else std::invalid_argument.
void checkInitialStep(const LoopOptions& options, const RunSchedule& schedule);

class ControlChannel;

// Trains `method` on `family` over `dataset`; returns 0 when completed or stopped on request and
// throws on errors. `controlChannel`: rank 0's commands during the run (--control stdin), or null.
// `trainingStarted` turns true once setup is done (errors before it are bad input).
int runTrainingLoop(const RunContext& run, FamilyPart& family, MethodPart& method, const data::Dataset& dataset,
                    ControlChannel* controlChannel, bool& trainingStarted);

}  // namespace sinter::train
