#pragma once
// The random values of a joined batch (batched gradient accumulation, docs/DESIGN.md §6) drawn as
// its micro-batches' own passes draw them, so the joined pass trains as they would one after
// another: the same generator calls, in the same order, on the same sizes.
#include <torch/torch.h>

#include <functional>
#include <vector>

namespace sinter::train {

// What one micro-batch draws, from its rows of the inputs: tensors whose dim 0 is its samples.
using MicroBatchDraw = std::function<std::vector<torch::Tensor>(const std::vector<torch::Tensor>& inputs)>;

// `draw` once per micro-batch, in order, on its rows of `inputs` (dim 0 cut into `microBatches`
// equal parts), and what the calls return joined along dim 0; with one micro-batch, `draw` on the
// inputs as they are. Each call makes all of one micro-batch's draws, as its own pass makes them:
// per-batch values (noise_offset's random strength, multires noise's levels, its std) stay per
// micro-batch too.
std::vector<torch::Tensor> drawPerMicroBatch(int64_t microBatches, const std::vector<torch::Tensor>& inputs, const MicroBatchDraw& draw);

}  // namespace sinter::train
