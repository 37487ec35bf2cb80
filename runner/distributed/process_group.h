#pragma once
// One process's place among the ranks of a run, on libtorch's c10d: a TCPStore served by rank 0 at
// MASTER_ADDR:MASTER_PORT for rendezvous and small values, and a process group for the collectives:
// NCCL when the ranks train on GPUs, Gloo on the CPU. c10d's headers stay in the .cpp (they need
// the build's USE_C10D_* definitions).
#include <torch/torch.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "distributed/torchrun_environment.h"

namespace sinter::distributed {

// Whether this build has c10d's process groups (Gloo with Debian's libtorch, NCCL with a CUDA one).
bool distributedCompiledIn();
// "gloo", "nccl" or "gloo, nccl": the collectives this build has; empty when none.
std::string collectiveBackends();
// The NCCL version libtorch was built with ("2.27.7"), empty without NCCL.
std::string ncclVersion();
// How long ranks wait for each other, to meet and in any collective (a rank that stopped
// answering): SINTER_DISTRIBUTED_TIMEOUT seconds, else 10 minutes (PyTorch's default).
std::chrono::milliseconds rankTimeout();
// NCCL collectives can be captured in CUDA graphs from NCCL 2.9.6 (PyTorch's CUDA graph notes).
bool ncclCapturable(const std::string& version);

// A collective started on every rank; wait() returns once this rank's part has finished (on a GPU:
// once the current stream is ordered after it).
class PendingCollective {
 public:
  PendingCollective() = default;
  explicit PendingCollective(std::function<void()> wait) : wait_(std::move(wait)) {}
  void wait() {
    if (wait_) wait_();
    wait_ = nullptr;
  }

 private:
  std::function<void()> wait_;
};

class ProcessGroup {
 public:
  // Rendezvous of `env`'s ranks (waits up to `timeout` for all of them), then the collectives on
  // `device` (NCCL for CUDA, Gloo for the CPU). std::runtime_error naming the address and the cause
  // when the ranks cannot meet; the same when the build lacks the backend.
  static std::unique_ptr<ProcessGroup> connect(const TorchrunEnvironment& env, torch::Device device, std::chrono::milliseconds timeout);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const;
  int size() const;
  const std::string& backend() const;  // "nccl" or "gloo"
  torch::Device device() const;

  // Sums `tensor` (dense, contiguous, the same shape and dtype on every rank) in place across ranks.
  PendingCollective allreduceSum(torch::Tensor tensor);
  // Every rank's `tensors` take rank 0's values (done when it returns).
  void broadcastFromRankZero(const std::vector<torch::Tensor>& tensors);
  // Returns once every rank has called it.
  void barrier();

  // Small values through the store: set, wait for and read, remove.
  void publish(const std::string& key, const std::string& value);
  std::string await(const std::string& key);
  void forget(const std::string& key);
  // Every rank's `value` on rank 0 (indexed by rank); an empty list on the others. `key` must be
  // new to the run (it is removed afterwards).
  std::vector<std::string> gatherOnRankZero(const std::string& key, const std::string& value);

 private:
  struct Impl;
  explicit ProcessGroup(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sinter::distributed
