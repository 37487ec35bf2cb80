#pragma once
// The start of training as a user sees it: sd-scripts' "running training" summary (images,
// batches, epochs, batch sizes, steps), the setup's time, the tokenizers, and the Start event.
#include "data/batch_plan.h"
#include "data/dataset.h"
#include "train/parts/training_parts.h"

namespace sinter::train {

void announceRun(const RunContext& run, FamilyPart& family, const data::Dataset& dataset, const data::BatchPlan& plan,
                 const data::TrainingLength& length, long long batchSize, int gradientAccumulationSteps);

}  // namespace sinter::train
