#include "train/loop/device_batches.h"

namespace sinter::train {

DeviceBatches::DeviceBatches(const data::Dataset& dataset, const data::BatchShard& shard, const data::LoaderOptions& options,
                             FamilyPart& family, torch::Device device, const data::DataOrderState& position)
    : plan_(dataset, position.seed, shard), loader_(dataset, plan_, options, family.latentCache(), family.textCache()), stager_(device) {
  loader_.seek(position);
}

data::Batch DeviceBatches::next() {
  if (!stager_.hasStaged()) stager_.stage(loader_.next());
  data::Batch batch = stager_.take();
  stager_.stage(loader_.next());
  return batch;
}

data::DataOrderState DeviceBatches::position() const {
  return stager_.hasStaged() ? stager_.stagedPosition(loader_.state().seed) : loader_.state();
}

}  // namespace sinter::train
