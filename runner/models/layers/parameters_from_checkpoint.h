#pragma once
// While a ParametersFromCheckpoint is alive, the Linear and Conv2d layers made on this thread leave
// their parameters uninitialised: a checkpoint's values are about to overwrite them. Drawing
// torch.nn's random initial values for a full-size model (serially, on the CPU, touching every
// page of its float32 weights) was most of the wait before a run's first step: a minute for SDXL,
// several for FLUX. Random checkpoints (--init_checkpoint) and the LoRA's own weights still draw.
namespace sinter::models {

class ParametersFromCheckpoint {
 public:
  ParametersFromCheckpoint();
  ~ParametersFromCheckpoint();
  ParametersFromCheckpoint(const ParametersFromCheckpoint&) = delete;
  ParametersFromCheckpoint& operator=(const ParametersFromCheckpoint&) = delete;

  // Whether layers made now skip their random initial values.
  static bool active();
};

}  // namespace sinter::models
