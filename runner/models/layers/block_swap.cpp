#include "models/layers/block_swap.h"

#include <algorithm>
#include <stdexcept>

#include "models/layers/linear.h"

#if SINTER_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#endif

namespace sinter::models {

namespace {

std::vector<std::shared_ptr<LinearImpl>> linearsOf(torch::nn::Module& block) {
  std::vector<std::shared_ptr<LinearImpl>> out;
  for (const auto& module : block.modules(/*include_self=*/false))
    if (auto linear = std::dynamic_pointer_cast<LinearImpl>(module)) out.push_back(linear);
  return out;
}

// One streamed Linear's weight: whatever slot of the ring holds its block.
class StreamedWeight : public ServedWeight {
 public:
  StreamedWeight(std::shared_ptr<BlockSwap> swap, int64_t block, size_t linear)
      : swap_(std::move(swap)), block_(block), linear_(linear) {}
  torch::Tensor get(torch::ScalarType dtype) override { return swap_->weight(block_, linear_, dtype); }
  bool streamed() const override { return true; }
  bool trained() const override { return swap_->trainsWeights(); }
  void takeGradient(const torch::Tensor& grad) override { swap_->weightGradient(block_, linear_, grad); }

 private:
  std::shared_ptr<BlockSwap> swap_;
  int64_t block_;
  size_t linear_;
};

int64_t bytesOf(const std::vector<torch::Tensor>& tensors) {
  int64_t n = 0;
  for (const torch::Tensor& t : tensors) n += t.numel() * static_cast<int64_t>(t.element_size());
  return n;
}

}  // namespace

struct BlockSwap::Copies {
#if SINTER_WITH_CUDA
  std::optional<c10::cuda::CUDAStream> side;
  at::cuda::CUDAEvent copied[2];
  at::cuda::CUDAEvent stepped;
#endif
};

BlockSwap::BlockSwap(int64_t blockCount, int64_t first, torch::Device device)
    : blockCount_(blockCount), first_(first), device_(device), copies_(std::make_unique<Copies>()) {}

BlockSwap::~BlockSwap() = default;

std::shared_ptr<BlockSwap> BlockSwap::install(const std::vector<std::shared_ptr<torch::nn::Module>>& blocks, int64_t streamed,
                                              const torch::Device& device, torch::ScalarType storedAs) {
  const auto n = static_cast<int64_t>(blocks.size());
  if (streamed < 2 || streamed > n)
    throw std::invalid_argument("block swap: " + std::to_string(streamed) + " streamed blocks of " + std::to_string(n) +
                                " (2 to " + std::to_string(n) + ")");
  const int64_t first = n - streamed;
  // Checked whole before anything moves, so a refusal leaves the model as it was.
  std::shared_ptr<BlockSwap> swap(new BlockSwap(n, first, device));
  // Each Linear's place in a slot's buffer, 256 bytes aligned as the device's allocations are.
  const int64_t align = std::max<int64_t>(1, 256 / static_cast<int64_t>(c10::elementSize(storedAs)));
  int64_t largest = 0;
  for (int64_t b = first; b < n; ++b) {
    std::vector<int64_t> offsets;
    int64_t end = 0;
    for (const auto& linear : linearsOf(*blocks[static_cast<size_t>(b)])) {
      if (linear->served) throw std::invalid_argument("block swap: a Linear's weight is already served from elsewhere");
      offsets.push_back(end);
      end += (linear->weight.numel() + align - 1) / align * align;
    }
    largest = std::max(largest, end);
    swap->offsets_.push_back(std::move(offsets));
  }
  torch::NoGradGuard noGrad;
  for (int slot = 0; slot < 2; ++slot) swap->buffer_[slot] = torch::empty({largest}, torch::TensorOptions().device(device).dtype(storedAs));
  for (int64_t b = first; b < n; ++b) {
    std::vector<torch::Tensor> host;
    size_t j = 0;
    for (const auto& linear : linearsOf(*blocks[static_cast<size_t>(b)])) {
      torch::Tensor master = linear->weight.data().to(torch::kCPU, storedAs).contiguous();
      if (device.is_cuda()) master = master.pin_memory();  // asynchronous copies need page-locked memory
      linear->weight.set_requires_grad(false);
      linear->weight.set_data(master);  // the device copy is freed: the Linear's weight is the host master
      linear->served = std::make_shared<StreamedWeight>(swap, b, j++);
      host.push_back(master);
    }
    swap->host_.push_back(std::move(host));
  }
  return swap;
}

int64_t BlockSwap::ringBytes() const { return bytesOf({buffer_[0], buffer_[1]}); }

int64_t BlockSwap::hostBytes() const {
  int64_t n = 0;
  for (const auto& block : host_) n += bytesOf(block);
  return n;
}

int BlockSwap::slotOf(int64_t block) const {
  if (block < 0) return -1;
  return slotBlock_[0] == block ? 0 : slotBlock_[1] == block ? 1 : -1;
}

void BlockSwap::load(int64_t block, int slot) {
  const std::vector<torch::Tensor>& host = host_[static_cast<size_t>(block - first_)];
  const std::vector<int64_t>& offsets = offsets_[static_cast<size_t>(block - first_)];
  // The slot's buffer seen as this block's Linears.
  ring_[slot].clear();
  for (size_t j = 0; j < host.size(); ++j)
    ring_[slot].push_back(buffer_[slot].narrow(0, offsets[j], host[j].numel()).view(host[j].sizes()));
#if SINTER_WITH_CUDA
  if (device_.is_cuda()) {
    const c10::cuda::CUDAStream compute = at::cuda::getCurrentCUDAStream(device_.index());
    if (!copies_->side) copies_->side = at::cuda::getStreamFromPool(false, device_.index());
    // The slot's previous block may still be in use by work queued on the compute stream.
    at::cuda::CUDAEvent slotFree;
    slotFree.record(compute);
    slotFree.block(*copies_->side);
    {
      c10::cuda::CUDAStreamGuard onSide(*copies_->side);
      for (size_t j = 0; j < host.size(); ++j) ring_[slot][j].copy_(host[j], /*non_blocking=*/true);
    }
    copies_->copied[slot].record(*copies_->side);
    slotBlock_[slot] = block;
    ++loads_;
    return;
  }
#endif
  for (size_t j = 0; j < host.size(); ++j) ring_[slot][j].copy_(host[j]);
  slotBlock_[slot] = block;
  ++loads_;
}

int BlockSwap::makeResident(int64_t block) {
  int slot = slotOf(block);
  if (block != current_) {
    if (current_ >= 0) direction_ = block > current_ ? 1 : -1;
    // Never overwrite the slot the compute has just been on.
    if (slot < 0) load(block, slot = slotOf(current_) == 0 ? 1 : 0);
    current_ = block;
    // One block ahead, into the other slot, while this one computes.
    const int64_t next = block + direction_;
    if (next >= first_ && next < blockCount_ && slotOf(next) < 0) load(next, 1 - slot);
  }
#if SINTER_WITH_CUDA
  // Every time, not only on a change of block: the backward pass may run on another stream.
  if (device_.is_cuda()) copies_->copied[slot].block(at::cuda::getCurrentCUDAStream(device_.index()));
#endif
  return slot;
}

torch::Tensor BlockSwap::weight(int64_t block, size_t linear, torch::ScalarType dtype) {
  return ring_[makeResident(block)][linear].to(dtype);
}

std::vector<torch::Tensor> BlockSwap::masters() const {
  std::vector<torch::Tensor> all;
  for (const auto& block : host_) all.insert(all.end(), block.begin(), block.end());
  return all;
}

void BlockSwap::trainWeights(WeightStep step) { step_ = std::move(step); }

void BlockSwap::weightGradient(int64_t block, size_t linear, const torch::Tensor& grad) {
  if (!step_) throw std::logic_error("block swap: a streamed weight got a gradient, but no step takes it (trainWeights)");
  const int slot = makeResident(block);
  torch::Tensor& onDevice = ring_[slot][linear];
  torch::Tensor& master = host_[static_cast<size_t>(block - first_)][linear];
  {
    torch::NoGradGuard noGrad;
    step_(master, onDevice, grad);
  }
  // Back to the host master; queued on the side stream before any later load, so the next load
  // of this block (or of this slot) comes after it.
#if SINTER_WITH_CUDA
  if (device_.is_cuda()) {
    if (!copies_->side) copies_->side = at::cuda::getStreamFromPool(false, device_.index());
    copies_->stepped.record(at::cuda::getCurrentCUDAStream(device_.index()));
    copies_->stepped.block(*copies_->side);
    c10::cuda::CUDAStreamGuard onSide(*copies_->side);
    master.copy_(onDevice, /*non_blocking=*/true);
    return;
  }
#endif
  torch::NoGradGuard noGrad;
  master.copy_(onDevice);
}

void BlockSwap::synchronize() {
#if SINTER_WITH_CUDA
  if (copies_->side) copies_->side->synchronize();
#endif
}

void BlockSwap::forgetLoadedBlocks() {
  synchronize();
  slotBlock_[0] = slotBlock_[1] = -1;
  current_ = -1;
  direction_ = 1;
}

}  // namespace sinter::models
