#pragma once
// The run's batches in data order from where it starts, each moved to the device while the step
// before it computes (batch_stager.h), and the position a saved state resumes from.
#include <torch/torch.h>

#include "data/batch_loader.h"
#include "data/batch_plan.h"
#include "train/loop/batch_stager.h"
#include "train/parts/training_parts.h"

namespace sinter::train {

class DeviceBatches {
 public:
  // `position`: the run's start (its seed orders the epochs from there on).
  DeviceBatches(const data::Dataset& dataset, const data::BatchShard& shard, const data::LoaderOptions& options, FamilyPart& family,
                torch::Device device, const data::DataOrderState& position);
  DeviceBatches(const DeviceBatches&) = delete;
  DeviceBatches& operator=(const DeviceBatches&) = delete;

  data::Batch next();
  // The first batch not trained on (one may be staged already).
  data::DataOrderState position() const;

 private:
  data::BatchPlan plan_;
  data::BatchLoader loader_;
  BatchStager stager_;
};

}  // namespace sinter::train
