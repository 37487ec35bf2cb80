#include "train/compute_copies.h"

#include <set>
#include <stdexcept>

namespace sinter::train {

namespace {

torch::Tensor slice(const torch::Tensor& flat, int64_t offset, const torch::Tensor& like) {
  return flat.narrow(0, offset, like.numel()).view(like.sizes());
}

}  // namespace

ComputeCopies::ComputeCopies(const std::vector<torch::Tensor>& masters, torch::Dtype computeDtype) {
  if (masters.empty()) throw std::invalid_argument("ComputeCopies: no master weights");
  const auto masterOptions = masters.front().options();
  int64_t total = 0;
  std::set<const void*> seen;
  for (const torch::Tensor& m : masters) {
    if (m.scalar_type() != masters.front().scalar_type() || m.device() != masters.front().device() || !m.is_contiguous() ||
        !m.is_floating_point())
      throw std::invalid_argument("ComputeCopies: the master weights must be contiguous floating-point tensors of one dtype and device");
    if (!seen.insert(m.unsafeGetTensorImpl()).second) throw std::invalid_argument("ComputeCopies: a master weight is listed twice");
    total += m.numel();
  }
  torch::NoGradGuard noGrad;
  masterFlat_ = torch::empty({total}, masterOptions);
  masterGradFlat_ = torch::zeros({total}, masterOptions);
  computeFlat_ = torch::empty({total}, masterOptions.dtype(computeDtype));
  computeGradFlat_ = torch::zeros({total}, masterOptions.dtype(computeDtype));
  int64_t offset = 0;
  for (const torch::Tensor& m : masters) {
    torch::Tensor master = m;  // the same TensorImpl: set_data moves the caller's tensor
    torch::Tensor home = slice(masterFlat_, offset, master);
    home.copy_(master);
    torch::Tensor gradHome = slice(masterGradFlat_, offset, master);
    if (master.grad().defined()) gradHome.copy_(master.grad());
    master.set_data(home);
    if (master.requires_grad()) master.mutable_grad() = gradHome;
    // A view of a buffer that needs no gradient: a leaf of its own, whose gradient is a view too.
    torch::Tensor copy = slice(computeFlat_, offset, master);
    if (master.requires_grad()) {
      copy.set_requires_grad(true);
      copy.mutable_grad() = slice(computeGradFlat_, offset, master);
    }
    copies_.push_back(copy);
    offset += master.numel();
  }
  refresh();
}

void ComputeCopies::refresh() {
  torch::NoGradGuard noGrad;
  computeFlat_.copy_(masterFlat_);
}

void ComputeCopies::collectGradients() {
  torch::NoGradGuard noGrad;
  masterGradFlat_.add_(computeGradFlat_);
  computeGradFlat_.zero_();
}

}  // namespace sinter::train
