#include "kernels/stream_capture.h"

#if SINTER_WITH_CUDA
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace sinter::kernels {

bool capturingOnCurrentStream(torch::Device device) {
#if SINTER_WITH_CUDA
  if (!device.is_cuda()) return false;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  C10_CUDA_CHECK(cudaStreamIsCapturing(c10::cuda::getCurrentCUDAStream(device.index()), &status));
  return status != cudaStreamCaptureStatusNone;
#else
  (void)device;
  return false;
#endif
}

}  // namespace sinter::kernels
