#pragma once
// A data-parallel run's noise generators in a saved state: each rank draws its own noise
// (RunContext::noiseSeed), so a state holds every rank's generator, rank 0's under "device" as a
// one-process run saves it and rank r's under "device_rank<r>". Rank 0 writes states, so the
// others hand theirs to it through the ranks' store; on resume each rank takes its own back.
#include <torch/torch.h>

#include <optional>
#include <string>

#include "distributed/process_group.h"
#include "train/base/train_state.h"

namespace sinter::train {

// Called by every rank when a state is saved: rank 0's `rng` gains the other ranks' states
// (`mine` is this rank's; `saveIndex` tells the saves of one run apart).
void gatherNoiseStates(distributed::ProcessGroup& group, const torch::Tensor& mine, long long saveIndex, NamedTensors& rng);

// `rank`'s generator state in a saved state, or nullopt when fewer ranks saved it.
std::optional<torch::Tensor> savedNoiseState(const NamedTensors& rng, int rank);

// Sets `generator` to a saved state, which must be bytes of the size this generator's state has
// (a CPU generator's differs from a GPU's); else an InputError naming `file` and the rank's key.
void restoreNoiseState(at::Generator& generator, const torch::Tensor& saved, const std::string& file, int rank);

}  // namespace sinter::train
