#include "train/capture/graphed_regions.h"

#include <torch/csrc/autograd/functions/accumulate_grad.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <stdexcept>

#include "compile/cuda_graph.h"
#include "train/capture/state_snapshot.h"
#include "train/capture/tensor_signature.h"

namespace sinter::train {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct GraphedRegions::Entry {
  GraphedRegions* owner = nullptr;
  std::string key;  // region and signature, for reports
  Body body;
  std::vector<torch::Tensor> inputs;    // static: each call's inputs are copied here
  std::vector<torch::Tensor> inputWrites;  // the same memory without autograd's version counter, to copy into
  std::vector<size_t> differentiable;   // the inputs that require grad and that the output reads
  std::vector<torch::Tensor> weights;   // the leaves the region trains (their .grad is added to)
  torch::Tensor output;                 // static, overwritten by each forward replay
  torch::Tensor recorded;               // the forward pass's output with its autograd graph, until the backward capture
  torch::Tensor gradOutput;             // static: each backward call's incoming gradient
  std::vector<torch::Tensor> gradInputs;  // static, one per differentiable input (undefined: unused)
  std::unique_ptr<compile::CapturedGraph> forward, backward;
  bool backwardEager = false;  // its backward could not be captured and runs eagerly
  bool backwardPending = false;  // ran eagerly once, to be captured when the step's backward pass is over

  void queueCapture() {
    if (backwardEager || backwardPending) return;
    backwardPending = true;
    owner->pendingBackwards_.push_back(this);
  }

  // Each call's inputs into the static ones. Not through `inputs`: the recorded autograd graph
  // saved them, and a write it can see would fail its version check.
  void takeInputs(at::TensorList given) {
    for (size_t i = 0; i < given.size(); ++i)
      if (!given[i].is_same(inputs[i])) inputWrites[i].copy_(given[i]);
  }

  // What the backward pass differentiates by: the inputs that require grad, then the weights.
  std::vector<torch::Tensor> targets() const {
    std::vector<torch::Tensor> out;
    for (size_t i : differentiable) out.push_back(inputs[i]);
    out.insert(out.end(), weights.begin(), weights.end());
    return out;
  }

  // The backward pass of the recorded forward pass: input gradients into gradInputs, weight
  // gradients added into their buffers.
  void differentiate() {
    // The recorded graph is kept: it is released after a successful capture, or differentiated
    // again each step when the backward pass runs eagerly.
    const variable_list grads = torch::autograd::grad({recorded}, targets(), {gradOutput}, /*retain_graph=*/true,
                                                      /*create_graph=*/false, /*allow_unused=*/true);
    torch::NoGradGuard noGrad;
    for (size_t i = 0; i < differentiable.size(); ++i) gradInputs[i] = grads[i];
    std::vector<torch::Tensor> sums, addends;
    for (size_t j = 0; j < weights.size(); ++j) {
      const torch::Tensor& g = grads[differentiable.size() + j];
      if (!g.defined()) continue;
      sums.push_back(weights[j].mutable_grad());
      addends.push_back(g);
    }
    if (!sums.empty()) at::_foreach_add_(sums, addends);
  }
};

namespace {

// Replays a region's graphs under autograd: forward on the way in, backward when autograd gets there.
// The trained weights are inputs too, so that the output requires grad whenever they do; their
// gradients are added by the backward graph itself, so none is returned for them.
struct RegionFunction : public torch::autograd::Function<RegionFunction> {
  // TensorList, not std::vector: autograd tracks list arguments only as TensorList.
  static variable_list forward(AutogradContext* ctx, int64_t entryAddress, at::TensorList inputs, at::TensorList /*weights*/) {
    auto* e = reinterpret_cast<GraphedRegions::Entry*>(entryAddress);
    ctx->saved_data["entry"] = entryAddress;
    e->takeInputs(inputs);
    e->forward->replay();
    return {e->output.detach()};
  }

  static variable_list backward(AutogradContext* ctx, variable_list gradOutputs) {
    auto* e = reinterpret_cast<GraphedRegions::Entry*>(ctx->saved_data["entry"].toInt());
    if (gradOutputs[0].defined()) e->gradOutput.copy_(gradOutputs[0]);
    else e->gradOutput.zero_();
    if (e->backward) {
      e->backward->replay();
    } else {
      // Not captured yet: this runs on autograd's device thread, inside the step's backward pass,
      // where nothing can be captured; GraphedRegions::captureBackwards does it afterwards.
      e->differentiate();
      e->queueCapture();
    }
    variable_list grads(1 + e->inputs.size() + e->weights.size());  // none for the entry's address and the weights
    for (size_t i = 0; i < e->differentiable.size(); ++i)
      if (e->gradInputs[i].defined()) grads[1 + e->differentiable[i]] = e->gradInputs[i].detach();
    return grads;
  }
};

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

RegionLeaves regionLeaves(const torch::Tensor& out, const std::vector<torch::Tensor>& inputs) {
  std::map<const c10::TensorImpl*, size_t> inputAt;
  for (size_t i = 0; i < inputs.size(); ++i) inputAt.emplace(inputs[i].unsafeGetTensorImpl(), i);
  RegionLeaves leaves;
  std::set<const torch::autograd::Node*> seen;
  std::vector<torch::autograd::Node*> pending;
  if (out.grad_fn()) pending.push_back(out.grad_fn().get());
  while (!pending.empty()) {
    torch::autograd::Node* node = pending.back();
    pending.pop_back();
    for (const torch::autograd::Edge& edge : node->next_edges()) {
      torch::autograd::Node* next = edge.function.get();
      if (!next || !seen.insert(next).second) continue;
      if (auto* accumulate = dynamic_cast<torch::autograd::AccumulateGrad*>(next)) {
        const auto input = inputAt.find(accumulate->variable.unsafeGetTensorImpl());
        if (input != inputAt.end()) leaves.inputs.push_back(input->second);
        else leaves.weights.push_back(accumulate->variable);
      } else {
        pending.push_back(next);
      }
    }
  }
  std::sort(leaves.inputs.begin(), leaves.inputs.end());
  return leaves;
}

GraphedRegions::GraphedRegions(torch::Device device, int cacheLimit, std::vector<at::Generator> generators, int warmups)
    : device_(device), cacheLimit_(cacheLimit), generators_(std::move(generators)), warmups_(warmups) {}

GraphedRegions::~GraphedRegions() = default;

torch::Tensor GraphedRegions::run(const std::string& name, const std::vector<torch::Tensor>& inputs, const Body& body) {
  if (!torch::GradMode::is_enabled()) {
    // Sampling: nothing is captured for it, but a training graph of the same shapes computes the
    // same forward pass (its saved activations are overwritten by the next training step).
    const auto it = reuseForInference_ ? byShape_.find(name + " " + shapeSignature(inputs)) : byShape_.end();
    if (it == byShape_.end()) return body(inputs);
    ++inferenceReplays_;
    it->second->takeInputs(inputs);
    it->second->forward->replay();
    return it->second->output.clone();
  }
  const std::string signature = tensorSignature(inputs);
  const std::string key = name + " (inputs " + signature + ")";
  auto it = entries_.find(key);
  Entry* e = it == entries_.end() ? nullptr : it->second.get();
  if (!e && !failed_.count(key) && signaturesPerRegion_[name] < cacheLimit_) e = capture(name, key, inputs, body);
  // A region whose backward pass could not be captured runs eagerly, forward too: the autograd
  // graph recorded at its capture saw the weights of that step (later writes to them, such as the
  // compute copies' refresh, would make it stale).
  if (!e || e->backwardEager) {
    ++eager_;
    return body(inputs);
  }
  ++replayed_;
  if (e->differentiable.empty() && e->weights.empty()) {
    // Nothing to differentiate (no trained weight, and the output reads no input that needs grad):
    // the forward graph alone, its output without gradient, as the eager body's would be.
    torch::NoGradGuard noGrad;
    e->takeInputs(inputs);
    e->forward->replay();
    return e->output;
  }
  return RegionFunction::apply(reinterpret_cast<int64_t>(e), at::TensorList(inputs), at::TensorList(e->weights))[0];
}

GraphedRegions::Entry* GraphedRegions::capture(const std::string& name, const std::string& key,
                                               const std::vector<torch::Tensor>& inputs, const Body& body) {
  const auto start = std::chrono::steady_clock::now();
  auto e = std::make_unique<Entry>();
  e->owner = this;
  e->key = key;
  e->body = body;
  for (const torch::Tensor& input : inputs) {
    e->inputs.push_back(input.detach().clone().requires_grad_(input.requires_grad()));
    e->inputWrites.push_back(e->inputs.back().variable_data());
  }
  // The warm-up draws random numbers (LoRA dropout) that the eager step would not: put them back.
  StateSnapshot generators({}, generators_);
  try {
    // Eager passes first, on the capture stream: lazy initialisation happens outside the capture,
    // and the first one finds the weights the region trains.
    compile::runOnCaptureStream(device_, [&] {
      for (int i = 0; i < warmups_; ++i) {
        torch::AutoGradMode grad(true);
        const torch::Tensor out = e->body(e->inputs);
        if (i == 0) {
          // Differentiated by what the output reads, not by every input that requires grad: a
          // block that reads none of them (SDXL's input_blocks.0 beside trained text encoders)
          // has nothing to differentiate, and its recorded output no autograd graph.
          RegionLeaves leaves = regionLeaves(out, e->inputs);
          e->differentiable = std::move(leaves.inputs);
          e->weights = std::move(leaves.weights);
          e->gradInputs.resize(e->differentiable.size());
          e->gradOutput = torch::zeros_like(out);
        }
        if (out.requires_grad()) torch::autograd::grad({out}, e->targets(), {torch::ones_like(out)}, false, false, /*allow_unused=*/true);
      }
    });
    {
      torch::NoGradGuard noGrad;
      for (torch::Tensor& w : e->weights)
        if (!w.grad().defined()) w.mutable_grad() = torch::zeros_like(w);  // the backward graph adds into it
    }
    compile::releaseCachedMemory(device_);  // what the warm-up passes freed, for the private pool
    const compile::CapturedGraph* pool = poolOwner_;
    Entry* raw = e.get();
    e->forward = std::make_unique<compile::CapturedGraph>(
        device_,
        [raw] {
          torch::AutoGradMode grad(true);
          raw->recorded = raw->body(raw->inputs);
          raw->output = raw->recorded.detach();
        },
        /*warmups=*/0, generators_, pool);
    if (!poolOwner_) poolOwner_ = e->forward.get();
  } catch (const std::exception& ex) {
    generators.restore();
    failed_.insert(key);
    newFailures_.push_back(key + ": runs eagerly: " + ex.what());
    captureSeconds_ += secondsSince(start);
    return nullptr;
  }
  generators.restore();
  if (device_.is_cuda()) torch::cuda::synchronize(device_.index());
  captureSeconds_ += secondsSince(start);
  ++signaturesPerRegion_[name];
  byShape_.emplace(name + " " + shapeSignature(inputs), e.get());
  return entries_.emplace(key, std::move(e)).first->second.get();
}

void GraphedRegions::captureBackwards() {
  // In the order the backward passes ran, which is the order they replay in.
  std::vector<Entry*> pending;
  pending.swap(pendingBackwards_);
  if (!pending.empty()) compile::releaseCachedMemory(device_);  // what the eager backward pass freed
  for (Entry* e : pending) {
    e->backwardPending = false;
    captureBackward(*e);
  }
}

void GraphedRegions::captureBackward(Entry& e) {
  const auto start = std::chrono::steady_clock::now();
  StateSnapshot generators({}, generators_);
  try {
    Entry* raw = &e;
    e.backward = std::make_unique<compile::CapturedGraph>(device_, [raw] { raw->differentiate(); }, /*warmups=*/0, generators_,
                                                          poolOwner_);
    e.recorded = torch::Tensor();  // the recorded autograd graph: its saved tensors go back to the pool
  } catch (const std::exception& ex) {
    e.backwardEager = true;  // from the next step on, the region runs eagerly
    e.recorded = torch::Tensor();
    newFailures_.push_back(e.key + ": its backward pass cannot be captured, so the region runs eagerly: " + ex.what());
  }
  generators.restore();
  captureSeconds_ += secondsSince(start);
}

double GraphedRegions::takeCaptureSeconds() {
  const double s = captureSeconds_;
  captureSeconds_ = 0;
  return s;
}

std::vector<std::string> GraphedRegions::takeFailures() {
  std::vector<std::string> out;
  out.swap(newFailures_);
  return out;
}

}  // namespace sinter::train
