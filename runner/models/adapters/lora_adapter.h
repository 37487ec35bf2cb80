#pragma once
// A LoRA adapter as a Linear or a Conv2d of the models carries it (sd-scripts' networks.lora
// LoRAModule): its weights, scale and the three dropouts of its forward pass.
#include <torch/torch.h>

namespace sinter::models {

// y += up(dropouts(down(x))) * (alpha / rank) * multiplier  (kohya's networks.lora)
struct LoraAdapter {
  torch::Tensor down;  // [rank, in] (Linear) or [rank, in, kh, kw] (Conv2d)
  torch::Tensor up;    // [out, rank] (Linear) or [out, rank, 1, 1] (Conv2d)
  double alpha = 1.0;
  double dropout = 0.0;        // network_dropout: on lora_down's output while training
  double rankDropout = 0.0;    // network_args rank_dropout: whole rank channels per sample
  double moduleDropout = 0.0;  // network_args module_dropout: the whole adapter per forward
  double multiplier = 1.0;
  // Copies of down and up in the compute dtype that the training step keeps current
  // (train/base/compute_copies.h); undefined, or of another dtype than the activations: the forward
  // pass casts down and up itself.
  torch::Tensor downCompute, upCompute;
  int64_t rank() const { return down.size(0); }
  double scale() const { return alpha / static_cast<double>(down.size(0)); }
  // Whether the training forward draws random numbers (any dropout is on).
  bool drawsRandom() const { return dropout > 0.0 || rankDropout > 0.0 || moduleDropout > 0.0; }
  torch::Tensor downIn(torch::ScalarType dtype) const { return inDtype(down, downCompute, dtype); }
  torch::Tensor upIn(torch::ScalarType dtype) const { return inDtype(up, upCompute, dtype); }

 private:
  static torch::Tensor inDtype(const torch::Tensor& weight, const torch::Tensor& copy, torch::ScalarType dtype) {
    return copy.defined() && copy.scalar_type() == dtype ? copy : weight.to(dtype);
  }
};

// sd-scripts' LoRAModule.forward between lora_down and lora_up, while training: module dropout
// (the adapter adds nothing with probability moduleDropout), neuron dropout, then rank dropout (a
// mask over [batch, rank], the scale times 1 / (1 - rankDropout)). `h` is lora_down's output:
// [N, rank], [B, L, rank] or [B, rank, H, W]. Returns the masked h and sets *scale (alpha / rank
// times the rank dropout's factor). Numbers come from the default generator of h's device (seeded
// by the run), drawn on the device so that a captured graph replays fresh draws; a dropped module
// is a zero factor rather than a skipped computation, for the same reason.
torch::Tensor loraDropouts(const LoraAdapter& lora, torch::Tensor h, double* scale);

}  // namespace sinter::models
