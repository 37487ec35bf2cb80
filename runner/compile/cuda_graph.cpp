#include "compile/cuda_graph.h"

#include <chrono>
#include <map>
#include <mutex>
#include <stdexcept>

#if SINTER_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#endif

namespace sinter::compile {

bool cudaGraphsCompiledIn() { return SINTER_WITH_CUDA != 0; }

#if SINTER_WITH_CUDA

namespace {

c10::cuda::CUDAStream captureStream(torch::Device device) {
  static std::mutex mutex;
  static std::map<c10::DeviceIndex, c10::cuda::CUDAStream> streams;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = streams.find(device.index());
  if (it == streams.end()) it = streams.emplace(device.index(), c10::cuda::getStreamFromPool(false, device.index())).first;
  return it->second;
}

// Runs `work` on `side`, after what `current` has queued, and makes `current` wait for it.
void onSideStream(const c10::cuda::CUDAStream& current, const c10::cuda::CUDAStream& side, const std::function<void()>& work) {
  at::cuda::CUDAEvent queued;
  queued.record(current);
  queued.block(side);
  {
    c10::cuda::CUDAStreamGuard onSide(side);
    work();
  }
  at::cuda::CUDAEvent done;
  done.record(side);
  done.block(current);
}

}  // namespace

void runOnCaptureStream(torch::Device device, const std::function<void()>& work) {
  if (!device.is_cuda()) throw std::runtime_error("the capture stream needs a CUDA device, not " + device.str());
  c10::cuda::CUDAGuard onDevice(device);
  onSideStream(c10::cuda::getCurrentCUDAStream(device.index()), captureStream(device), work);
}

void releaseCachedMemory(torch::Device device) {
  if (!device.is_cuda()) return;
  captureStream(device).synchronize();
  c10::cuda::CUDACachingAllocator::emptyCache();
}

struct CapturedGraph::Impl {
  at::cuda::CUDAGraph graph;
  at::cuda::MempoolId_t pool;  // known before the capture ends, to end its allocation if the capture fails
};

CapturedGraph::CapturedGraph(torch::Device device, const std::function<void()>& work, int warmups,
                             const std::vector<at::Generator>& generators, const CapturedGraph* poolOf)
    : impl_(std::make_unique<Impl>()) {
  if (!device.is_cuda()) throw std::runtime_error("CUDA graphs need a CUDA device, not " + device.str());
  c10::cuda::CUDAGuard onDevice(device);
  // Capture cannot run on the default stream; the capture stream starts after the work queued so far.
  onSideStream(c10::cuda::getCurrentCUDAStream(device.index()), captureStream(device), [&] {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < warmups; ++i) work();
    // The warm-up's activations are cached by the ordinary pool: hand them back first, or a large
    // step needs its memory twice.
    if (warmups > 0) releaseCachedMemory(device);  // waits for the warm-up runs
    const auto captureStart = std::chrono::steady_clock::now();
    seconds_.warmups = std::chrono::duration<double>(captureStart - start).count();
    for (const at::Generator& g : generators) impl_->graph.register_generator_state(g);
    impl_->pool = poolOf ? poolOf->impl_->pool : at::cuda::graph_pool_handle();
    impl_->graph.capture_begin(impl_->pool);
    try {
      work();
    } catch (...) {
      // End the capture so the stream and the allocator are usable again, then report the cause.
      try {
        impl_->graph.capture_end();
      } catch (...) {
        // The capture was invalidated: capture_end stops before it ends the pool's allocation.
        try {
          c10::cuda::CUDACachingAllocator::endAllocateToPool(c10::cuda::current_device(), impl_->pool);
        } catch (...) {
        }
      }
      throw;
    }
    impl_->graph.capture_end();
    seconds_.capture = std::chrono::duration<double>(std::chrono::steady_clock::now() - captureStart).count();
  });
}

CapturedGraph::~CapturedGraph() = default;

void CapturedGraph::replay() { impl_->graph.replay(); }

#else

void runOnCaptureStream(torch::Device, const std::function<void()>&) {
  throw std::runtime_error("CUDA graphs are not in this build (a CPU libtorch)");
}

void releaseCachedMemory(torch::Device) {}

struct CapturedGraph::Impl {};

CapturedGraph::CapturedGraph(torch::Device, const std::function<void()>&, int, const std::vector<at::Generator>&,
                             const CapturedGraph*) {
  throw std::runtime_error("CUDA graphs are not in this build (a CPU libtorch)");
}

CapturedGraph::~CapturedGraph() = default;

void CapturedGraph::replay() {}

#endif

}  // namespace sinter::compile
