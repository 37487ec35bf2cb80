#include "network/lycoris_step_deltas.h"

namespace sinter::network {

LycorisStepDeltas::LycorisStepDeltas(const LoraNetwork& network, torch::Dtype computeDtype) : computeDtype_(computeDtype) {
  for (const LoraModule& m : network.modules()) {
    if (!m.lycoris || !models::lycorisBuildsFullDelta(*m.lycoris)) continue;
    Entry e;
    e.adapter = m.lycoris;
    const torch::Dtype dtype = computeDtype;
    if (m.linear) {
      models::Linear linear = m.linear;
      e.baseWeight = [linear, dtype] { return linear->served ? linear->served->get(dtype) : linear->weight; };
    } else {
      models::Conv2d conv = m.conv;
      e.baseWeight = [conv, dtype] { return conv->served ? conv->served->get(dtype) : conv->weight; };
    }
    entries_.push_back(std::move(e));
  }
}

LycorisStepDeltas::~LycorisStepDeltas() {
  for (Entry& e : entries_) e.adapter->stepDelta = torch::Tensor();
}

int64_t LycorisStepDeltas::deltaElements() const {
  int64_t n = 0;
  for (const Entry& e : entries_) {
    int64_t elements = 1;
    for (int64_t s : e.adapter->shape.weightSizes()) elements *= s;
    n += elements;
  }
  return n;
}

torch::Tensor LycorisStepDeltas::build(const Entry& e) const {
  // Only DoRA reads the frozen weight (a served one would be fetched in full for nothing).
  const torch::Tensor base = e.adapter->doraWd() ? e.baseWeight() : torch::Tensor();
  return models::lycorisComputeDelta(*e.adapter, base, computeDtype_, e.rowMask);
}

void LycorisStepDeltas::start() {
  torch::NoGradGuard noGrad;
  for (Entry& e : entries_) {
    const torch::Tensor like = e.adapter->trainedTensors().front();
    e.delta = torch::zeros(e.adapter->shape.weightSizes(), like.options().dtype(computeDtype_)).set_requires_grad(true);
    e.delta.mutable_grad() = torch::zeros_like(e.delta);  // persistent: backward passes add into it
    if (e.adapter->rankDropout > 0.0) e.rowMask = torch::ones({e.adapter->shape.out}, like.options().dtype(torch::kFloat32));
    e.adapter->stepDelta = e.delta;
  }
  refresh();
}

void LycorisStepDeltas::refresh() {
  torch::NoGradGuard noGrad;
  for (Entry& e : entries_) {
    if (e.rowMask.defined()) e.rowMask.copy_(models::lycorisRowMask(*e.adapter, e.rowMask));
    e.delta.copy_(build(e));
  }
}

void LycorisStepDeltas::backpropagate() {
  std::vector<torch::Tensor> rebuilt, grads;
  rebuilt.reserve(entries_.size());
  grads.reserve(entries_.size());
  for (const Entry& e : entries_) {
    torch::Tensor delta = build(e);  // the same delta, now with its graph to the trained tensors
    if (!delta.requires_grad()) continue;  // a module whose tensors do not train (a frozen text encoder's)
    rebuilt.push_back(delta);
    grads.push_back(e.delta.grad());
  }
  if (!rebuilt.empty()) torch::autograd::backward(rebuilt, grads);
  torch::NoGradGuard noGrad;
  for (Entry& e : entries_) e.delta.mutable_grad().zero_();
}

std::vector<torch::Tensor> LycorisStepDeltas::mutableTensors() const {
  std::vector<torch::Tensor> out;
  for (const Entry& e : entries_) {
    out.push_back(e.delta);
    out.push_back(e.delta.grad());
    if (e.rowMask.defined()) out.push_back(e.rowMask);
  }
  return out;
}

}  // namespace sinter::network
