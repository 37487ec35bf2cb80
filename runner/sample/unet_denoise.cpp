#include "sample/unet_denoise.h"

namespace sinter::sample {

torch::Tensor unetDenoise(models::SdxlUnetImpl& unet, DiffusionSampler& sampler, torch::Tensor latents,
                          const UnetSampleConditioning& conditioning, double scale, torch::Dtype computeDtype,
                          const at::Generator& generator) {
  const bool guided = conditioning.context.size(0) == 2;
  const torch::Tensor context = conditioning.context.to(computeDtype);
  const torch::Tensor y = conditioning.admVector.defined() ? conditioning.admVector.to(computeDtype) : torch::Tensor();
  for (int i = 0; i < sampler.steps(); ++i) {
    torch::Tensor in = sampler.scaleModelInput(latents, i);
    if (guided) in = torch::cat({in, in});
    const torch::Tensor t = torch::full({in.size(0)}, sampler.timestep(i), in.options().dtype(torch::kFloat32));
    torch::Tensor out = unet.forward(in.to(computeDtype), t, context, y).to(torch::kFloat32);
    if (guided) {
      const auto halves = out.chunk(2);
      out = halves[0] + scale * (halves[1] - halves[0]);
    }
    latents = sampler.step(out, i, latents, generator);
  }
  return latents;
}

}  // namespace sinter::sample
