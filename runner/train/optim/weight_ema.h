#pragma once
// The exponential moving average of the trained weights (ema_decay; DESIGN.md §8): a float32 copy of
// each trained tensor (the optimizer's parameters), beside it on its device or in host memory
// (ema_device), moved towards the weights after every ema_update_every-th step:
//   ema <- beta * ema + (1 - beta) * w,   beta = min(ema_decay, (1 + k) / (10 + k)) with ema_warmup, else ema_decay,
// k counting the updates before this one (OneTrainer's warm-up, counted in updates). It starts from
// the weights as they are when it is made. No device value is read on the host: an update beside the
// weights is two multi-tensor ops queued on the current stream after the step (after a captured
// step's replay, so the graph is untouched); one in host memory queues the weights' copy into pinned
// buffers there and averages them on a thread of its own while the next steps run.
#include <torch/torch.h>

#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "train/base/train_state.h"

namespace sinter::train {

struct EmaOptions {
  double decay = 0;           // ema_decay; 0 (or unset) is off
  long long updateEvery = 5;  // ema_update_every
  bool inHostMemory = false;  // ema_device = "cpu"
  bool warmup = true;         // ema_warmup
  bool forSamples = true;     // ema_for_samples
  bool enabled() const { return decay > 0; }
  static EmaOptions fromConfig(const Config& config);
};

// What no run takes of a config's EMA settings, naming the key; nullopt when they run. The registry
// checks the types and the closed ranges; ema_decay's is half-open, [0, 1).
struct EmaRefusal {
  std::string key, message;
};
std::optional<EmaRefusal> emaRefusal(const Config& config);

// The decay of the update that follows `updatesBefore` earlier ones.
double emaDecayOfUpdate(const EmaOptions& options, long long updatesBefore);

class WeightEma {
 public:
  // `weights`: the trained tensors, whose values now the average starts from. `settleWeights`: waits
  // until weights kept in host memory hold their values (blocks_to_swap's masters are written back
  // after the step); empty where there are none.
  WeightEma(std::vector<torch::Tensor> weights, const EmaOptions& options, std::function<void()> settleWeights = {});
  ~WeightEma();  // waits for an update under way
  WeightEma(const WeightEma&) = delete;
  WeightEma& operator=(const WeightEma&) = delete;

  // After the run's step `step` (its global step): an update where `step` is a multiple of
  // ema_update_every. Returns whether it updated.
  bool afterStep(long long step);
  // Waits for the update under way in host memory: after it the EMA holds every update made.
  void finishUpdates();
  long long updates() const { return updates_; }
  int64_t bytes() const;
  size_t size() const { return weights_.size(); }

  // A training state's EMA: "ema.<i>" for weight i (float32, host memory) and "ema.updates".
  NamedTensors stateTensors();
  // Loads what stateTensors wrote for the same weights: a missing tensor, another shape or a count
  // that is no whole number from 0 is an InputError naming `source`.
  void loadStateTensors(const NamedTensors& tensors, const std::string& source);

  // The weights take the EMA's values (rounded to their dtype), and swapOut puts theirs back
  // exactly; nothing may train in between. Weights of the EMA's dtype trade values with it, one
  // tensor at a time; the others are kept in host memory meanwhile.
  void swapIn();
  void swapOut();
  bool swappedIn() const { return swapped_; }

 private:
  struct CopyDone;  // a CUDA event after the copies into staging_ (nothing on a CPU build)
  void updateBeside(double beta);
  void updateInHostMemory(double beta);
  void settleHostWeights();

  EmaOptions options_;
  std::vector<torch::Tensor> weights_;
  std::vector<torch::Tensor> ema_;  // ema_[i] averages weights_[i]
  std::function<void()> settleWeights_;
  bool hostWeightsBesideDevice_ = false;  // some weights live in host memory in a run on a device
  std::vector<size_t> beside_, inHost_;   // indices: EMA on the weight's own device / in host memory
  std::vector<torch::Tensor> staging_;    // inHost_'s weights copied after the step (pinned on CUDA)
  std::shared_ptr<CopyDone> copied_;
  std::future<void> pending_;             // the host-memory update under way
  long long updates_ = 0;
  bool swapped_ = false;
  std::vector<bool> traded_;             // swapIn traded values with the EMA (same dtype)
  std::vector<torch::Tensor> kept_;      // swapIn kept the weight's values here (another dtype)
};

}  // namespace sinter::train
