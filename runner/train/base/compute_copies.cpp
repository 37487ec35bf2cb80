#include "train/base/compute_copies.h"

#include <set>
#include <stdexcept>
#include <string>

namespace sinter::train {

namespace {

torch::Tensor slice(const torch::Tensor& flat, int64_t offset, const torch::Tensor& like) {
  return flat.narrow(0, offset, like.numel()).view(like.sizes());
}

// The elements of `tensors`, which must be distinct contiguous floating-point tensors of one dtype
// and device (`what` names them in the error).
int64_t checkedTotal(const std::vector<torch::Tensor>& tensors, const std::string& what) {
  if (tensors.empty()) throw std::invalid_argument("ComputeCopies: no " + what);
  int64_t total = 0;
  std::set<const void*> seen;
  for (const torch::Tensor& t : tensors) {
    if (t.scalar_type() != tensors.front().scalar_type() || t.device() != tensors.front().device() || !t.is_contiguous() ||
        !t.is_floating_point())
      throw std::invalid_argument("ComputeCopies: the " + what + " must be contiguous floating-point tensors of one dtype and device");
    if (!seen.insert(t.unsafeGetTensorImpl()).second) throw std::invalid_argument("ComputeCopies: one of the " + what + " is listed twice");
    total += t.numel();
  }
  return total;
}

}  // namespace

ComputeCopies::ComputeCopies(const std::vector<torch::Tensor>& masters, torch::Dtype computeDtype) : masters_(masters) {
  const int64_t total = checkedTotal(masters, "master weights");
  const auto masterOptions = masters.front().options();
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
    computeViews_.push_back(copy);
    offset += master.numel();
  }
  refresh();
}

std::unique_ptr<ComputeCopies> ComputeCopies::ofParameters(const std::vector<torch::Tensor>& params, torch::Dtype computeDtype) {
  const int64_t total = checkedTotal(params, "parameters");
  std::unique_ptr<ComputeCopies> c(new ComputeCopies());
  const auto masterOptions = params.front().options();
  torch::NoGradGuard noGrad;
  c->masterFlat_ = torch::empty({total}, masterOptions);
  c->computeFlat_ = torch::empty({total}, masterOptions.dtype(computeDtype));
  int64_t offset = 0;
  for (const torch::Tensor& p : params) {
    torch::Tensor param = p;  // the same TensorImpl: set_data moves the model's parameter
    torch::Tensor master = slice(c->masterFlat_, offset, param);
    master.copy_(param);
    torch::Tensor view = slice(c->computeFlat_, offset, param);
    param.set_data(view);  // the float32 original is freed here
    c->masters_.push_back(master);
    c->copies_.push_back(param);
    c->computeViews_.push_back(view);
    offset += master.numel();
  }
  // The gradients' buffers once the originals are gone, so the peak stays at the steady state.
  c->masterGradFlat_ = torch::zeros({total}, masterOptions);
  c->computeGradFlat_ = torch::zeros({total}, masterOptions.dtype(computeDtype));
  offset = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    torch::Tensor& master = c->masters_[i];
    if (c->copies_[i].requires_grad()) {
      master.set_requires_grad(true);
      master.mutable_grad() = slice(c->masterGradFlat_, offset, master);
      // Autograd adds into a gradient that exists, in place: backward writes the flat buffer.
      c->copies_[i].mutable_grad() = slice(c->computeGradFlat_, offset, master);
    }
    offset += master.numel();
  }
  c->refresh();
  return c;
}

void ComputeCopies::showMasters() {
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < copies_.size(); ++i) copies_[i].set_data(masters_[i]);
}

void ComputeCopies::showCopies() {
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < copies_.size(); ++i) copies_[i].set_data(computeViews_[i]);
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
