#pragma once
// SD 3.x sample images as sd-scripts' sd3_train_utils.sample_image_inference makes them (do_sample):
// ModelSamplingDiscreteFlow with shift 3.0, `steps` sigmas from timestep 1000 down to 1 (then 0),
// x = sigma_0 noise, and per step the Euler step of the denoised x - sigma output under
// classifier-free guidance over [prompt, negative prompt]; the VAE's decoder.
#include <vector>

namespace sinter::train {

// get_all_sigmas(ModelSamplingDiscreteFlow(shift), steps): linspace(1000 sigma_max, 1000 sigma_min,
// steps) through sigma(t) = shift (t/1000) / (1 + (shift - 1) t/1000), then 0.
std::vector<double> sd3SampleSigmas(int steps, double shift = 3.0);

}  // namespace sinter::train
