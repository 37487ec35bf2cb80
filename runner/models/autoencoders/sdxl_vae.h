#pragma once
// The SDXL VAE (keys under first_stage_model.): encoder to a diagonal Gaussian over latents
// (mean, logvar), latents = sample * 0.13025; decoder from latents back to images in [-1, 1].
#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "models/layers/group_norm32.h"

namespace sinter::io {
class SafetensorsFile;
}

namespace sinter::models {

struct SdxlVaeConfig {
  int64_t inChannels = 3;  // image channels (and the decoder's output)
  int64_t channels = 128;  // "ch"
  std::vector<int64_t> channelMult = {1, 2, 4, 4};
  int64_t numResBlocks = 2;
  int64_t zChannels = 4;
  int64_t embedDim = 4;  // latent channels after quant_conv
  int64_t normGroups = 32;
  double scalingFactor = 0.13025;  // SDXL's latent scale

  int64_t downscale() const { return int64_t(1) << (channelMult.size() - 1); }

  static SdxlVaeConfig full();
  static SdxlVaeConfig tiny();  // 32 channels, two levels, one ResBlock per level
  static SdxlVaeConfig inferFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix);
  void validate() const;
  bool operator==(const SdxlVaeConfig& o) const;
};

// norm1 -> swish -> conv1 -> norm2 -> swish -> conv2, plus the input (nin_shortcut where channels change)
class VaeResnetBlockImpl : public torch::nn::Module {
 public:
  VaeResnetBlockImpl(int64_t in, int64_t out, int64_t groups);
  torch::Tensor forward(const torch::Tensor& x);
  GroupNorm32 norm1{nullptr}, norm2{nullptr};
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, nin_shortcut{nullptr};
};
TORCH_MODULE(VaeResnetBlock);

// Single-head self-attention over the h*w positions with 1x1 conv projections. In the mid-block it
// covers every latent pixel (16384 at 1024x1024, 512 channels), so it runs in query chunks of at
// most kMaxScoreElements scores (128 MiB in float32: 2048 queries at 1024x1024) and encoding never
// holds the whole 16384^2 score matrix, whichever kernel libtorch picks.
class VaeAttnBlockImpl : public torch::nn::Module {
 public:
  static constexpr int64_t kMaxScoreElements = int64_t{1} << 25;
  VaeAttnBlockImpl(int64_t channels, int64_t groups);
  torch::Tensor forward(const torch::Tensor& x);
  GroupNorm32 norm{nullptr};
  torch::nn::Conv2d q{nullptr}, k{nullptr}, v{nullptr}, proj_out{nullptr};
};
TORCH_MODULE(VaeAttnBlock);

// mid: block_1, attn_1, block_2
class VaeMidImpl : public torch::nn::Module {
 public:
  VaeMidImpl(int64_t channels, int64_t groups);
  torch::Tensor forward(const torch::Tensor& x);
  VaeResnetBlock block_1{nullptr}, block_2{nullptr};
  VaeAttnBlock attn_1{nullptr};
};
TORCH_MODULE(VaeMid);

// One resolution level: "block" (ResnetBlocks) and an optional "downsample"/"upsample" conv.
class VaeLevelImpl : public torch::nn::Module {
 public:
  enum class Resample { None, Down, Up };
  VaeLevelImpl(int64_t in, int64_t out, int64_t blocks, Resample resample, int64_t groups);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::ModuleList block{nullptr};

 private:
  std::vector<VaeResnetBlock> blocks_;
  Resample resample_;
  torch::nn::Conv2d conv_{nullptr};  // downsample.conv / upsample.conv
};
TORCH_MODULE(VaeLevel);

class VaeEncoderImpl : public torch::nn::Module {
 public:
  explicit VaeEncoderImpl(const SdxlVaeConfig& c);
  torch::Tensor forward(const torch::Tensor& x);  // [b, 2*z, h/f, w/f]
  torch::nn::Conv2d conv_in{nullptr}, conv_out{nullptr};
  torch::nn::ModuleList down{nullptr};
  VaeMid mid{nullptr};
  GroupNorm32 norm_out{nullptr};

 private:
  std::vector<VaeLevel> levels_;
};
TORCH_MODULE(VaeEncoder);

class VaeDecoderImpl : public torch::nn::Module {
 public:
  explicit VaeDecoderImpl(const SdxlVaeConfig& c);
  torch::Tensor forward(const torch::Tensor& z);
  torch::nn::Conv2d conv_in{nullptr}, conv_out{nullptr};
  VaeMid mid{nullptr};
  torch::nn::ModuleList up{nullptr};  // up.0 is the highest resolution; run from the last
  GroupNorm32 norm_out{nullptr};

 private:
  std::vector<VaeLevel> levels_;
};
TORCH_MODULE(VaeDecoder);

struct LatentDistribution {
  torch::Tensor mean;    // [b, embedDim, h/f, w/f]
  torch::Tensor logvar;  // SDXL clamps it to [-30, 20]; FLUX keeps it raw
  torch::Tensor sample(const c10::optional<at::Generator>& generator = c10::nullopt) const;
};

class SdxlVaeImpl : public torch::nn::Module {
 public:
  static constexpr const char* kPrefix = "first_stage_model.";

  explicit SdxlVaeImpl(const SdxlVaeConfig& config);

  // images: [b, 3, h, w] in [-1, 1], h and w multiples of the downscale factor.
  LatentDistribution encode(const torch::Tensor& images);
  // Scaled latents for training: sample (or the mean) times the scaling factor.
  torch::Tensor encodeToLatents(const torch::Tensor& images, bool sample = true,
                                const c10::optional<at::Generator>& generator = c10::nullopt);
  // Scaled latents back to images (about [-1, 1]).
  torch::Tensor decodeLatents(const torch::Tensor& latents);

  const SdxlVaeConfig& config() const { return config_; }

  static SdxlVaeConfig inferFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix = kPrefix);
  void loadFromCheckpoint(const io::SafetensorsFile& file, const std::string& prefix = kPrefix);
  std::vector<std::pair<std::string, torch::Tensor>> checkpointTensors(const std::string& prefix = kPrefix) const;

  VaeEncoder encoder{nullptr};
  VaeDecoder decoder{nullptr};
  torch::nn::Conv2d quant_conv{nullptr}, post_quant_conv{nullptr};

 private:
  SdxlVaeConfig config_;
};
TORCH_MODULE(SdxlVae);

}  // namespace sinter::models
