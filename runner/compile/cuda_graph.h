#pragma once
// One captured CUDA graph of a piece of work (a training step, or a block's forward or backward
// pass), replayed with one launch. PyTorch's recipe (torch.cuda.graph): the work runs eagerly a
// few times on the capture stream, so that lazy initialisation (cuBLAS handles, workspaces,
// autograd's device threads) happens outside the capture, then one more run is captured. Every
// capture uses the same side stream of its device, because autograd runs a backward pass on the
// stream its forward pass ran on: a block's backward graph is captured from the autograd graph its
// forward capture recorded. Every tensor the work reads or writes must stay at the
// same address between replays; memory the work allocates comes from the graph's private pool
// (shared between the graphs of one run, which never replay concurrently). Generators the work
// draws from are registered, so each replay draws fresh numbers at the generator's current offset,
// exactly as an eager run would.
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <vector>

namespace sinter::compile {

// Whether this build can capture CUDA graphs (a CUDA libtorch); a CPU build compiles them out.
bool cudaGraphsCompiledIn();

// Runs `work` on the capture stream of `device`, ordered after the work queued so far on the current
// stream and before what is queued after (warm-up runs of work that is captured later).
void runOnCaptureStream(torch::Device device, const std::function<void()>& work);

// Hands the memory that the ordinary pool caches but no tensor uses back to the device, after the
// work queued on the capture stream. Before a capture: the graphs' private pool cannot reuse that
// memory, and nothing can be freed while a capture is under way, so eager warm-up passes would
// otherwise leave a large capture (a FLUX block's backward pass) out of memory.
void releaseCachedMemory(torch::Device device);

class CapturedGraph {
 public:
  // Runs `work` `warmups` times eagerly and captures it once, all on the capture stream of `device`.
  // `poolOf`: a graph whose memory pool this one shares (nullptr: a new pool). Graphs that share a
  // pool must replay in the order they were captured, or their temporaries may overlap.
  // Throws std::runtime_error naming the CUDA error when the work cannot be captured.
  CapturedGraph(torch::Device device, const std::function<void()>& work, int warmups, const std::vector<at::Generator>& generators,
                const CapturedGraph* poolOf = nullptr);
  ~CapturedGraph();
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;

  // Runs the captured work on the current stream.
  void replay();

  // Where the constructor's time went: the eager warm-up runs (until the device finished them)
  // and the capture with the graph's instantiation.
  struct Seconds {
    double warmups = 0, capture = 0;
  };
  const Seconds& seconds() const { return seconds_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Seconds seconds_;
};

}  // namespace sinter::compile
