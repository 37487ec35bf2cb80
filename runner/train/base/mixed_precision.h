#pragma once
// mixed_precision / full_fp16 / full_bf16 as sd-scripts' train_network.py applies them to a LoRA
// run: the frozen models are cast to the weight dtype; the LoRA parameters stay fp32 unless
// full_fp16/full_bf16. fp16 training scales the loss; the scale lives in a device tensor and is
// updated on the device (GradScaler's algorithm).
#include <torch/torch.h>

#include <string>
#include <vector>

namespace sinter::train {

enum class MixedPrecision { No, Fp16, Bf16 };
MixedPrecision parseMixedPrecision(const std::string& name);  // "no", "fp16", "bf16"

struct PrecisionPlan {
  torch::Dtype weightDtype = torch::kFloat32;  // frozen model weights and activations
  torch::Dtype loraDtype = torch::kFloat32;    // trainable LoRA parameters
  bool lossScaling = false;                    // fp16 with fp32 LoRA parameters
  // A DreamBooth or fine-tune run under mixed precision without full_bf16/full_fp16 (sdxl_train.py's
  // default): the models it may train load in float32, the values of its fp32 master weights, and
  // compute through copies in weightDtype (train/base/compute_copies.h).
  bool float32Masters = false;
  // no_half_vae: the VAE (FLUX's autoencoder) stays float32 under mixed precision.
  bool noHalfVae = false;
  torch::Dtype trainableModelDtype() const { return float32Masters ? torch::kFloat32 : weightDtype; }
  // sd-scripts' vae_dtype: float32 with no_half_vae, else the weight dtype; fp16 is float32 here
  // too, since the SDXL VAE overflows in fp16 (sd-scripts' users set no_half_vae for it).
  torch::Dtype vaeDtype() const { return noHalfVae || weightDtype == torch::kFloat16 ? torch::kFloat32 : weightDtype; }
};
// full_fp16 needs mixed_precision fp16 and full_bf16 needs bf16 (std::invalid_argument otherwise).
// fullWeights: a DreamBooth or fine-tune run (float32Masters under mixed precision without full_*).
PrecisionPlan planPrecision(MixedPrecision mixed, bool fullFp16, bool fullBf16, bool fullWeights = false);

// Casts floating-point parameters and buffers of `module` to `dtype` and freezes its parameters.
void castFrozen(torch::nn::Module& module, torch::Dtype dtype);

// Dynamic loss scaling (torch.cuda.amp.GradScaler defaults: 2^16, x2 every 2000 clean steps,
// x0.5 on inf/NaN), all on the device.
class LossScaler {
 public:
  explicit LossScaler(torch::Device device, double initScale = 65536.0, double growthFactor = 2.0,
                      double backoffFactor = 0.5, int64_t growthInterval = 2000);
  torch::Tensor scale(const torch::Tensor& loss) const { return loss * scale_.to(loss.scalar_type()); }
  // Divides the gradients by the scale; returns found_inf (1-element float tensor, 1 if any
  // gradient is inf/NaN). The optimizer step must be skipped when it is set.
  torch::Tensor unscale(const std::vector<torch::Tensor>& params);
  // Grows or backs off the scale from found_inf, on the device.
  void update(const torch::Tensor& foundInf);
  const torch::Tensor& currentScale() const { return scale_; }
  std::vector<torch::Tensor> mutableTensors() const { return {scale_, growthTracker_}; }

 private:
  torch::Tensor scale_, growthTracker_;
  double growthFactor_, backoffFactor_;
  int64_t growthInterval_;
};

}  // namespace sinter::train
