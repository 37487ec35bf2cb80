#pragma once
// The fixed timesteps of sd-scripts' validation pass (train_network.py): every validation batch is
// evaluated at NUM_VALIDATION_TIMESTEPS = 4 timesteps, numpy's linspace(min, max, 4 + 2, dtype=int)
// without its two ends (200, 400, 600, 800 for the default range 0..1000). A DDPM family noises
// at these timesteps; a flow-matching family at sigma = timestep / 1000.
#include <cstdint>
#include <vector>

namespace sinter::train {

constexpr int kNumValidationTimesteps = 4;

// min_timestep and max_timestep as the run has them (0 and 1000 when unset).
std::vector<int64_t> validationTimesteps(int64_t minTimestep, int64_t maxTimestep, int count = kNumValidationTimesteps);

}  // namespace sinter::train
