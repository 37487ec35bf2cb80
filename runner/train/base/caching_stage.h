#pragma once
// One stage of a run's staged start (docs/DESIGN.md, "memory budgets"): the frozen models that
// build a cache (the VAE for latents, the text encoders for their outputs) go to the device when
// the first thing is encoded, so caches read whole from disk move nothing, and the start's peak is
// its largest stage rather than every model at once. HostParking (host_parking.h) sends them back.
#include <torch/torch.h>

#include <string>
#include <vector>

namespace sinter::train {

class CachingStage {
 public:
  // `what` names the models in the log ("the VAE", "CLIP-L and OpenCLIP bigG").
  CachingStage(std::string what, std::vector<torch::nn::Module*> modules, torch::Device device);
  // The models on the device (module by module), on the first call only; logged.
  void onDevice();

 private:
  std::string what_;
  std::vector<torch::nn::Module*> modules_;
  torch::Device device_;
  bool moved_ = false;
};

}  // namespace sinter::train
