#include "train/base/device_info.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>

#if __has_include(<c10/cuda/CUDACachingAllocator.h>) && __has_include(<cuda_runtime_api.h>)
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#define SINTER_HAVE_CUDA_HEADERS 1
#else
#define SINTER_HAVE_CUDA_HEADERS 0
#endif

namespace sinter::train {

bool cudaCompiledIn() { return SINTER_HAVE_CUDA_HEADERS != 0; }

at::Generator makeGenerator(const torch::Device& device, std::uint64_t seed) {
#if SINTER_HAVE_CUDA_HEADERS
  if (device.is_cuda()) {
    at::Generator gen = at::cuda::detail::createCUDAGenerator(device.index());
    gen.set_current_seed(seed);
    return gen;
  }
#endif
  (void)device;
  return at::detail::createCPUGenerator(seed);
}

torch::Device trainingDevice(int localRank) {
  if (!torch::cuda::is_available()) return torch::Device(torch::kCPU);
  const int count = static_cast<int>(torch::cuda::device_count());
  if (localRank >= count)
    throw std::invalid_argument("LOCAL_RANK " + std::to_string(localRank) + " needs GPU " + std::to_string(localRank) + " but this host has " +
                                std::to_string(count) + (count == 1 ? " GPU" : " GPUs"));
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(localRank));
}

int cudaDeviceCount() { return torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0; }

std::string describeDevice(const torch::Device& device) {
#if SINTER_HAVE_CUDA_HEADERS
  if (device.is_cuda()) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device.index()) == cudaSuccess) return "cuda:" + std::to_string(device.index()) + " (" + prop.name + ")";
  }
#endif
  return device.is_cuda() ? "cuda:" + std::to_string(device.index()) : "cpu";
}

double peakMemoryMb(const torch::Device& device) {
#if SINTER_HAVE_CUDA_HEADERS
  if (device.is_cuda()) {
    auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
    const auto peak = stats.allocated_bytes[0].peak;  // index 0: the aggregate over pool types
    return static_cast<double>(peak) / (1024.0 * 1024.0);
  }
#endif
  (void)device;
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

void resetPeakMemory(const torch::Device& device) {
#if SINTER_HAVE_CUDA_HEADERS
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
#endif
  (void)device;
}

namespace {
int64_t emulatedDeviceBytes = 0;  // 0: the device's own size
}  // namespace

void setEmulatedDeviceBytes(int64_t bytes) { emulatedDeviceBytes = bytes; }

int64_t availableDeviceBytes(const torch::Device& device) {
#if SINTER_HAVE_CUDA_HEADERS
  if (device.is_cuda()) {
    c10::cuda::CUDAGuard onDevice(device);
    size_t freeBytes = 0, totalBytes = 0;
    if (cudaMemGetInfo(&freeBytes, &totalBytes) != cudaSuccess) return 0;
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
    const int64_t cachedUnused = stats.reserved_bytes[0].current - stats.allocated_bytes[0].current;
    const int64_t available = static_cast<int64_t>(freeBytes) + std::max<int64_t>(0, cachedUnused);
    // An emulated card: no more than its size less what tensors hold, nor than the device has.
    if (emulatedDeviceBytes > 0) return std::min(available, std::max<int64_t>(0, emulatedDeviceBytes - stats.allocated_bytes[0].current));
    return available;
  }
#endif
  (void)device;
  return 0;
}

int64_t totalDeviceBytes(const torch::Device& device) {
#if SINTER_HAVE_CUDA_HEADERS
  if (device.is_cuda() && emulatedDeviceBytes > 0) return emulatedDeviceBytes;
  if (device.is_cuda()) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device.index()) == cudaSuccess) return static_cast<int64_t>(prop.totalGlobalMem);
  }
#endif
  (void)device;
  return 0;
}

int64_t allocatedDeviceBytes(const torch::Device& device) {
#if SINTER_HAVE_CUDA_HEADERS
  if (device.is_cuda()) return c10::cuda::CUDACachingAllocator::getDeviceStats(device.index()).allocated_bytes[0].current;
#endif
  (void)device;
  return 0;
}

std::string describeBuildAndDevices() {
  std::string out = "libtorch ";
#ifdef TORCH_VERSION
  out += TORCH_VERSION;
#else
  out += "(version unknown)";
#endif
#if SINTER_HAVE_CUDA_HEADERS
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  out += " with CUDA " + std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10);
  const int count = cudaDeviceCount();
  if (count == 0) return out + ": no GPU visible (the NVIDIA driver, CUDA_VISIBLE_DEVICES)";
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    char memory[32];
    std::snprintf(memory, sizeof memory, "%.1f", static_cast<double>(prop.totalGlobalMem) / 1073741824.0);
    out += std::string(i == 0 ? ": " : "; ") + "cuda:" + std::to_string(i) + " " + prop.name + ", compute capability " +
           std::to_string(prop.major) + "." + std::to_string(prop.minor) + ", " + memory + " GiB";
  }
  return out;
#else
  return out + ", built without CUDA: training runs on the CPU";
#endif
}

std::string applyCudaMathFlags(const torch::Device& device, bool allowTf32, bool cudnnBenchmark) {
  if (!device.is_cuda()) return (allowTf32 || cudnnBenchmark) ? "TF32 and cuDNN benchmark apply to CUDA only; not set on the CPU" : "";
  std::string done;
  if (allowTf32) {
    at::globalContext().setAllowTF32CuBLAS(true);
    at::globalContext().setAllowTF32CuDNN(true);
    done += "TF32 matmul and cuDNN enabled";
  }
  if (cudnnBenchmark) {
    at::globalContext().setBenchmarkCuDNN(true);
    done += std::string(done.empty() ? "" : "; ") + "cuDNN benchmark enabled";
  }
  return done;
}

}  // namespace sinter::train
