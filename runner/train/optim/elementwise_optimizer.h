#pragma once
// What bitsandbytes' AdamW, Lion and SGD with momentum share here: each parameter's update is
// computed element by element from its gradient and its states, and each state is kept as
// bitsandbytes keeps it: float32 in the parameter's shape, or (its 8-bit optimizers, for
// parameters of at least min_8bit_size elements) blockwise 8-bit codes with each block's absmax
// (blockwise_quantizer.h), dequantized before the update and quantized again after it.
// The update runs out of place in float32 and is written back last, so that fp16's
// step(foundInf) keeps every old value by a selection on the device (no copy of the model
// beforehand, no host read): a captured step can hold it.
#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "train/optim/blockwise_quantizer.h"
#include "train/optim/optimizer.h"

namespace sinter::train {

class ElementwiseOptimizer : public Optimizer {
 public:
  void step() override;
  void step(const torch::Tensor& foundInf) override;
  // Per parameter, as its gradient completes (fused_optimizer_groups, blockwise_fused_optimizers):
  // advanceStep() once, then stepParameter() for each.
  void advanceStep() override;
  void stepParameter(size_t group, size_t index) override;
  // Whether parameter [group][index] keeps 8-bit states.
  bool eightBitStates(size_t group, size_t index) const { return layouts_[group][index].eightBit; }

 protected:
  // min8bitSize: parameters of at least this many elements keep 8-bit states; nullopt: none does.
  ElementwiseOptimizer(std::vector<OptimizerGroup> groups, std::optional<long long> min8bitSize);

  // Declares a state kind ("exp_avg"), zero for every parameter; `isSigned`: whether it takes
  // negative values (the signed map). Returns its index for state()/setState(). Saved as
  // "<name>" (float32) or "<name>_codes" (uint8) and "<name>_absmax" (float32).
  size_t addState(const std::string& name, bool isSigned);
  // Once per step, after the step count advanced and before the updates (per-step scalars).
  virtual void beginStep() {}
  // Updates parameter [group][index] (which has a gradient): reads working()/state() and writes
  // setParameter()/setState() once each.
  virtual void update(size_t group, size_t index) = 0;

  // `t` (the parameter or its gradient) as float32 in the parameter's working layout: its own
  // shape, or, with 8-bit states, flattened and padded with zeros to whole blocks ([blocks, 256]).
  // May be the parameter itself: never modify it in place.
  torch::Tensor working(size_t group, size_t index, const torch::Tensor& t) const;
  // The state in the working layout (float32). May be the live state: never modify it in place.
  torch::Tensor state(size_t kind, size_t group, size_t index) const;
  // New values in the working layout.
  void setParameter(size_t group, size_t index, const torch::Tensor& values);
  void setState(size_t kind, size_t group, size_t index, const torch::Tensor& values);

  std::vector<StateKind*> stateKinds() override;

 private:
  struct Layout {
    bool eightBit = false;
    int64_t numel = 0;
    int64_t blocks = 0;
  };
  struct State {
    BlockwiseQuantizer quantizer;
    StateKind full, codes, absmax;
  };
  // `live` takes `values`, except where an overflow skips the step (skip_).
  void assign(torch::Tensor& live, const torch::Tensor& values) const;

  std::vector<std::vector<Layout>> layouts_;
  std::vector<std::unique_ptr<State>> states_;
  torch::Tensor skip_;  // during step(foundInf): 0-dim bool, whether the old values stay
};

}  // namespace sinter::train
