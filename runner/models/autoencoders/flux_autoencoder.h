#pragma once
// The FLUX autoencoder (BFL's ae.safetensors: encoder.*, decoder.*, no quant convs): the same
// ResNet/attention blocks as the SDXL VAE (sdxl_vae.h), 16 latent channels, and latents
// normalised as FLUX does: z' = (z - shift_factor) * scale_factor on encode, the inverse on decode.
#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "models/autoencoders/sdxl_vae.h"

namespace sinter::io {
class SafetensorsFile;
}

namespace sinter::models {

struct FluxAutoencoderConfig {
  int64_t inChannels = 3;  // image channels (and the decoder's output)
  int64_t channels = 128;  // "ch"
  std::vector<int64_t> channelMult = {1, 2, 4, 4};
  int64_t numResBlocks = 2;
  int64_t zChannels = 16;
  int64_t normGroups = 32;
  double scaleFactor = 0.3611;
  double shiftFactor = 0.1159;

  int64_t downscale() const { return int64_t(1) << (channelMult.size() - 1); }
  // The encoder's and decoder's layout in the terms of the blocks shared with the SDXL VAE.
  SdxlVaeConfig blockLayout() const;

  static FluxAutoencoderConfig full();  // FLUX.1 dev and schnell (one AE for both)
  static FluxAutoencoderConfig tiny();  // 32 channels, two levels, one ResBlock per level
  // Sizes from tensor shapes under prefix; scale and shift are FLUX's (not stored in the file).
  // Throws CheckpointError (checkpoint_tensors.h).
  static FluxAutoencoderConfig inferFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix = "");
  void validate() const;  // throws std::invalid_argument
  bool operator==(const FluxAutoencoderConfig& o) const;
};

class FluxAutoencoderImpl : public torch::nn::Module {
 public:
  explicit FluxAutoencoderImpl(const FluxAutoencoderConfig& config);

  // images: [B, 3, H, W] in [-1, 1], H and W multiples of the downscale factor (8). mean and
  // logvar are the encoder's raw moments, [B, 16, H/8, W/8] (BFL does not clamp logvar).
  LatentDistribution encode(const torch::Tensor& images);
  // (sample or mean - shift_factor) * scale_factor: what the transformer is trained on.
  torch::Tensor encodeToLatents(const torch::Tensor& images, bool sample = true,
                                const c10::optional<at::Generator>& generator = c10::nullopt);
  // latents / scale_factor + shift_factor, decoded to images (about [-1, 1]).
  torch::Tensor decodeLatents(const torch::Tensor& latents);

  const FluxAutoencoderConfig& config() const { return config_; }

  void loadFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix = "");
  std::vector<std::pair<std::string, torch::Tensor>> checkpointTensors(const std::string& prefix = "") const;

  VaeEncoder encoder{nullptr};
  VaeDecoder decoder{nullptr};

 private:
  FluxAutoencoderConfig config_;
};
TORCH_MODULE(FluxAutoencoder);

}  // namespace sinter::models
