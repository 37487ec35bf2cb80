#include "compile/cuda_graph.h"

#include <stdexcept>

#if SINTER_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#endif

namespace sinter::compile {

bool cudaGraphsCompiledIn() { return SINTER_WITH_CUDA != 0; }

#if SINTER_WITH_CUDA

struct CapturedGraph::Impl {
  at::cuda::CUDAGraph graph;
};

CapturedGraph::CapturedGraph(torch::Device device, const std::function<void()>& work, int warmups,
                             const std::vector<at::Generator>& generators, const CapturedGraph* poolOf)
    : impl_(std::make_unique<Impl>()) {
  if (!device.is_cuda()) throw std::runtime_error("CUDA graphs need a CUDA device, not " + device.str());
  c10::cuda::CUDAGuard onDevice(device);
  const c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream(device.index());
  // Capture cannot run on the default stream; the side stream starts after the work queued so far.
  const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool(false, device.index());
  at::cuda::CUDAEvent queued;
  queued.record(current);
  queued.block(side);
  {
    c10::cuda::CUDAStreamGuard onSide(side);
    for (int i = 0; i < warmups; ++i) work();
    side.synchronize();
    // The warm-up's activations are cached by the ordinary pool, which the graph's private pool
    // cannot reuse: hand them back first, or a large step needs its memory twice.
    c10::cuda::CUDACachingAllocator::emptyCache();
    for (const at::Generator& g : generators) impl_->graph.register_generator_state(g);
    using PoolId = decltype(impl_->graph.pool());
    const PoolId pool = poolOf ? poolOf->impl_->graph.pool() : PoolId{0, 0};
    impl_->graph.capture_begin(pool);
    try {
      work();
    } catch (...) {
      // End the capture so the stream and the allocator are usable again, then report the cause.
      try {
        impl_->graph.capture_end();
      } catch (...) {
      }
      throw;
    }
    impl_->graph.capture_end();
  }
  at::cuda::CUDAEvent captured;
  captured.record(side);
  captured.block(current);
}

CapturedGraph::~CapturedGraph() = default;

void CapturedGraph::replay() { impl_->graph.replay(); }

#else

struct CapturedGraph::Impl {};

CapturedGraph::CapturedGraph(torch::Device, const std::function<void()>&, int, const std::vector<at::Generator>&,
                             const CapturedGraph*) {
  throw std::runtime_error("CUDA graphs are not in this build (a CPU libtorch)");
}

CapturedGraph::~CapturedGraph() = default;

void CapturedGraph::replay() {}

#endif

}  // namespace sinter::compile
