#include "train/optim/fused_backward.h"

#include <torch/csrc/autograd/function_hook.h>

#include <functional>
#include <map>
#include <stdexcept>
#include <string>

#include "train/optim/grad_clip.h"

namespace sinter::train {

namespace {

// Runs after the accumulator has written the parameter's gradient for this backward pass.
class StepWhenAccumulated : public torch::autograd::FunctionPostHook {
 public:
  StepWhenAccumulated(Optimizer& optimizer, size_t group, size_t index, double maxGradNorm, std::function<void(torch::Tensor&)> reduce)
      : optimizer_(optimizer), group_(group), index_(index), maxGradNorm_(maxGradNorm), reduce_(std::move(reduce)) {}

  torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                            const torch::autograd::variable_list& /*inputs*/) override {
    torch::Tensor p = optimizer_.group(group_).params[index_];
    if (!p.grad().defined()) return outputs;
    torch::NoGradGuard noGrad;
    reduce_(p.mutable_grad());
    if (maxGradNorm_ > 0) clipGradNorm({p}, maxGradNorm_);  // this parameter's norm alone, as sd-scripts' hook
    optimizer_.stepParameter(group_, index_);
    p.mutable_grad() = torch::Tensor();
    return outputs;
  }

 private:
  Optimizer& optimizer_;
  size_t group_, index_;
  double maxGradNorm_;
  std::function<void(torch::Tensor&)> reduce_;
};

}  // namespace

std::string fusedBackwardOption(const Config& config) {
  if (!trainsFullWeights(config.tab())) return "";  // the full-weight scripts' options
  if (config.getBool("fused_backward_pass")) return "fused_backward_pass";
  if (!isUnset(config.get("fused_optimizer_groups")) && config.getInt("fused_optimizer_groups") > 0) return "fused_optimizer_groups";
  if (config.getBool("blockwise_fused_optimizers")) return "blockwise_fused_optimizers";
  return "";
}

bool fusedBackwardPassRequested(const Config& config) { return !fusedBackwardOption(config).empty(); }

void checkFusedBackwardPass(const OptimizerSettings& optimizer, long long gradientAccumulationSteps, const std::string& option) {
  if (option == "fused_backward_pass" && optimizer.type != "Adafactor")
    throw std::invalid_argument("fused_backward_pass works with optimizer_type Adafactor (as in sd-scripts), not " + optimizer.type);
  if (!optimizer.row().perParameter)
    throw std::invalid_argument(option + " steps each parameter as soon as its gradient is complete; " + optimizer.type +
                                " estimates its step size across the parameters, so it needs them all (use it without " + option + ")");
  if (gradientAccumulationSteps > 1)
    throw std::invalid_argument(option + " steps each parameter within its backward pass: it cannot accumulate "
                                "gradients (gradient_accumulation_steps is " + std::to_string(gradientAccumulationSteps) + ")");
}

FusedBackwardPass::FusedBackwardPass(Optimizer& optimizer, double maxGradNorm) : optimizer_(optimizer), maxGradNorm_(maxGradNorm) {
  for (size_t g = 0; g < optimizer.groupCount(); ++g)
    for (size_t i = 0; i < optimizer.group(g).params.size(); ++i) {
      std::shared_ptr<torch::autograd::Node> accumulator = torch::autograd::impl::grad_accumulator(optimizer.group(g).params[i]);
      const uintptr_t key = accumulator->add_post_hook(
          std::make_unique<StepWhenAccumulated>(optimizer, g, i, maxGradNorm, [this](torch::Tensor& grad) { reduce(grad); }));
      hooks_.emplace_back(std::move(accumulator), key);
    }
}

FusedBackwardPass::~FusedBackwardPass() {
  for (auto& [accumulator, key] : hooks_) accumulator->del_post_hook(key);
  for (const auto& swap : swaps_) swap->trainWeights(nullptr);
}

void FusedBackwardPass::reduce(torch::Tensor& grad) const {
  if (!group_) return;
  if (!grad.is_contiguous()) grad = grad.contiguous();
  grad.div_(group_->size());
  group_->allreduceSum(grad).wait();
}

void FusedBackwardPass::stepStreamedWeights(const std::shared_ptr<models::BlockSwap>& swap) {
  // A master is the Linear's weight (the same memory), so its optimizer index is found by address.
  std::map<const void*, std::pair<size_t, size_t>> indexOf;
  for (size_t g = 0; g < optimizer_.groupCount(); ++g)
    for (size_t i = 0; i < optimizer_.group(g).params.size(); ++i) indexOf[optimizer_.group(g).params[i].data_ptr()] = {g, i};
  for (const torch::Tensor& master : swap->masters())
    if (!indexOf.count(master.data_ptr()))
      throw std::invalid_argument("fused_backward_pass: a swapped block's weight is not among the optimizer's parameters");
  Optimizer& optimizer = optimizer_;
  const double maxGradNorm = maxGradNorm_;
  swap->trainWeights([this, &optimizer, maxGradNorm, indexOf](const torch::Tensor& master, torch::Tensor& onDevice, const torch::Tensor& given) {
    const auto& [group, index] = indexOf.at(master.data_ptr());
    torch::Tensor grad = given;
    reduce(grad);
    if (maxGradNorm > 0) clipGradients({grad}, maxGradNorm);  // its own norm, as for the other parameters
    optimizer.stepParameter(group, index, onDevice, grad);
  });
  swaps_.push_back(swap);
}

}  // namespace sinter::train
