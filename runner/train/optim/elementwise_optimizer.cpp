#include "train/optim/elementwise_optimizer.h"

namespace sinter::train {

ElementwiseOptimizer::ElementwiseOptimizer(std::vector<OptimizerGroup> groups, std::optional<long long> min8bitSize)
    : Optimizer(std::move(groups), /*persistentGradients=*/true) {
  for (const OptimizerGroup& g : groups_) {
    std::vector<Layout> layouts;
    for (const torch::Tensor& p : g.params) {
      Layout l;
      l.numel = p.numel();
      // bitsandbytes: "if p.numel() < config['min_8bit_size']: dtype = torch.float32".
      l.eightBit = min8bitSize && l.numel >= *min8bitSize && l.numel > 0;
      l.blocks = BlockwiseQuantizer::blockCount(l.numel);
      layouts.push_back(l);
    }
    layouts_.push_back(std::move(layouts));
  }
}

size_t ElementwiseOptimizer::addState(const std::string& name, bool isSigned) {
  auto s = std::make_unique<State>(State{BlockwiseQuantizer(isSigned, device_), {name, {}}, {name + "_codes", {}}, {name + "_absmax", {}}});
  for (size_t g = 0; g < groups_.size(); ++g) {
    std::vector<torch::Tensor> full, codes, absmax;
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      const torch::Tensor& p = groups_[g].params[i];
      const Layout& l = layouts_[g][i];
      const auto on = torch::TensorOptions().device(p.device());
      if (l.eightBit) {
        // bitsandbytes starts from zero codes and zero absmax (every value 0).
        full.emplace_back();
        codes.push_back(torch::zeros({l.blocks, kOptimizerStateBlockSize}, on.dtype(torch::kUInt8)));
        absmax.push_back(torch::zeros({l.blocks}, on.dtype(torch::kFloat32)));
      } else {
        full.push_back(torch::zeros(p.sizes(), on.dtype(torch::kFloat32)));
        codes.emplace_back();
        absmax.emplace_back();
      }
    }
    s->full.tensors.push_back(std::move(full));
    s->codes.tensors.push_back(std::move(codes));
    s->absmax.tensors.push_back(std::move(absmax));
  }
  states_.push_back(std::move(s));
  return states_.size() - 1;
}

std::vector<Optimizer::StateKind*> ElementwiseOptimizer::stateKinds() {
  std::vector<StateKind*> kinds;
  for (auto& s : states_)
    for (StateKind* k : {&s->full, &s->codes, &s->absmax}) kinds.push_back(k);
  return kinds;
}

void ElementwiseOptimizer::step() {
  advanceStep();
  for (size_t g = 0; g < groups_.size(); ++g)
    for (size_t i = 0; i < groups_[g].params.size(); ++i) stepParameter(g, i);
}

void ElementwiseOptimizer::advanceStep() {
  torch::NoGradGuard noGrad;
  step_.add_(1.0);
  beginStep();
}

void ElementwiseOptimizer::stepParameter(size_t group, size_t index) {
  torch::NoGradGuard noGrad;
  if (groups_[group].params[index].grad().defined()) update(group, index);
}

void ElementwiseOptimizer::step(const torch::Tensor& foundInf) {
  torch::NoGradGuard noGrad;
  skip_ = foundInf.to(step_.device(), torch::kFloat32).reshape({}) > 0;
  struct Reset {
    torch::Tensor& t;
    ~Reset() { t = torch::Tensor(); }
  } reset{skip_};
  const torch::Tensor skip = skip_;
  step();
  step_.sub_(skip.to(torch::kFloat32));
}

torch::Tensor ElementwiseOptimizer::working(size_t group, size_t index, const torch::Tensor& t) const {
  const Layout& l = layouts_[group][index];
  torch::Tensor w = t.to(torch::kFloat32);
  if (!l.eightBit) return w;
  w = w.reshape({-1});
  const int64_t padded = l.blocks * kOptimizerStateBlockSize;
  if (padded > l.numel) w = torch::constant_pad_nd(w, {0, padded - l.numel}, 0.0);
  return w.view({l.blocks, kOptimizerStateBlockSize});
}

torch::Tensor ElementwiseOptimizer::state(size_t kind, size_t group, size_t index) const {
  const State& s = *states_[kind];
  if (!layouts_[group][index].eightBit) return s.full.tensors[group][index];
  return s.quantizer.dequantize(s.codes.tensors[group][index], s.absmax.tensors[group][index]);
}

void ElementwiseOptimizer::assign(torch::Tensor& live, const torch::Tensor& values) const {
  if (skip_.defined()) live.copy_(torch::where(skip_, live, values));
  else live.copy_(values);
}

void ElementwiseOptimizer::setParameter(size_t group, size_t index, const torch::Tensor& values) {
  torch::Tensor& p = groups_[group].params[index];
  const Layout& l = layouts_[group][index];
  torch::Tensor v = l.eightBit ? values.reshape({-1}).narrow(0, 0, l.numel).view(p.sizes()) : values;
  // Rounded to the parameter's dtype (nearest), as bitsandbytes writes bf16 / fp16 parameters.
  assign(p, v.to(p.scalar_type()));
}

void ElementwiseOptimizer::setState(size_t kind, size_t group, size_t index, const torch::Tensor& values) {
  State& s = *states_[kind];
  if (!layouts_[group][index].eightBit) {
    assign(s.full.tensors[group][index], values);
    return;
  }
  const auto [codes, absmax] = s.quantizer.quantize(values);
  assign(s.codes.tensors[group][index], codes);
  assign(s.absmax.tensors[group][index], absmax);
}

}  // namespace sinter::train
