#include "models/weights/served_weight.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include <stdexcept>

#include "kernels/fused_kernels.h"
#include "models/layers/conv2d.h"
#include "models/layers/linear.h"

#if (TORCH_VERSION_MAJOR > 2) || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
#define SINTER_HAS_FLOAT8 1
#else
#define SINTER_HAS_FLOAT8 0
#endif

namespace sinter::models {

namespace {

// dx = dy W, with W fetched again now: nothing of the weight is saved between the passes.
struct FrozenLinearBackward : torch::autograd::Node {
  std::shared_ptr<ServedWeight> weight;
  torch::ScalarType dtype = torch::kFloat32;

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    const torch::Tensor& dy = grads[0];
    if (!dy.defined()) return {torch::Tensor()};
    return {torch::matmul(dy, weight->get(dtype))};
  }
  std::string name() const override { return "FrozenLinearBackward"; }
};

// dx = dy W as the weight computes it (ServedWeight::backwardProduct: fp8_fast's FP8 GEMM).
struct FrozenProductBackward : torch::autograd::Node {
  std::shared_ptr<ServedWeight> weight;
  std::vector<int64_t> xSizes;

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    const torch::Tensor& dy = grads[0];
    if (!dy.defined()) return {torch::Tensor()};
    return {weight->backwardProduct(dy.reshape({-1, dy.size(-1)}).contiguous()).view(xSizes)};
  }
  std::string name() const override { return "FrozenProductBackward"; }
};

// dx = dy W, dW = dy^T x (handed to the weight), db = sum dy; W fetched again now, as above.
struct TrainedServedLinearBackward : torch::autograd::Node {
  std::shared_ptr<ServedWeight> weight;
  torch::Tensor x;  // the input, for dW
  bool biasNeedsGrad = false;

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    const torch::Tensor& dy = grads[0];
    if (!dy.defined()) return {torch::Tensor(), torch::Tensor()};
    const torch::Tensor dy2 = dy.reshape({-1, dy.size(-1)});
    // dx before the weight's step below changes W in place.
    torch::Tensor dx = task_should_compute_output(0) ? torch::matmul(dy, weight->get(dy.scalar_type())) : torch::Tensor();
    torch::Tensor db = biasNeedsGrad ? dy2.sum(0) : torch::Tensor();
    weight->takeGradient(dy2.t().mm(x.reshape({-1, x.size(-1)})));
    x.reset();
    return {dx, db};
  }
  std::string name() const override { return "TrainedServedLinearBackward"; }
};

// The float8 weight of one Linear or Conv2d (the module's own parameter), upcast per call.
class Float8Weight : public ServedWeight {
 public:
  explicit Float8Weight(torch::Tensor stored) : stored_(std::move(stored)) {}
  torch::Tensor get(torch::ScalarType dtype) override {
    return kernels::float8UpcastFits(stored_) ? kernels::float8Upcast(stored_, dtype) : stored_.to(dtype);
  }

 private:
  torch::Tensor stored_;
};

// x W^T + bias through the weight's own products (fp8_fast), the gradient reaching x only.
torch::Tensor productLinear(const torch::Tensor& x, const std::shared_ptr<ServedWeight>& weight, const torch::Tensor& bias) {
  torch::Tensor y;
  {
    torch::NoGradGuard noGrad;
    const torch::Tensor x2 = x.reshape({-1, x.size(-1)}).contiguous();
    y = weight->forwardProduct(x2, bias);
    std::vector<int64_t> outSizes = x.sizes().vec();
    outSizes.back() = y.size(1);
    y = at::_unsafe_view(y, outSizes);  // not a view made without grad: callers may write into it
  }
  if (torch::GradMode::is_enabled() && x.requires_grad()) {
    auto node = std::shared_ptr<FrozenProductBackward>(new FrozenProductBackward(), torch::autograd::deleteNode);
    node->weight = weight;
    node->xSizes = x.sizes().vec();
    node->set_next_edges(torch::autograd::collect_next_edges(x));
    torch::autograd::set_history(y, node);
  }
  return y;
}

}  // namespace

torch::Tensor ServedWeight::forwardProduct(const torch::Tensor& x2, const torch::Tensor& bias) {
  const torch::Tensor w = get(x2.scalar_type());
  return bias.defined() ? torch::addmm(bias.to(x2.scalar_type()), x2, w.t()) : torch::mm(x2, w.t());
}

torch::Tensor ServedWeight::backwardProduct(const torch::Tensor& g) { return torch::mm(g, get(g.scalar_type())); }

torch::Tensor frozenLinear(const torch::Tensor& x, const std::shared_ptr<ServedWeight>& weight, const torch::Tensor& bias) {
  if (weight->computesProducts(x.numel() / x.size(-1))) return productLinear(x, weight, bias);
  const torch::ScalarType dtype = x.scalar_type();
  torch::Tensor y;
  {
    torch::NoGradGuard noGrad;
    y = torch::nn::functional::linear(x, weight->get(dtype), bias);
  }
  if (torch::GradMode::is_enabled() && x.requires_grad()) {
    auto node = std::shared_ptr<FrozenLinearBackward>(new FrozenLinearBackward(), torch::autograd::deleteNode);
    node->weight = weight;
    node->dtype = dtype;
    node->set_next_edges(torch::autograd::collect_next_edges(x));
    torch::autograd::set_history(y, node);
  }
  return y;
}

torch::Tensor servedLinear(const torch::Tensor& x, const std::shared_ptr<ServedWeight>& weight, const torch::Tensor& bias) {
  if (!weight->trained() || !torch::GradMode::is_enabled()) return frozenLinear(x, weight, bias);
  torch::Tensor y;
  {
    torch::NoGradGuard noGrad;
    y = torch::nn::functional::linear(x, weight->get(x.scalar_type()), bias);
  }
  auto node = std::shared_ptr<TrainedServedLinearBackward>(new TrainedServedLinearBackward(), torch::autograd::deleteNode);
  node->weight = weight;
  node->x = x.detach();
  node->biasNeedsGrad = bias.defined() && bias.requires_grad();
  node->set_next_edges(torch::autograd::collect_next_edges(x, bias));
  torch::autograd::set_history(y, node);
  return y;
}

bool float8InBuild() { return SINTER_HAS_FLOAT8 != 0; }

namespace {
[[noreturn]] void noFloat8() {
  throw std::runtime_error("fp8_base: this libtorch (" TORCH_VERSION
                           ") has no float8 type (libtorch 2.1 or newer has it); turn fp8_base off");
}
}  // namespace

torch::ScalarType float8Dtype() {
#if SINTER_HAS_FLOAT8
  return torch::kFloat8_e4m3fn;
#else
  noFloat8();
#endif
}

namespace {

// Every module of type M (a Linear or a Conv2d) under `root` whose weight is not served yet: the
// weight cast to e4m3 (contiguous, as the upcast kernel reads it) and served upcast per call.
template <typename M>
int storeWeightsInFloat8(torch::nn::Module& root) {
#if SINTER_HAS_FLOAT8
  torch::NoGradGuard noGrad;
  int count = 0;
  for (const auto& module : root.modules(/*include_self=*/true)) {
    auto layer = std::dynamic_pointer_cast<M>(module);
    if (!layer || layer->served) continue;
    layer->weight.set_requires_grad(false);
    layer->weight.set_data(layer->weight.data().to(torch::kFloat8_e4m3fn).contiguous());
    layer->served = std::make_shared<Float8Weight>(layer->weight);
    ++count;
  }
  return count;
#else
  (void)root;
  noFloat8();
#endif
}

}  // namespace

int storeLinearsInFloat8(torch::nn::Module& root) { return storeWeightsInFloat8<LinearImpl>(root); }

int storeConvolutionsInFloat8(torch::nn::Module& root) { return storeWeightsInFloat8<Conv2dImpl>(root); }

void moveToDevice(torch::nn::Module& root, const torch::Device& device) {
  torch::NoGradGuard noGrad;
  for (const auto& module : root.modules(/*include_self=*/true)) {
    auto linear = std::dynamic_pointer_cast<LinearImpl>(module);
    const bool keepWeight = linear && linear->served && linear->served->streamed();
    for (auto& p : module->named_parameters(/*recurse=*/false))
      if (!(keepWeight && p.key() == "weight") && p.value().device() != device) p.value().set_data(p.value().data().to(device));
    for (auto& b : module->named_buffers(/*recurse=*/false))
      if (b.value().device() != device) b.value().set_data(b.value().data().to(device));
  }
}

}  // namespace sinter::models
