#pragma once
// Frozen models that the training step does not use (the VAE once latents are cached, the text
// encoders once their outputs are) wait in host memory, so that their device memory goes to
// training, as sd-scripts moves them to the CPU; sample images bring them back for their round.
// Nothing moves on a CPU device.
#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

namespace sinter::train {

class HostParking {
 public:
  explicit HostParking(torch::Device device) : device_(device) {}
  // Moves `module` (parameters and buffers) to host memory until a visit, or for good.
  void park(const std::string& name, torch::nn::Module& module);

  // Every parked module (or those named in `only`) on the device while it lives, back in host
  // memory after.
  class Visit {
   public:
    explicit Visit(HostParking& parking, std::vector<std::string> only = {});
    ~Visit();
    Visit(const Visit&) = delete;
    Visit& operator=(const Visit&) = delete;

   private:
    HostParking& parking_;
    std::vector<torch::nn::Module*> visiting_;
  };

 private:
  torch::Device device_;
  std::vector<std::pair<std::string, torch::nn::Module*>> parked_;
};

}  // namespace sinter::train
