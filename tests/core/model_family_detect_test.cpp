#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/model_family_detect.h"
#include "core/pickle_file.h"

using namespace sinter;

namespace {
std::string writeHeaderOnly(const std::string& name, const std::string& header) {
  std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream out(path, std::ios::binary);
  std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xFF));
  out << header;
  return path;
}
}  // namespace

TEST(FamilyDetection, FromKeys) {
  EXPECT_EQ(detectFamilyFromKeys({"model.diffusion_model.input_blocks.0.0.weight", "conditioner.embedders.0.x"}), Family::SDXL);
  EXPECT_EQ(detectFamilyFromKeys({"double_blocks.0.img_attn.qkv.weight", "single_blocks.0.linear1.weight"}), Family::FLUX);
  EXPECT_EQ(detectFamilyFromKeys({"model.diffusion_model.input_blocks.0.0.weight", "cond_stage_model.transformer.x"}), Family::SD15);
  EXPECT_EQ(detectFamilyFromKeys({"model.diffusion_model.input_blocks.0.0.weight", "cond_stage_model.model.ln_final.weight"}), Family::SD2);
  EXPECT_EQ(detectFamilyFromKeys({"_orig_mod.double_blocks.0.x"}), Family::FLUX);
  // SD 3.x: SAI's single file (the MMDiT under model.diffusion_model., its VAE and text encoders
  // beside it), and the bare MMDiT.
  EXPECT_EQ(detectFamilyFromKeys({"first_stage_model.decoder.conv_in.weight", "model.diffusion_model.context_embedder.weight",
                                  "model.diffusion_model.joint_blocks.0.x_block.attn.qkv.weight",
                                  "text_encoders.clip_g.transformer.text_model.final_layer_norm.weight"}),
            Family::SD3);
  EXPECT_EQ(detectFamilyFromKeys({"x_embedder.proj.weight", "joint_blocks.23.context_block.mlp.fc1.weight"}), Family::SD3);
  EXPECT_EQ(detectFamilyFromKeys({"encoder.block.0.weight"}), std::nullopt);
}

TEST(FamilyDetection, OfALoraFileFromItsMetadataThenItsModuleNames) {
  const auto family = [](const std::vector<std::string>& keys, const std::map<std::string, std::string>& metadata, std::int64_t width = 0) {
    const std::optional<LoraFileFamily> f = detectLoraFileFamily(keys, metadata, width);
    return f ? std::string(toString(f->family)) + ": " + f->reason : std::string("none");
  };
  const std::vector<std::string> sd3 = {"lora_unet_joint_blocks_3_context_block_attn_qkv.lora_down.weight",
                                        "lora_te1_text_model_encoder_layers_0_mlp_fc1.alpha"};
  EXPECT_EQ(family(sd3, {}), "sd3: its module names (lora_unet_joint_blocks_*)");
  EXPECT_EQ(family({"lora_unet_x_embedder_proj.lora_up.weight"}, {}), "sd3: its module names (lora_unet_x_embedder_*)");
  // networks.lora is three families' module: the next key tells.
  EXPECT_EQ(family({}, {{"ss_network_module", "networks.lora_sd3"}}), "sd3: ss_network_module = networks.lora_sd3");
  EXPECT_EQ(family(sd3, {{"ss_network_module", "networks.lora"}, {"ss_base_model_version", "5-large"}}),
            "sd3: ss_base_model_version = 5-large");
  EXPECT_EQ(family({}, {{"modelspec.architecture", "stable-diffusion-3-5-medium/lora"}}),
            "sd3: modelspec.architecture = stable-diffusion-3-5-medium/lora");
  EXPECT_EQ(family({}, {{"ss_network_module", "networks.lora_flux"}}), "flux: ss_network_module = networks.lora_flux");
  EXPECT_EQ(family({"lora_unet_single_blocks_0_linear1.lora_down.weight"}, {}), "flux: its module names (lora_unet_single_blocks_*)");
  EXPECT_EQ(family({"transformer.single_transformer_blocks.0.proj_out.lora_A.weight"}, {}),
            "flux: its module names (single_transformer_blocks*)");
  EXPECT_EQ(family({"lora_unet_input_blocks_4_1_proj_in.alpha"}, {}), "sdxl: its module names (lora_unet_input_blocks_*)");
  EXPECT_EQ(family({"lora_unet_down_blocks_1_attentions_0_proj_in.alpha", "lora_te2_text_model_encoder_layers_0_mlp_fc1.alpha"}, {}),
            "sdxl: its module names (lora_te2_* beside lora_unet_down_blocks_*)");
  EXPECT_EQ(family({"lora_te_text_model_encoder_layers_0_mlp_fc1.alpha"}, {}, 1024), "sd2: its module names (lora_te_*, lora_te_* 1024 wide)");
  EXPECT_EQ(family({"lora_te_text_model_encoder_layers_0_mlp_fc1.alpha"}, {}, 768), "sd15: its module names (lora_te_*, lora_te_* 768 wide)");
  EXPECT_EQ(family({"lora_unet_down_blocks_1_attentions_0_proj_in.alpha"}, {{"ss_v2", "True"}}),
            "sd2: its module names (lora_unet_down_blocks_*) and ss_v2 = True");
  EXPECT_EQ(family({"base.q.lora_A.weight"}, {{"ss_network_module", "networks.lora"}}), "none");
}

TEST(FamilyDetection, ReadsOnlyTheHeader) {
  // The data section is absent entirely: detection must not need it.
  std::string path = writeHeaderOnly("sinter_detect.safetensors",
      R"({"__metadata__":{"a":"b"},"conditioner.embedders.1.model.ln_final.weight":{"dtype":"F16","shape":[1280],"data_offsets":[0,2560]}})");
  EXPECT_EQ(detectModelFamily(path), Family::SDXL);
  std::string bad = writeHeaderOnly("sinter_detect_bad.safetensors", "not json at all");
  EXPECT_THROW(detectModelFamily(bad), std::runtime_error);
  EXPECT_THROW(detectModelFamily("/nonexistent/x.safetensors"), std::runtime_error);
  std::remove(path.c_str());
  std::remove(bad.c_str());
}

// A safetensors file whose header is 640 bytes starts with 0x80 0x02, as a protocol-2 pickle does
// (its length, little-endian): the zero high bytes and the JSON's "{" tell it apart.
TEST(FamilyDetection, SafetensorsHeaderLengthsThatStartLikeAPickleAreNoPickle) {
  for (unsigned char second : {2, 3, 4, 5}) {
    const unsigned char safetensors[9] = {0x80, second, 0, 0, 0, 0, 0, 0, '{'};
    EXPECT_FALSE(pickleCheckpointProblem(safetensors, 9)) << int(second);
    const unsigned char pickle[9] = {0x80, second, '}', 'q', 0, '(', 'X', 1, 0};
    EXPECT_TRUE(pickleCheckpointProblem(pickle, 9)) << int(second);
  }
}

TEST(FamilyDetection, PickleCheckpointsAreRefusedUnread) {
  // torch.save's zip archive (PyTorch >= 1.6) and a bare protocol-2 pickle, as .ckpt files hold them.
  const std::string zip = (std::filesystem::temp_directory_path() / "sinter_detect_model.ckpt").string();
  std::ofstream(zip, std::ios::binary) << std::string("PK\x03\x04", 4) << std::string(60, '\0');
  const std::string pickle = (std::filesystem::temp_directory_path() / "sinter_detect_old.ckpt").string();
  std::ofstream(pickle, std::ios::binary) << std::string("\x80\x02}q\x00(X", 7) << std::string(60, 'x');
  for (const std::string& path : {zip, pickle}) {
    try {
      detectModelFamily(path);
      ADD_FAILURE() << path << " was read";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(path), std::string::npos) << what;
      EXPECT_NE(what.find("PyTorch pickle checkpoint"), std::string::npos) << what;
      EXPECT_NE(what.find("convert it to .safetensors"), std::string::npos) << what;
    }
    std::remove(path.c_str());
  }
}
