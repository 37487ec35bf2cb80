#pragma once
// SD 3.x files for the LoRA tools' tests: the tiny SD 3.5 Medium checkpoint the runner writes
// (`--init_checkpoint F --model_family sd3 --model_size tiny`: MMDiT, VAE, CLIP-L and CLIP-G in one
// file, t5xxl_fp16.safetensors beside it), its models loaded as a run loads them, and a
// networks.lora_sd3 LoRA made as training makes it (random_lora_network.h) on those models.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "models/checkpoints/sd3_checkpoint.h"
#include "models/text_encoders/t5_encoder.h"
#include "network/lora_network.h"
#include "random_lora_network.h"
#include "runner_process.h"
#include "train/sd3/sd3_model_set.h"

namespace sinter::test {

struct Sd3ToolModels {
  models::Sd3Mmdit mmdit{nullptr};
  models::ClipTextModel clipL{nullptr}, clipG{nullptr};
  models::T5Encoder t5{nullptr};
};

// The tiny checkpoint at `checkpoint` (and T5-XXL at the path returned), written by the runner.
inline std::string writeTinySd3Checkpoint(const std::string& checkpoint, uint64_t seed) {
  const ProcessResult run = runRunner({"--init_checkpoint", checkpoint, "--model_family", "sd3", "--model_size", "tiny", "--seed",
                                       std::to_string(seed)});
  EXPECT_EQ(run.exitCode, 0) << run.err;
  return (std::filesystem::path(checkpoint).parent_path() / "t5xxl_fp16.safetensors").string();
}

// The MMDiT and both CLIPs of an SD 3 checkpoint, and T5-XXL from `t5xxl` ("" leaves it out).
inline Sd3ToolModels loadSd3ToolModels(const std::string& checkpoint, const std::string& t5xxl = "") {
  const io::SafetensorsFile file(checkpoint);
  Sd3ToolModels m;
  m.mmdit = models::loadSd3Mmdit(file);
  m.clipL = train::loadSd3Clip(file, false);
  m.clipG = train::loadSd3Clip(file, true);
  if (!t5xxl.empty()) m.t5 = models::loadT5Encoder(t5xxl);
  return m;
}

// networks.lora_sd3 on the models as sd3_family attaches it: the MMDiT (with `networkArgs`' emb_dims),
// CLIP-L and CLIP-G with `textEncoders`, T5-XXL where loaded (train_t5xxl).
inline network::LoraNetworkOptions sd3LoraOptions(int64_t dim, double alpha, const std::vector<std::string>& networkArgs = {}) {
  return loraNetworkOptions(dim, alpha, networkArgs, "networks.lora_sd3");
}
inline void attachSd3Lora(network::LoraNetwork& lora, const network::LoraNetworkOptions& options, Sd3ToolModels& m, bool textEncoders) {
  using network::LoraComponent;
  lora.attach(network::sd3LoraRule(LoraComponent::Unet, options.args.sd3EmbDims), *m.mmdit);
  if (textEncoders) {
    lora.attach(network::sd3LoraRule(LoraComponent::TextEncoder1), *m.clipL);
    lora.attach(network::sd3LoraRule(LoraComponent::TextEncoder2), *m.clipG);
    if (m.t5) lora.attach(network::sd3LoraRule(LoraComponent::TextEncoder3), *m.t5);
  }
}

// Saved as sd3_train_network saves it, with its network module and model version in the metadata.
inline void saveSd3LoraNetwork(const network::LoraNetwork& lora, const std::string& path) {
  io::writeSafetensors(path, lora.stateDict(torch::kFloat32),
                       {{"ss_network_module", "networks.lora_sd3"}, {"ss_base_model_version", "5-medium"},
                        {"modelspec.architecture", "stable-diffusion-3-5-medium/lora"}});
}

}  // namespace sinter::test
