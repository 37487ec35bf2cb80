#pragma once
// blocks_to_swap: the frozen Linear weights of a model's last blocks of one kind live in host
// memory (pinned, on CUDA) and stream through a ring of two device buffers, each block loaded one
// block ahead of the compute in whichever direction the pass runs (ascending in the forward pass,
// descending in the backward pass and its recomputations), on a side stream on CUDA. Only the
// weights are copied, host to device: they are frozen, so the host copy stays the master and
// nothing goes back. Biases, norms and LoRA adapters stay on the device.
//
// In a full-weight run (DreamBooth, fine-tune) the streamed weights are trained: each one's gradient
// is handed, in the backward pass while its block is on the device, to a step (trainWeights) that
// updates the ring's copy in place, as sd-scripts' flux_train.py steps them in its fused backward
// pass; the updated copy goes back to the host master on the side stream, ahead of any later load.
//
// sd-scripts' meaning of the count is kept: asked to swap s blocks of a kind, the device holds the
// weights of n - s of them (n - s - 2 resident, 2 in the ring), so s + 2 blocks stream.
//
// The streamed blocks may differ in their Linears (SD 3.5 Medium's MMDiT-X blocks with a second
// attention, SD 3's last block without the context's attention output and MLP): each ring slot is
// one device buffer as large as the largest streamed block, and a block loaded into it gets views of
// its own Linears' shapes.
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sinter::models {

class BlockSwap : public std::enable_shared_from_this<BlockSwap> {
 public:
  // `blocks`: one kind's blocks in forward order; the Linear weights of the
  // last `streamed` (2 to n) move to host memory as `storedAs` (the compute dtype, or float8 with
  // fp8_base) and are served from the ring on `device` from now on (`frozen` on each of those
  // Linears, whose `weight` is then the host copy). Call it before the model moves to the device
  // (models::moveToDevice leaves the host copies where they are).
  static std::shared_ptr<BlockSwap> install(const std::vector<std::shared_ptr<torch::nn::Module>>& blocks, int64_t streamed,
                                            const torch::Device& device, torch::ScalarType storedAs);
  ~BlockSwap();

  int64_t firstStreamed() const { return first_; }  // blocks [firstStreamed, n) stream
  int64_t blockCount() const { return blockCount_; }
  bool streams(int64_t block) const { return block >= first_; }
  // Host-to-device block loads so far (each block's whole set of Linear weights counts once).
  int64_t loads() const { return loads_; }
  // Device bytes of the ring (two blocks' weights) and host bytes of the streamed blocks.
  int64_t ringBytes() const;
  int64_t hostBytes() const;

  // Linear `linear` (in module order) of block `block`, on the device, for the current stream.
  torch::Tensor weight(int64_t block, size_t linear, torch::ScalarType dtype);

  // The streamed weights' host masters (each is its Linear's `weight`).
  std::vector<torch::Tensor> masters() const;
  // The streamed weights train from now on: `step(master, onDevice, grad)` gets each weight's
  // gradient with the weight's host master and its device copy, which it updates in place. An
  // empty function freezes them again.
  using WeightStep = std::function<void(const torch::Tensor& master, torch::Tensor& onDevice, const torch::Tensor& grad)>;
  void trainWeights(WeightStep step);
  bool trainsWeights() const { return static_cast<bool>(step_); }
  // From the backward pass: the gradient of Linear `linear` of `block`, which is on the device.
  void weightGradient(int64_t block, size_t linear, const torch::Tensor& grad);
  // Blocks until every updated weight has reached its host master (before reading the masters).
  void synchronize();
  // The ring forgets what it holds (after the host masters were written, e.g. by resume).
  void forgetLoadedBlocks();

 private:
  struct Copies;
  BlockSwap(int64_t blockCount, int64_t first, torch::Device device);
  int slotOf(int64_t block) const;
  int makeResident(int64_t block);  // its slot
  void load(int64_t block, int slot);

  int64_t blockCount_, first_;
  torch::Device device_;
  std::vector<std::vector<torch::Tensor>> host_;     // [block - first][linear]
  std::vector<std::vector<int64_t>> offsets_;        // [block - first][linear]: where in a slot's buffer
  torch::Tensor buffer_[2];                          // [slot]: the largest streamed block's elements
  std::vector<torch::Tensor> ring_[2];               // [slot][linear]: views of the block it holds
  int64_t slotBlock_[2] = {-1, -1};
  int64_t current_ = -1;  // the block the compute is on
  int direction_ = 1;     // +1 forward, -1 backward: where the next block is
  int64_t loads_ = 0;
  WeightStep step_;
  std::unique_ptr<Copies> copies_;  // the side stream and events (CUDA)
};

}  // namespace sinter::models
