#include "distributed/gradient_reducer.h"

#include <torch/csrc/autograd/function_hook.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>

namespace sinter::distributed {

namespace {

// Runs once the accumulator has written the tensor's gradient for this backward pass.
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

size_t elementBytes(at::ScalarType t) { return c10::elementSize(t); }

}  // namespace

std::optional<GradientCommunication> gradientCommunicationNamed(const std::string& value) {
  if (value == "no" || value.empty()) return GradientCommunication::Native;
  if (value == "fp16") return GradientCommunication::Float16;
  if (value == "bf16") return GradientCommunication::BFloat16;
  return std::nullopt;
}

std::string gradientCommunicationName(GradientCommunication c) {
  switch (c) {
    case GradientCommunication::Float16: return "fp16";
    case GradientCommunication::BFloat16: return "bf16";
    case GradientCommunication::Native: break;
  }
  return "no";
}

GradientReducer::GradientReducer(ProcessGroup& group, std::vector<torch::Tensor> params, const CompactGradients* compact,
                                 GradientCommunication communication, size_t bucketBytes)
    : group_(group), params_(std::move(params)), communication_(communication) {
  std::set<const c10::TensorImpl*> compactMasters;
  if (compact && !compact->masters.empty()) {
    for (const torch::Tensor& m : compact->masters) compactMasters.insert(m.unsafeGetTensorImpl());
    buildCompactBuckets(*compact, bucketBytes);
  }
  std::vector<size_t> generic;
  for (size_t k = 0; k < params_.size(); ++k)
    if (!compactMasters.count(params_[k].unsafeGetTensorImpl())) generic.push_back(k);
  buildGenericBuckets(generic, bucketBytes);
  if (communication_ != GradientCommunication::Native) checkWireTypeSums();
}

void GradientReducer::checkWireTypeSums() {
  // Some backends cannot sum every 16-bit type (Gloo before PyTorch 2.x has no bf16): one tiny
  // all-reduce on every rank finds out before training starts, rather than in the first step.
  const at::ScalarType wire = wireType(at::kFloat);
  try {
    group_.allreduceSum(torch::zeros({1}, torch::TensorOptions().dtype(wire).device(group_.device()))).wait();
  } catch (const std::exception&) {
    throw std::invalid_argument("ddp_comm_hook = \"" + gradientCommunicationName(communication_) + "\": this build's " +
                                group_.backend() + " cannot sum " + gradientCommunicationName(communication_) +
                                " tensors; use \"fp16\" or \"no\"");
  }
}

GradientReducer::~GradientReducer() {
  for (size_t i = 0; i < hookedOn_.size(); ++i)
    if (std::shared_ptr<torch::autograd::Node> accumulator = hookedOn_[i].lock()) accumulator->del_post_hook(hookKeys_[i]);
}

at::ScalarType GradientReducer::wireType(at::ScalarType own) const {
  // Only float32 gradients are compressed (bf16/fp16 ones already travel in 16 bits).
  if (own != at::kFloat) return own;
  if (communication_ == GradientCommunication::BFloat16) return at::kBFloat16;
  if (communication_ == GradientCommunication::Float16) return at::kHalf;
  return own;
}

void GradientReducer::buildCompactBuckets(const CompactGradients& compact, size_t bucketBytes) {
  if (compact.writers.size() != compact.masters.size())
    throw std::invalid_argument("GradientReducer: compact gradients need one writer per master");
  masterGrads_ = compact.masterGrads;
  writerGrads_ = compact.writerGrads;
  const at::ScalarType wire = wireType(masterGrads_.scalar_type());
  // Offsets of each master in the flat buffers (they lie tensor after tensor).
  std::vector<int64_t> offsets;
  int64_t total = 0;
  for (const torch::Tensor& m : compact.masters) offsets.push_back(total), total += m.numel();
  if (total != masterGrads_.numel() || total != writerGrads_.numel())
    throw std::invalid_argument("GradientReducer: the compact gradients' flat buffers do not hold their tensors");
  // Backward reaches the last layers first: ranges from the end of the layout.
  Bucket* open = nullptr;
  for (size_t k = compact.masters.size(); k-- > 0;) {
    if (!compact.writers[k].requires_grad()) continue;
    const int64_t n = compact.masters[k].numel();
    if (!open || open->bytes >= bucketBytes || open->begin != offsets[k] + n) {
      buckets_.push_back(std::make_unique<Bucket>());
      open = buckets_.back().get();
      open->compact = true;
      open->begin = offsets[k] + n;
    }
    open->begin -= n;
    open->length += n;
    open->tensors += 1;
    open->bytes += n * elementBytes(wire);
    watch(compact.writers[k], buckets_.size() - 1);
  }
  for (auto& b : buckets_) {
    torch::Tensor range = masterGrads_.narrow(0, b->begin, b->length);
    // In place where the gradients lie, or a 16-bit buffer for the wire.
    b->inPlace = wire == range.scalar_type();
    b->buffer = b->inPlace ? range : torch::empty({b->length}, range.options().dtype(wire));
  }
  compactBuckets_ = buckets_.size();
}

void GradientReducer::buildGenericBuckets(const std::vector<size_t>& members, size_t bucketBytes) {
  // Reverse order; a bucket holds one dtype on one device and closes at bucketBytes.
  std::map<std::pair<at::ScalarType, std::string>, size_t> open;  // -> the bucket being filled
  const size_t first = buckets_.size();
  for (size_t i = members.size(); i-- > 0;) {
    const size_t k = members[i];
    const torch::Tensor& p = params_[k];
    const auto key = std::make_pair(p.scalar_type(), p.device().str());
    auto it = open.find(key);
    if (it == open.end() || buckets_[it->second]->bytes >= bucketBytes) {
      buckets_.push_back(std::make_unique<Bucket>());
      it = open.insert_or_assign(key, buckets_.size() - 1).first;
    }
    Bucket& b = *buckets_[it->second];
    b.members.push_back(k);
    b.bytes += p.numel() * elementBytes(wireType(p.scalar_type()));
    if (p.requires_grad()) {
      b.tensors += 1;
      watch(p, it->second);
    }
  }
  for (size_t i = first; i < buckets_.size(); ++i) {
    Bucket& b = *buckets_[i];
    int64_t n = 0;
    for (size_t k : b.members) n += params_[k].numel();
    const torch::Tensor& like = params_[b.members.front()];
    b.buffer = torch::zeros({n}, like.options().dtype(wireType(like.scalar_type())).requires_grad(false));
  }
}

void GradientReducer::watch(const torch::Tensor& leaf, size_t bucket) {
  watched_.push_back(leaf);
  seen_.push_back(false);
  bucketOfWatched_.push_back(bucket);
  hookedOn_.emplace_back();
  hookKeys_.push_back(0);
}

void GradientReducer::hookAccumulators() {
  // The accumulators the forward pass made (made here, before it, they would record this thread's
  // stream, and a captured backward pass would have to order the legacy stream after its own).
  // An eager step makes new ones each time; a captured one keeps them.
  for (size_t i = 0; i < watched_.size(); ++i) {
    std::shared_ptr<torch::autograd::Node> accumulator = torch::autograd::impl::try_get_grad_accumulator(watched_[i]);
    if (!accumulator || hookedOn_[i].lock() == accumulator) continue;
    hookKeys_[i] = accumulator->add_post_hook(std::make_unique<ReadyWhenAccumulated>([this, i] {
      if (!armed_ || seen_[i]) return;
      seen_[i] = true;
      markReady(bucketOfWatched_[i]);
    }));
    hookedOn_[i] = accumulator;
  }
}

void GradientReducer::beginBackward(bool lastOfStep) {
  armed_ = lastOfStep;
  if (!armed_) return;
  hookAccumulators();
  std::fill(seen_.begin(), seen_.end(), false);
  for (auto& b : buckets_) b->ready = 0, b->started = false;
  nextToLaunch_ = 0;
  overlapped_ = 0;
}

namespace {
// SINTER_DDP_OVERLAP=0 / 1 (tests/gpu/multi_gpu_scaling.sh measures what overlapping gains or costs
// with it); read once. nullopt: not set.
std::optional<bool> overlapFromEnvironment() {
  static const std::optional<bool> on = []() -> std::optional<bool> {
    const char* v = std::getenv("SINTER_DDP_OVERLAP");
    if (!v || !*v) return std::nullopt;
    return std::strcmp(v, "0") != 0;
  }();
  return on;
}
}  // namespace

bool GradientReducer::overlapsWithBackward() const { return overlapFromEnvironment().value_or(overlap_); }

void GradientReducer::markReady(size_t bucket) {
  ++buckets_[bucket]->ready;
  if (overlapsWithBackward()) launchReadyInOrder();
}

void GradientReducer::launchReadyInOrder() {
  while (nextToLaunch_ < buckets_.size()) {
    Bucket& b = *buckets_[nextToLaunch_];
    if (b.ready < b.tensors) return;
    start(b);
    ++overlapped_;
    ++nextToLaunch_;
  }
}

void GradientReducer::start(Bucket& b) {
  // The mean: each rank's share divided before the sum (and before any rounding to 16 bits), as DDP does.
  torch::NoGradGuard noGrad;
  const double share = 1.0 / group_.size();
  if (b.compact) {
    torch::Tensor range = masterGrads_.narrow(0, b.begin, b.length);
    torch::Tensor written = writerGrads_.narrow(0, b.begin, b.length);
    range.add_(written);
    written.zero_();
    range.mul_(share);
    if (!b.inPlace) b.buffer.copy_(range);
  } else {
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
  }
  b.started = true;
  b.pending = group_.allreduceSum(b.buffer);
}

void GradientReducer::writeBack(Bucket& b) {
  if (b.compact) {
    if (!b.inPlace) masterGrads_.narrow(0, b.begin, b.length).copy_(b.buffer);
    return;
  }
  int64_t offset = 0;
  for (size_t k : b.members) {
    torch::Tensor& p = params_[k];
    const int64_t n = p.numel();
    torch::Tensor mean = b.buffer.narrow(0, offset, n).view(p.sizes());
    if (p.grad().defined()) p.mutable_grad().copy_(mean);
    else p.mutable_grad() = mean.to(p.scalar_type(), /*non_blocking=*/false, /*copy=*/true);
    offset += n;
  }
}

void GradientReducer::finish() {
  for (; nextToLaunch_ < buckets_.size(); ++nextToLaunch_) start(*buckets_[nextToLaunch_]);
  torch::NoGradGuard noGrad;
  for (auto& b : buckets_) {
    b->pending.wait();
    writeBack(*b);
  }
  armed_ = false;
}

std::string GradientReducer::describe() const {
  std::string s = std::to_string(buckets_.size()) + " gradient buckets";
  if (communication_ != GradientCommunication::Native) s += " (" + gradientCommunicationName(communication_) + " on the wire)";
  return s + (overlapsWithBackward() ? " all-reduced in order as backward completes them" : " all-reduced in order after backward");
}

}  // namespace sinter::distributed
