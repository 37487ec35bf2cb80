// Sample images' files: the PNG writer (pixels and text chunks read back), sd-scripts' file
// names, the parameters text, and when samples are made.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "sample/png_file.h"
#include "sample/sample_naming.h"
#include "sample/sample_schedule.h"

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#include <stb/stb_image.h>

namespace fs = std::filesystem;
using namespace sinter::sample;

namespace {

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

unsigned bigEndian(const std::string& b, size_t at) {
  return (static_cast<unsigned char>(b[at]) << 24) | (static_cast<unsigned char>(b[at + 1]) << 16) |
         (static_cast<unsigned char>(b[at + 2]) << 8) | static_cast<unsigned char>(b[at + 3]);
}

// PNG's CRC-32 (ISO 3309), bit by bit: an independent check of the writer's.
unsigned crc32(const std::string& bytes) {
  unsigned c = 0xffffffffu;
  for (unsigned char byte : bytes) {
    c ^= byte;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return c ^ 0xffffffffu;
}

// keyword -> text of every tEXt and iTXt chunk, checking each chunk's CRC on the way.
std::map<std::string, std::string> textChunks(const std::string& png) {
  std::map<std::string, std::string> out;
  for (size_t at = 8; at + 12 <= png.size();) {
    const unsigned length = bigEndian(png, at);
    const std::string type = png.substr(at + 4, 4), data = png.substr(at + 8, length);
    EXPECT_EQ(bigEndian(png, at + 8 + length), crc32(type + data)) << type;
    const size_t nul = data.find('\0');
    if (type == "tEXt") out[data.substr(0, nul)] = data.substr(nul + 1);
    if (type == "iTXt") {
      // keyword \0, compression flag and method, language \0, translated keyword \0, text.
      size_t p = data.find('\0', nul + 3);
      p = data.find('\0', p + 1);
      out[data.substr(0, nul)] = data.substr(p + 1);
    }
    at += 12 + length;
  }
  return out;
}

}  // namespace

TEST(SamplePng, PixelsAndTextChunksReadBack) {
  const fs::path dir = fs::temp_directory_path() / ("sinter_png_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const torch::Tensor rgb = (torch::arange(5 * 7 * 3, torch::kInt32).reshape({5, 7, 3}) * 7 % 256).to(torch::kUInt8);
  const std::string path = (dir / "a.png").string();
  writePng(path, rgb, {{"parameters", "a cat\nSteps: 30"}, {"sinter", u8"{\"prompt\":\"猫\"}"}});
  const std::string bytes = readFile(path);
  int w = 0, h = 0, n = 0;
  unsigned char* pixels = stbi_load_from_memory(reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()), &w, &h, &n, 3);
  ASSERT_NE(pixels, nullptr) << stbi_failure_reason();
  EXPECT_EQ(w, 7);
  EXPECT_EQ(h, 5);
  EXPECT_EQ(std::memcmp(pixels, rgb.data_ptr<uint8_t>(), 5 * 7 * 3), 0);
  stbi_image_free(pixels);
  const auto text = textChunks(bytes);
  EXPECT_EQ(text.at("parameters"), "a cat\nSteps: 30");
  EXPECT_EQ(text.at("sinter"), u8"{\"prompt\":\"猫\"}");  // UTF-8 as iTXt
  EXPECT_EQ(bytes.find("iTXt") != std::string::npos, true);
  EXPECT_THROW(writePng((dir / "b.png").string(), rgb.to(torch::kFloat32), {}), std::runtime_error);
  EXPECT_THROW(writePng((dir / "c.png").string(), rgb, {{"", "x"}}), std::runtime_error);
  EXPECT_FALSE(fs::exists(dir / "c.png"));
  fs::remove_all(dir);
}

TEST(SamplePng, DecoderRangeToBytesAsDiffusersRounds) {
  const torch::Tensor decoded = torch::tensor({-2.0f, -1.0f, 0.0f, 0.5f, 1.0f, 3.0f}).reshape({1, 3, 1, 2});
  const torch::Tensor rgb = imageToRgb8(decoded);
  ASSERT_EQ(rgb.sizes(), (std::vector<int64_t>{1, 2, 3}));
  // channel c at pixel x: value index c * 2 + x; (v / 2 + 0.5) clamped, * 255, rounded.
  EXPECT_EQ(rgb[0][0][0].item<int>(), 0);
  EXPECT_EQ(rgb[0][1][0].item<int>(), 0);
  EXPECT_EQ(rgb[0][0][1].item<int>(), 128);  // 127.5: half to even
  EXPECT_EQ(rgb[0][1][1].item<int>(), 191);  // 0.75 * 255 = 191.25
  EXPECT_EQ(rgb[0][0][2].item<int>(), 255);
  EXPECT_EQ(rgb[0][1][2].item<int>(), 255);
}

TEST(SampleNaming, FileNamesAsSdScripts) {
  ResolvedSample s;
  s.index = 3;
  s.seed = 42;
  std::tm when{};
  when.tm_year = 2026 - 1900, when.tm_mon = 10, when.tm_mday = 25, when.tm_hour = 13, when.tm_min = 4, when.tm_sec = 5;
  when.tm_isdst = -1;
  const std::time_t t = std::mktime(&when);
  EXPECT_EQ(sampleFileName("mylora", 120, std::nullopt, s, t), "mylora_000120_03_20261125130405.png");
  s.seedGiven = true;
  EXPECT_EQ(sampleFileName("mylora", 120, 2, s, t), "mylora_e000002_03_20261125130405_42.png");
  EXPECT_EQ(sampleFileName("", 0, std::nullopt, s, t), "000000_03_20261125130405_42.png");
}

TEST(SampleNaming, ParametersTextAsA1111WritesIt) {
  ResolvedSample s;
  s.prompt = "a cat";
  s.negativePrompt = "blurry";
  s.steps = 20, s.scale = 7.5, s.seed = 9, s.width = 768, s.height = 512, s.sampler = "Euler a";
  EXPECT_EQ(parametersText(s, "model.safetensors", 100),
            "a cat\nNegative prompt: blurry\nSteps: 20, Sampler: Euler a, CFG scale: 7.5, Seed: 9, Size: 768x512, "
            "Model: model.safetensors, Training step: 100, Version: Sinter");
  s.negativePrompt.clear();
  s.guidanceScale = 3.5;
  s.scale = 1;
  EXPECT_EQ(parametersText(s, "", 0).substr(0, 60), "a cat\nSteps: 20, Sampler: Euler a, CFG scale: 1, Distilled C");
}

TEST(SampleSchedule, WhenSdScriptsSamples) {
  SampleSchedule none;
  EXPECT_FALSE(none.any());
  EXPECT_FALSE(none.afterStep(10));
  EXPECT_FALSE(none.atRunEnd(1, false));

  SampleSchedule steps;
  steps.everyNSteps = 5;
  EXPECT_FALSE(steps.beforeTraining());
  EXPECT_TRUE(steps.afterStep(10));
  EXPECT_FALSE(steps.afterStep(11));
  EXPECT_FALSE(steps.afterEpoch(1));
  EXPECT_FALSE(steps.atRunEnd(1, false));  // by steps: nothing more at the end, as sd-scripts

  SampleSchedule epochs;
  epochs.everyNEpochs = 2;
  epochs.everyNSteps = 5;  // ignored with every_n_epochs, as sd-scripts
  EXPECT_FALSE(epochs.afterStep(10));
  EXPECT_FALSE(epochs.afterEpoch(1));
  EXPECT_TRUE(epochs.afterEpoch(2));
  EXPECT_TRUE(epochs.atRunEnd(4, false));   // max_train_steps ended epoch 4: sd-scripts samples it
  EXPECT_FALSE(epochs.atRunEnd(3, false));  // not a multiple of 2
  EXPECT_FALSE(epochs.atRunEnd(4, true));   // it finished and sampled already

  SampleSchedule first;
  first.atFirst = true;
  EXPECT_TRUE(first.beforeTraining());
  EXPECT_FALSE(first.atRunEnd(1, false));  // only sample_every_n_epochs samples at the end
}
