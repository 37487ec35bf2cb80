#pragma once
// SD 3.x's objective for one micro-batch, as sd3_train_network.py computes it
// (sd3_train_utils.get_noisy_model_input_and_timesteps, get_noise_pred_and_target): u drawn from the
// weighting scheme's density, shifted by training_shift, made an integer timestep in
// [min_timestep, max_timestep), sigma = timestep / 1000, x_t = sigma noise + (1 - sigma) x0; the
// MMDiT's output preconditioned to x_t - sigma output and compared with x0, weighted per sigma
// (compute_loss_weighting_for_sd3). Eager: SD 3.x has no compile panel.
#include <torch/torch.h>

#include <cstdint>
#include <optional>

#include "models/sd3/sd3_mmdit.h"
#include "train/objectives/flow_matching.h"

namespace sinter::train {

struct Sd3StepBatch {
  torch::Tensor latents;      // [B, 16, h, w], shifted and scaled by the VAE's factors
  torch::Tensor context;      // [B, 77 + T, 4096]: CLIP-L and CLIP-G side by side (zero-padded), then T5-XXL
  torch::Tensor pooled;       // [B, 2048]: CLIP-L's and CLIP-G's projected pooled outputs
  torch::Tensor lossWeights;  // [B]
  torch::Tensor lossMask;     // [B, 1, h, w] or undefined (masked_loss.h)
  int64_t microBatches = 1;   // the micro-batches it joins (data::Batch::microBatches), each drawing its own noise
};

struct Sd3StepOptions {
  FlowMatchingOptions flow;  // weighting_scheme, logit_mean/std, mode_scale, loss_type, huber_*
  double trainingShift = 1.0;
  int64_t minTimestep = 0, maxTimestep = 1000;
  double posEmbRandomCropRate = 0.0;  // pos_emb_random_crop_rate
  torch::Dtype computeDtype = torch::kFloat32;

  static Sd3StepOptions fromConfig(const Config& config, torch::Dtype computeDtype);
};

class Sd3TrainStep {
 public:
  Sd3TrainStep(models::Sd3Mmdit mmdit, Sd3StepOptions options, torch::Device device, std::uint64_t seed);

  // The loss of one micro-batch: a 0-dim float32 device tensor with its autograd graph.
  torch::Tensor loss(const Sd3StepBatch& batch);
  // Without gradients, every sample at `sigma`, the noise drawn from `generator` (the step's own untouched).
  torch::Tensor validationLoss(const Sd3StepBatch& batch, double sigma, const at::Generator& generator);

  at::Generator& generator() { return generator_; }

  // The timesteps sd-scripts gives the MMDiT for u in [0, 1): shifted, scaled to [min, max), truncated. [B] float32.
  static torch::Tensor timestepsOf(const torch::Tensor& u, const Sd3StepOptions& options);

 private:
  // `latents` in the compute dtype on the device, `noise` like them; `generator` draws the crop.
  torch::Tensor lossAt(const Sd3StepBatch& batch, const torch::Tensor& latents, const torch::Tensor& timesteps, const torch::Tensor& noise,
                       const at::Generator& generator, bool randomCrop);

  models::Sd3Mmdit mmdit_;
  Sd3StepOptions options_;
  torch::Device device_;
  at::Generator generator_;
};

}  // namespace sinter::train
