#include "models/adapters/lora_adapter.h"

namespace sinter::models {

namespace F = torch::nn::functional;

torch::Tensor loraDropouts(const LoraAdapter& lora, torch::Tensor h, double* scale) {
  *scale = lora.scale();
  const auto uniform = [&](at::IntArrayRef sizes) { return torch::rand(sizes, h.options().dtype(torch::kFloat32)); };
  if (lora.moduleDropout > 0.0) h = h * (uniform({1}) >= lora.moduleDropout).to(h.scalar_type());
  if (lora.dropout > 0.0) h = F::dropout(h, F::DropoutFuncOptions().p(lora.dropout).training(true));
  if (lora.rankDropout > 0.0) {
    torch::Tensor mask = (uniform({h.size(0), lora.rank()}) > lora.rankDropout).to(h.scalar_type());
    if (h.dim() == 3) mask = mask.unsqueeze(1);                      // text encoders, transformers: [B, 1, rank]
    else if (h.dim() == 4) mask = mask.unsqueeze(-1).unsqueeze(-1);  // Conv2d: [B, rank, 1, 1]
    h = h * mask;
    *scale *= 1.0 / (1.0 - lora.rankDropout);
  }
  return h;
}

}  // namespace sinter::models
