#pragma once
// Batched gradient accumulation (docs/DESIGN.md §6): a step's micro-batches of one shape joined
// into one batch, sample after sample in their order, which the step trains as one pass.
#include <optional>
#include <string>
#include <vector>

#include "data/batch_loader.h"

namespace sinter::data {

// `batches` joined along the batch dimension in their order (microBatches: how many; the epoch,
// position and dataset index of the last, whose end of epoch ends the step), or nullopt with
// `whyNot` set when they cannot be: fewer than two, different buckets or batch sizes, another
// network_multiplier, or tensors that differ in what they hold or in shape beyond the batch.
std::optional<Batch> joinBatches(const std::vector<Batch>& batches, std::string* whyNot);

}  // namespace sinter::data
