// SD 3 single files: a random file written and read back (MMDiT, VAE with SD 3's scale and shift,
// both CLIPs under text_encoders.*), its modelspec, and the refusal of another family's file.
#include <gtest/gtest.h>

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"
#include "models/checkpoints/flux_random_checkpoint.h"
#include "models/checkpoints/sd3_checkpoint.h"
#include "temp_dir.h"

using namespace sinter::models;
namespace io = sinter::io;
using torch::Tensor;

TEST(Sd3Checkpoint, RandomFileReadsBackAsEveryPart) {
  const sinter::test::TempDir dir;
  const std::string path = dir / "sd3.safetensors";
  writeRandomSd3Checkpoint(path, Sd3Variant::Medium35, /*tiny=*/true, 5);
  const io::SafetensorsFile file(path);
  EXPECT_TRUE(isSd3Checkpoint(file));
  EXPECT_EQ(file.metadata().at("modelspec.architecture"), "stable-diffusion-3-5-medium");
  Sd3Mmdit mmdit = loadSd3Mmdit(file);
  EXPECT_TRUE(mmdit->config() == Sd3MmditConfig::tiny());
  FluxAutoencoder vae = loadSd3Vae(file);
  EXPECT_DOUBLE_EQ(vae->config().scaleFactor, 1.5305);
  EXPECT_DOUBLE_EQ(vae->config().shiftFactor, 0.0609);
  ClipTextModel clipL(ClipTextConfig::tinySd3ClipL()), clipG(ClipTextConfig::tinySd3ClipG());
  clipL->loadFromCheckpoint(file, kSd3ClipLPrefix);
  clipG->loadFromCheckpoint(file, kSd3ClipGPrefix);
  // Every key of the file is one of these four models'.
  const size_t keys = mmdit->checkpointTensors(kSd3MmditPrefix).size() + vae->checkpointTensors(kSd3VaePrefix).size() +
          clipL->checkpointTensors(kSd3ClipLPrefix).size() + clipG->checkpointTensors(kSd3ClipGPrefix).size();
  EXPECT_EQ(file.keys().size(), keys);
  // The same seed, the same weights.
  const std::string again = dir / "again.safetensors";
  writeRandomSd3Checkpoint(again, Sd3Variant::Medium35, true, 5);
  const io::SafetensorsFile second(again);
  for (const std::string& key : {std::string(kSd3MmditPrefix) + "joint_blocks.1.x_block.attn.qkv.weight",
                                 std::string(kSd3ClipGPrefix) + "text_projection.weight"})
    EXPECT_TRUE(torch::equal(file.tensor(key), second.tensor(key))) << key;
  torch::NoGradGuard noGrad;
  const Tensor images = torch::rand({1, 3, 16, 16}) * 2 - 1;
  const Tensor latents = vae->encodeToLatents(images, /*sample=*/false);
  EXPECT_TRUE(torch::allclose(latents, (vae->encode(images).mean - 0.0609) * 1.5305, 1e-5, 1e-6));
}

TEST(Sd3Checkpoint, AnotherFamilysFileIsNamed) {
  const sinter::test::TempDir dir;
  const std::string flux = dir / "flux.safetensors";
  writeRandomFluxTransformer(flux, /*tiny=*/true, /*dev=*/true, 1);
  const io::SafetensorsFile file(flux);
  EXPECT_FALSE(isSd3Checkpoint(file));
  try {
    loadSd3Mmdit(file);
    FAIL() << "no error";
  } catch (const CheckpointError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("not an SD 3 checkpoint"), std::string::npos) << msg;
    EXPECT_NE(msg.find("FLUX"), std::string::npos) << msg;
  }
}
