#include "train/optim/weight_ema.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>

#if SINTER_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#endif

#include "train/base/config_values.h"
#include "train/base/run_errors.h"

namespace sinter::train {

namespace {

// The EMA's key in a training state for weight i.
std::string emaStateKey(size_t i) { return "ema." + std::to_string(i); }
const char* const kEmaUpdatesKey = "ema.updates";

// ema <- beta * ema + (1 - beta) * w over lists on one device: two multi-tensor kernels (weights of
// another dtype than the EMA's are promoted per tensor by the same call).
void emaAverage(std::vector<torch::Tensor>& ema, const std::vector<torch::Tensor>& weights, double beta) {
  if (ema.empty()) return;
  torch::NoGradGuard noGrad;
  at::_foreach_mul_(ema, beta);
  at::_foreach_add_(ema, weights, 1.0 - beta);
}

}  // namespace

EmaOptions EmaOptions::fromConfig(const Config& config) {
  EmaOptions o;
  o.decay = optionalDouble(config, "ema_decay").value_or(0.0);
  o.updateEvery = config.getInt("ema_update_every");
  o.inHostMemory = config.getString("ema_device") == "cpu";
  o.warmup = config.getBool("ema_warmup");
  o.forSamples = config.getBool("ema_for_samples");
  return o;
}

std::optional<EmaRefusal> emaRefusal(const Config& config) {
  const std::optional<double> decay = optionalDouble(config, "ema_decay");
  if (!decay || *decay < 1.0) return std::nullopt;
  char text[64];
  std::snprintf(text, sizeof text, "%g", *decay);
  return EmaRefusal{"ema_decay", std::string("ema_decay = ") + text + ": the decay must be below 1 (at 1 the average never moves "
                                 "from the starting weights); 0.999 averages about the last 1,000 updates, 0 or unset turns EMA off"};
}

double emaDecayOfUpdate(const EmaOptions& options, long long updatesBefore) {
  if (!options.warmup) return options.decay;
  const double k = static_cast<double>(updatesBefore);
  return std::min(options.decay, (1.0 + k) / (10.0 + k));
}

struct WeightEma::CopyDone {
#if SINTER_WITH_CUDA
  at::cuda::CUDAEvent event;
#endif
  void wait() {
#if SINTER_WITH_CUDA
    event.synchronize();
#endif
  }
};

WeightEma::WeightEma(std::vector<torch::Tensor> weights, const EmaOptions& options, std::function<void()> settleWeights)
    : options_(options), weights_(std::move(weights)), settleWeights_(std::move(settleWeights)) {
  if (options_.updateEvery < 1) throw std::invalid_argument("ema_update_every must be at least 1");
  bool onDevice = false, inHost = false;
  for (const torch::Tensor& w : weights_) (w.is_cpu() ? inHost : onDevice) = true;
  hostWeightsBesideDevice_ = onDevice && inHost;
  settleHostWeights();
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < weights_.size(); ++i) {
    const torch::Tensor w = weights_[i].detach();
    if (options_.inHostMemory) {
      inHost_.push_back(i);
      ema_.push_back(w.to(torch::kCPU, torch::kFloat32, /*non_blocking=*/false, /*copy=*/true));
      // The step's weights land here (asynchronously from a device: page-locked), in their own dtype.
      staging_.push_back(torch::empty(w.sizes(), torch::TensorOptions().dtype(w.scalar_type()).pinned_memory(w.is_cuda())));
    } else {
      beside_.push_back(i);
      ema_.push_back(w.to(w.device(), torch::kFloat32, /*non_blocking=*/false, /*copy=*/true));
    }
  }
  traded_.assign(weights_.size(), false);
  kept_.resize(weights_.size());
}

WeightEma::~WeightEma() {
  if (pending_.valid()) pending_.wait();
}

int64_t WeightEma::bytes() const {
  int64_t n = 0;
  for (const torch::Tensor& e : ema_) n += static_cast<int64_t>(e.nbytes());
  return n;
}

void WeightEma::settleHostWeights() {
  if (hostWeightsBesideDevice_ && settleWeights_) settleWeights_();
}

bool WeightEma::afterStep(long long step) {
  if (swapped_) throw std::logic_error("WeightEma: a step ran while the EMA's weights were in the models");
  if (step % options_.updateEvery != 0) return false;
  const double beta = emaDecayOfUpdate(options_, updates_);
  settleHostWeights();
  updateBeside(beta);
  updateInHostMemory(beta);
  ++updates_;
  return true;
}

void WeightEma::updateBeside(double beta) {
  // One list per device: blocks_to_swap's masters in host memory average there, beside the rest.
  std::vector<torch::Tensor> ema[2], weights[2];
  for (size_t i : beside_) {
    const int list = weights_[i].is_cpu() ? 0 : 1;
    ema[list].push_back(ema_[i]);
    weights[list].push_back(weights_[i]);
  }
  for (int list = 0; list < 2; ++list) emaAverage(ema[list], weights[list], beta);
}

void WeightEma::updateInHostMemory(double beta) {
  if (inHost_.empty()) return;
  finishUpdates();  // the staging buffers are free again
  std::optional<torch::Device> device;
  {
    torch::NoGradGuard noGrad;
    for (size_t j = 0; j < inHost_.size(); ++j) {
      const torch::Tensor& w = weights_[inHost_[j]];
      // Queued on the current stream after the step (a replayed graph included); the next step's
      // update of the weights is queued after it.
      staging_[j].copy_(w.detach(), /*non_blocking=*/w.is_cuda());
      if (w.is_cuda()) device = w.device();
    }
  }
  std::shared_ptr<CopyDone> copied;
#if SINTER_WITH_CUDA
  if (device) {
    copied = std::make_shared<CopyDone>();
    copied->event.record(at::cuda::getCurrentCUDAStream(device->index()));
  }
#endif
  std::vector<torch::Tensor> ema;
  for (size_t i : inHost_) ema.push_back(ema_[i]);
  // Averaged on a thread of its own once the copies have landed, while the host queues the next steps.
  pending_ = std::async(std::launch::async, [ema = std::move(ema), staged = staging_, copied, beta]() mutable {
    if (copied) copied->wait();
    emaAverage(ema, staged, beta);
  });
}

void WeightEma::finishUpdates() {
  if (pending_.valid()) pending_.get();
}

NamedTensors WeightEma::stateTensors() {
  if (swapped_) throw std::logic_error("WeightEma: the state asked for while the EMA's weights were in the models");
  finishUpdates();
  NamedTensors out;
  for (size_t i = 0; i < ema_.size(); ++i)
    out.emplace_back(emaStateKey(i), ema_[i].to(torch::kCPU, torch::kFloat32, /*non_blocking=*/false, /*copy=*/true));
  out.emplace_back(kEmaUpdatesKey, torch::scalar_tensor(static_cast<int64_t>(updates_), torch::kInt64));
  return out;
}

void WeightEma::loadStateTensors(const NamedTensors& tensors, const std::string& source) {
  finishUpdates();
  std::map<std::string, torch::Tensor> byName(tensors.begin(), tensors.end());
  auto find = [&](const std::string& key) -> const torch::Tensor& {
    auto it = byName.find(key);
    if (it == byName.end())
      throw InputError("resume: " + source + " has no '" + key + "': was it saved for other trained weights?");
    return it->second;
  };
  const size_t saved = static_cast<size_t>(std::count_if(byName.begin(), byName.end(), [](const auto& kv) {
    return kv.first.rfind("ema.", 0) == 0 && kv.first != kEmaUpdatesKey;
  }));
  if (saved != ema_.size())
    throw InputError("resume: " + source + " averages " + std::to_string(saved) + " tensors, this run trains " +
                     std::to_string(ema_.size()) + ": was it saved with other network or training settings?");
  for (size_t i = 0; i < ema_.size(); ++i) {
    const torch::Tensor& t = find(emaStateKey(i));
    if (!t.is_floating_point())
      throw InputError("resume: " + source + ": " + emaStateKey(i) + " is " + std::string(c10::toString(t.scalar_type())) +
                       ", not a floating-point tensor");
    if (t.sizes() != ema_[i].sizes())
      throw InputError("resume: " + source + ": " + emaStateKey(i) + " is " + c10::str(t.sizes()) + ", the weight it averages is " +
                       c10::str(ema_[i].sizes()));
  }
  const torch::Tensor& count = find(kEmaUpdatesKey);
  if (count.numel() != 1 || !c10::isIntegralType(count.scalar_type(), /*includeBool=*/false) || count.item<int64_t>() < 0)
    throw InputError("resume: " + source + ": " + kEmaUpdatesKey + " is not a whole number from 0");
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < ema_.size(); ++i) ema_[i].copy_(find(emaStateKey(i)));
  updates_ = count.item<int64_t>();
}

void WeightEma::swapIn() {
  if (swapped_) throw std::logic_error("WeightEma: the EMA's weights are in the models already");
  finishUpdates();
  settleHostWeights();
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < weights_.size(); ++i) {
    torch::Tensor& w = weights_[i];
    torch::Tensor& e = ema_[i];
    traded_[i] = w.scalar_type() == e.scalar_type();
    if (traded_[i]) {
      // One tensor's worth of memory at a time, beside the EMA.
      const torch::Tensor held = w.detach().to(e.device(), e.scalar_type(), /*non_blocking=*/false, /*copy=*/true);
      w.copy_(e);
      e.copy_(held);
    } else {
      kept_[i] = w.detach().to(torch::kCPU, w.scalar_type(), /*non_blocking=*/false, /*copy=*/true);
      w.copy_(e);
    }
  }
  swapped_ = true;
}

void WeightEma::swapOut() {
  if (!swapped_) return;
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < weights_.size(); ++i) {
    torch::Tensor& w = weights_[i];
    torch::Tensor& e = ema_[i];
    if (traded_[i]) {
      const torch::Tensor held = w.detach().to(e.device(), e.scalar_type(), /*non_blocking=*/false, /*copy=*/true);
      w.copy_(e);
      e.copy_(held);
    } else {
      w.copy_(kept_[i]);
      kept_[i] = torch::Tensor();
    }
  }
  swapped_ = false;
}

}  // namespace sinter::train
