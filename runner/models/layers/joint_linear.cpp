#include "models/layers/joint_linear.h"


#include "kernels/stream_capture.h"
#include "models/adapters/frozen_joint_linear_lora.h"

namespace sinter::models {

namespace {

bool adapterDrawsDropout(const LinearImpl& linear) { return linear.is_training() && linear.lora->drawsRandom(); }

// The weights' rows, in order, as one contiguous buffer already.
bool rowsOfOneBuffer(const std::vector<LinearImpl*>& linears) {
  const torch::Tensor& first = linears.front()->weight;
  int64_t offset = first.storage_offset();
  for (const LinearImpl* l : linears) {
    const torch::Tensor& w = l->weight;
    if (!w.is_contiguous() || !w.storage().is_alias_of(first.storage()) || w.storage_offset() != offset) return false;
    offset += w.numel();
  }
  return true;
}

int64_t rowsOf(const std::vector<LinearImpl*>& linears) {
  int64_t rows = 0;
  for (const LinearImpl* l : linears) rows += l->weight.size(0);
  return rows;
}

}  // namespace

bool jointLinearApplies(const std::vector<LinearImpl*>& linears, const torch::Tensor& x) {
  if (linears.empty() || !x.defined() || !x.is_contiguous() || (x.dim() != 2 && x.dim() != 3)) return false;
  const LinearImpl& first = *linears.front();
  size_t adapted = 0;
  for (const LinearImpl* l : linears) {
    const torch::Tensor& w = l->weight;
    if (l->bias.defined() || l->served || l->lycoris || w.requires_grad() || w.dim() != 2 || w.size(1) != x.size(-1) ||
        w.scalar_type() != x.scalar_type() || w.device() != x.device())
      return false;
    if (!l->lora) continue;
    ++adapted;
    const LoraAdapter& a = *l->lora;
    if (a.down.dim() != 2 || adapterDrawsDropout(*l) || !first.lora || a.rank() != first.lora->rank() ||
        a.down.scalar_type() != first.lora->down.scalar_type() || a.up.scalar_type() != first.lora->up.scalar_type())
      return false;
  }
  return adapted == 0 || adapted == linears.size();
}

torch::Tensor jointWeightRows(const std::vector<LinearImpl*>& linears) {
  TORCH_CHECK(!linears.empty(), "jointWeightRows: no Linears");
  const torch::Tensor& first = linears.front()->weight;
  const int64_t in = first.size(1);
  if (rowsOfOneBuffer(linears)) return first.as_strided({rowsOf(linears), in}, {in, 1}, first.storage_offset());
  if (kernels::capturingOnCurrentStream(first.device())) return {};
  torch::NoGradGuard noGrad;
  const torch::Tensor joint = torch::empty({rowsOf(linears), in}, first.options());
  int64_t row = 0;
  for (const LinearImpl* l : linears) {
    const torch::Tensor& w = l->weight;
    TORCH_CHECK(w.dim() == 2 && w.size(1) == in && w.scalar_type() == first.scalar_type() && w.device() == first.device(),
                "jointWeightRows: weight ", w.sizes(), " (", w.scalar_type(), ", ", w.device(), ") cannot join ", first.sizes(),
                " (", first.scalar_type(), ", ", first.device(), ")");
    joint.narrow(0, row, w.size(0)).copy_(w);
    row += w.size(0);
  }
  row = 0;
  for (const LinearImpl* l : linears) {
    const int64_t out = l->weight.size(0);
    l->weight.set_(joint.storage(), joint.storage_offset() + row * in, {out, in}, {in, 1});  // the old buffer is freed
    row += out;
  }
  return joint;
}

torch::Tensor jointLinearForward(const std::vector<LinearImpl*>& linears, const torch::Tensor& joint, const torch::Tensor& x) {
  if (!linears.front()->lora) return torch::nn::functional::linear(x, joint);
  // As LinearImpl::forward: the adapters compute in the activations' dtype.
  const torch::ScalarType dtype = x.scalar_type();
  std::vector<JointLoraPart> parts;
  for (const LinearImpl* l : linears) {
    const LoraAdapter& a = *l->lora;
    parts.push_back({a.downIn(dtype), a.upIn(dtype), a.scale() * a.multiplier});
  }
  return frozenJointLinearWithLora(x, joint, parts);
}

}  // namespace sinter::models
