#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/model_family_detect.h"

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
  EXPECT_EQ(detectFamilyFromKeys({"encoder.block.0.weight"}), std::nullopt);
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
