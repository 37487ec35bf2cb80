#include "distributed/gradient_reducer.h"

#include <torch/csrc/autograd/function_hook.h>

#include <map>

namespace sinter::distributed {

namespace {

// Runs once the accumulator has written the parameter's gradient for this backward pass.
class ReadyWhenAccumulated : public torch::autograd::FunctionPostHook {
 public:
  explicit ReadyWhenAccumulated(std::function<void()> ready) : ready_(std::move(ready)) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                            const torch::autograd::variable_list& /*inputs*/) override {
    ready_();
    return outputs;
  }

 private:
  std::function<void()> ready_;
};

}  // namespace

GradientReducer::GradientReducer(ProcessGroup& group, std::vector<torch::Tensor> params, size_t bucketBytes)
    : group_(group), params_(std::move(params)), bucketOf_(params_.size()), readyParams_(params_.size(), false) {
  // Reverse order; a bucket holds one dtype on one device and closes at bucketBytes.
  std::map<std::pair<at::ScalarType, std::string>, size_t> open;  // -> the bucket being filled
  for (size_t k = params_.size(); k-- > 0;) {
    const torch::Tensor& p = params_[k];
    const auto key = std::make_pair(p.scalar_type(), p.device().str());
    auto it = open.find(key);
    if (it == open.end() || buckets_[it->second]->bytes >= bucketBytes) {
      buckets_.push_back(std::make_unique<Bucket>());
      it = open.insert_or_assign(key, buckets_.size() - 1).first;
    }
    Bucket& b = *buckets_[it->second];
    b.members.push_back(k);
    b.bytes += p.numel() * p.element_size();
    bucketOf_[k] = it->second;
  }
  for (auto& b : buckets_) {
    int64_t n = 0;
    for (size_t k : b->members) n += params_[k].numel();
    b->buffer = torch::zeros({n}, params_[b->members.front()].options().requires_grad(false));
  }
  for (size_t k = 0; k < params_.size(); ++k) {
    if (!params_[k].requires_grad()) continue;
    std::shared_ptr<torch::autograd::Node> accumulator = torch::autograd::impl::grad_accumulator(params_[k]);
    if (!accumulator) continue;
    const uintptr_t key = accumulator->add_post_hook(std::make_unique<ReadyWhenAccumulated>([this, k] { markReady(k); }));
    hooks_.emplace_back(std::move(accumulator), key);
  }
}

GradientReducer::~GradientReducer() {
  for (auto& [accumulator, key] : hooks_) accumulator->del_post_hook(key);
}

void GradientReducer::beginBackward(bool lastOfStep) {
  armed_ = lastOfStep;
  if (!armed_) return;
  std::fill(readyParams_.begin(), readyParams_.end(), false);
  for (auto& b : buckets_) b->ready = 0, b->started = false;
  overlapped_ = 0;
}

void GradientReducer::markReady(size_t param) {
  if (!armed_ || readyParams_[param]) return;
  readyParams_[param] = true;
  Bucket& b = *buckets_[bucketOf_[param]];
  if (++b.ready == b.members.size() && !b.started) {
    start(b);
    ++overlapped_;
  }
}

void GradientReducer::start(Bucket& b) {
  // The mean: each rank's share divided before the sum, as DDP does.
  torch::NoGradGuard noGrad;
  const double share = 1.0 / group_.size();
  int64_t offset = 0;
  for (size_t k : b.members) {
    const torch::Tensor& p = params_[k];
    const int64_t n = p.numel();
    torch::Tensor slot = b.buffer.narrow(0, offset, n);
    if (p.grad().defined()) slot.copy_(p.grad().reshape({-1}));
    else slot.zero_();
    offset += n;
  }
  b.buffer.mul_(share);
  b.started = true;
  b.pending = group_.allreduceSum(b.buffer);
}

void GradientReducer::finish() {
  for (auto& b : buckets_)
    if (!b->started) start(*b);
  torch::NoGradGuard noGrad;
  for (auto& b : buckets_) {
    b->pending.wait();
    int64_t offset = 0;
    for (size_t k : b->members) {
      torch::Tensor& p = params_[k];
      const int64_t n = p.numel();
      torch::Tensor mean = b->buffer.narrow(0, offset, n).view(p.sizes());
      if (p.grad().defined()) p.mutable_grad().copy_(mean);
      else p.mutable_grad() = mean.clone();
      offset += n;
    }
  }
  armed_ = false;
}

}  // namespace sinter::distributed
