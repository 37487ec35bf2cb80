#pragma once
// fp32 master weights trained through copies in the compute dtype (bf16 or fp16), as autocast
// casts them for each use, but all at once: the masters are moved into one flat buffer and the
// copies are views of another, so a micro-step casts every weight with one kernel before its
// forward pass and adds every gradient into the masters' with one after its backward pass (a
// cast and an accumulation per weight and per step is thousands of small kernels for a LoRA).
// The values are the same as casting each weight where it is used: the copy holds the master
// rounded to the compute dtype, and its gradient, added into zeros, is the gradient of the cast.
#include <torch/torch.h>

#include <memory>
#include <vector>

namespace sinter::train {

class ComputeCopies {
 public:
  // `masters`: contiguous floating-point leaves of one dtype and device, distinct. Each keeps its
  // identity (holders of the tensor see the change) but now lives in one flat buffer, and so does
  // its gradient (kept if it had one, else zeros). The copies require grad where their masters do.
  ComputeCopies(const std::vector<torch::Tensor>& masters, torch::Dtype computeDtype);
  // The other way round, for full-weight training: a model's own float32 parameters `params` become
  // the copies, in computeDtype, keeping their identity (the model computes with them), and their
  // values move into float32 masters, which the optimizer trains. Each original is freed as its
  // values move, so the float32 model never exists twice.
  static std::unique_ptr<ComputeCopies> ofParameters(const std::vector<torch::Tensor>& params, torch::Dtype computeDtype);

  // The masters: those given, or those ofParameters made.
  const std::vector<torch::Tensor>& masters() const { return masters_; }
  // The copies hold their masters' float32 values until showCopies (to read the weights at full
  // precision: a checkpoint being written); no training step may run in between.
  void showMasters();
  void showCopies();

  size_t size() const { return copies_.size(); }
  // The copy of masters[i], for the forward pass to use instead of casting it.
  const torch::Tensor& copyOf(size_t i) const { return copies_.at(i); }

  // The copies take the masters' current values (before each micro-step's forward pass).
  void refresh();
  // The copies' gradients are added into the masters' and zeroed (after each backward pass).
  void collectGradients();
  // The flat buffers the masters' and the copies' gradients are views of, tensor after tensor in
  // masters() order (data parallel all-reduces ranges of them: distributed/gradient_reducer.h).
  const torch::Tensor& masterGradients() const { return masterGradFlat_; }
  const torch::Tensor& copyGradients() const { return computeGradFlat_; }
  const std::vector<torch::Tensor>& copies() const { return copies_; }

 private:
  ComputeCopies() = default;
  torch::Tensor masterFlat_, masterGradFlat_, computeFlat_, computeGradFlat_;
  std::vector<torch::Tensor> masters_, copies_;
  std::vector<torch::Tensor> computeViews_;  // copies_[i]'s place in computeFlat_
};

}  // namespace sinter::train
