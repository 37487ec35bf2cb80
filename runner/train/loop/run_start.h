#pragma once
// Where a run starts: at step 0, or where a resumed state left off (its method tensors, optimizer,
// noise and data position continue exactly; resume_position.h), then moved by train_network.py's
// initial_step / initial_epoch, which set the step counters (and the data) but not the lr schedule.
#include "data/batch_plan.h"
#include "train/loop/resume_position.h"
#include "train/loop/training_loop.h"
#include "train/optim/optimizer.h"
#include "train/parts/training_parts.h"

namespace sinter::train {

struct RunStart {
  long long globalStep = 0;
  long long scheduleStep = 0;  // what the lr schedule reads: the optimizer's completed steps
  data::DataOrderState position;
  NamedTensors ema;  // the resumed state's EMA of the trained weights (loop/run_ema.h), empty where it has none
};

RunStart startRun(const RunContext& run, const LoopOptions& options, const RunSchedule& planned, const EpochLayout& layout,
                  long long batchesPerEpoch, FamilyPart& family, MethodPart& method, Optimizer& optimizer);

}  // namespace sinter::train
