// FLUX files: random transformer and autoencoder written, read back and run; dev/schnell and
// layout detection; the errors for missing keys and wrong shapes; the autoencoder's latents.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "io/safetensors.h"
#include "models/checkpoints/checkpoint_tensors.h"
#include "models/checkpoints/flux_checkpoint.h"
#include "models/flux/flux_latents.h"
#include "models/checkpoints/flux_random_checkpoint.h"

using namespace sinter::models;
namespace io = sinter::io;
namespace fs = std::filesystem;
using torch::Tensor;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("sinter_flux_ckpt_" + std::to_string(::getpid()));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

Tensor runTiny(FluxTransformer& model) {
  const FluxConfig& c = model->config();
  torch::manual_seed(21);
  const Tensor img = packFluxLatents(torch::randn({2, 16, 4, 4}));
  const Tensor txt = torch::randn({2, 3, c.contextInDim}), y = torch::randn({2, c.vecInDim});
  torch::NoGradGuard noGrad;
  return model(img, fluxImageIds(2, 2, 2), txt, fluxTextIds(2, 3), torch::tensor({0.5f, 0.25f}), y,
               torch::tensor({3.5f, 2.0f}));
}

// The file's tensors, changed by `edit` (which may erase or replace entries), written to `out`.
void rewrite(const std::string& in, const std::string& out,
             const std::function<void(std::map<std::string, Tensor>&)>& edit) {
  std::map<std::string, Tensor> tensors;
  {
    const io::SafetensorsFile file(in);
    for (const std::string& key : file.keys()) tensors[key] = file.tensor(key).clone();
  }
  edit(tensors);
  io::writeSafetensors(out, {tensors.begin(), tensors.end()});
}

}  // namespace

TEST(FluxCheckpoint, RandomTransformerRoundTripsThroughAFile) {
  TempDir dir;
  const std::string path = dir.file("flux_tiny.safetensors");
  writeRandomFluxTransformer(path, /*tiny=*/true, /*dev=*/true, 42);
  FluxTransformer loaded = loadFluxTransformer(path);
  EXPECT_TRUE(loaded->config() == FluxConfig::tiny(true));
  FluxTransformer built = buildRandomFluxTransformer(FluxConfig::tiny(true), 42);
  EXPECT_TRUE(torch::equal(runTiny(loaded), runTiny(built)));
  // Another seed, other weights.
  FluxTransformer other = buildRandomFluxTransformer(FluxConfig::tiny(true), 43);
  EXPECT_FALSE(torch::allclose(runTiny(other), runTiny(built)));
  const io::SafetensorsFile file(path);
  EXPECT_EQ(file.keys().size(), loaded->checkpointTensors().size());
  EXPECT_EQ(file.metadata().at("modelspec.architecture"), "flux-1-dev");
}

TEST(FluxCheckpoint, HalfPrecisionFilesLoadInTheAskedDtype) {
  TempDir dir;
  for (torch::Dtype stored : {torch::kBFloat16, torch::kFloat16}) {
    const std::string path = dir.file("flux_half.safetensors");
    writeRandomFluxTransformer(path, FluxConfig::tiny(false), 7, stored);
    const io::SafetensorsFile file(path);
    EXPECT_EQ(file.info("img_in.weight").dtype, stored == torch::kBFloat16 ? "BF16" : "F16");
    FluxTransformer f32 = loadFluxTransformer(file, torch::kFloat32);
    FluxTransformer built = buildRandomFluxTransformer(FluxConfig::tiny(false), 7);
    EXPECT_EQ(f32->img_in->weight.scalar_type(), torch::kFloat32);
    EXPECT_TRUE(torch::equal(f32->img_in->weight, built->img_in->weight.to(stored).to(torch::kFloat32)));
    FluxTransformer bf16 = loadFluxTransformer(file, torch::kBFloat16);
    EXPECT_EQ(bf16->single_blocks->ptr<FluxSingleBlockImpl>(1)->linear2->weight.scalar_type(), torch::kBFloat16);
  }
}

TEST(FluxCheckpoint, DetectsDevSchnellAndComfyPrefix) {
  TempDir dir;
  const std::string dev = dir.file("dev.safetensors"), schnell = dir.file("schnell.safetensors");
  const std::string comfy = dir.file("comfy.safetensors"), ae = dir.file("ae.safetensors");
  writeRandomFluxTransformer(dev, true, true, 1);
  writeRandomFluxTransformer(schnell, true, false, 1);
  writeRandomFluxAutoencoder(ae, true, 1);
  rewrite(schnell, comfy, [](std::map<std::string, Tensor>& t) {
    std::map<std::string, Tensor> prefixed;
    for (auto& [k, v] : t) prefixed["model.diffusion_model." + k] = v;
    t.swap(prefixed);
  });
  EXPECT_EQ(detectFluxVariant(io::SafetensorsFile(dev)), FluxVariant::Dev);
  EXPECT_EQ(detectFluxVariant(io::SafetensorsFile(schnell)), FluxVariant::Schnell);
  EXPECT_EQ(detectFluxVariant(io::SafetensorsFile(comfy)), FluxVariant::Schnell);
  EXPECT_FALSE(detectFluxVariant(io::SafetensorsFile(ae)).has_value());

  EXPECT_EQ(FluxTransformerImpl::checkpointPrefix(io::SafetensorsFile(comfy)), "model.diffusion_model.");
  FluxTransformer fromComfy = loadFluxTransformer(comfy), fromBfl = loadFluxTransformer(schnell);
  EXPECT_FALSE(fromComfy->config().guidanceEmbed);
  EXPECT_TRUE(torch::equal(runTiny(fromComfy), runTiny(fromBfl)));

  try {
    loadFluxTransformer(ae);
    FAIL() << "an autoencoder loaded as a transformer";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("autoencoder"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(ae), std::string::npos) << e.what();
  }
  EXPECT_THROW(loadFluxAutoencoder(dev), CheckpointError);
}

TEST(FluxCheckpoint, ChromaIsDetectedFromItsKeysAndRoundTrips) {
  TempDir dir;
  const std::string path = dir.file("chroma_tiny.safetensors");
  const FluxConfig c = FluxConfig::tinyChroma();
  writeRandomFluxTransformer(path, c, 7, torch::kFloat32);
  const io::SafetensorsFile file(path);
  EXPECT_EQ(detectFluxVariant(file), FluxVariant::Chroma);
  EXPECT_EQ(file.metadata().at("modelspec.architecture"), "chroma");  // sai_model_spec's ARCH_FLUX_1_CHROMA
  EXPECT_TRUE(FluxConfig::inferFromCheckpoint(file, "") == c);
  FluxTransformer loaded = loadFluxTransformer(path), built = buildRandomFluxTransformer(c, 7);
  torch::manual_seed(21);
  const Tensor img = packFluxLatents(torch::randn({1, 16, 4, 4})), txt = torch::randn({1, 3, c.contextInDim});
  const Tensor mask = torch::tensor({{1, 1, 0}});
  torch::NoGradGuard noGrad;
  auto run = [&](FluxTransformer& m) {
    return m(img, fluxImageIds(1, 2, 2), txt, fluxTextIds(1, 3), torch::tensor({0.5f}), Tensor(), torch::tensor({0.0f}), mask);
  };
  EXPECT_TRUE(torch::equal(run(loaded), run(built)));
}

TEST(FluxCheckpoint, InfersTheSizesFromTheShapes) {
  TempDir dir;
  FluxConfig c = FluxConfig::tiny(true);
  c.depth = 3;
  c.depthSingleBlocks = 1;
  c.mlpRatio = 2.0;
  c.qkvBias = false;
  const std::string path = dir.file("odd.safetensors");
  writeRandomFluxTransformer(path, c, 3, torch::kFloat32);
  EXPECT_TRUE(FluxConfig::inferFromCheckpoint(io::SafetensorsFile(path), "") == c);
}

TEST(FluxCheckpoint, ListsMissingKeysAndWrongShapes) {
  TempDir dir;
  const std::string good = dir.file("good.safetensors"), bad = dir.file("bad.safetensors");
  writeRandomFluxTransformer(good, true, true, 5);
  rewrite(good, bad, [](std::map<std::string, Tensor>& t) {
    t.erase("double_blocks.1.img_attn.qkv.bias");
    t.erase("final_layer.linear.weight");
    t["single_blocks.0.linear2.weight"] = torch::zeros({64, 100});
  });
  try {
    loadFluxTransformer(bad);
    FAIL() << "a damaged file loaded";
  } catch (const CheckpointError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(bad), std::string::npos) << m;
    EXPECT_NE(m.find("2 missing key(s)"), std::string::npos) << m;
    EXPECT_NE(m.find("double_blocks.1.img_attn.qkv.bias"), std::string::npos) << m;
    EXPECT_NE(m.find("final_layer.linear.weight"), std::string::npos) << m;
    EXPECT_NE(m.find("single_blocks.0.linear2.weight is [64, 100], expected [64, 320]"), std::string::npos) << m;
  }
  // A file without the block structure says what it is not.
  const std::string sdxlLike = dir.file("other.safetensors");
  io::writeSafetensors(sdxlLike, {{"model.diffusion_model.input_blocks.0.0.weight", torch::zeros({4})}});
  try {
    loadFluxTransformer(sdxlLike);
    FAIL();
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("not a FLUX.1 transformer"), std::string::npos) << e.what();
  }
  // The diffusers layout is named as such.
  const std::string diffusers = dir.file("diffusers.safetensors");
  io::writeSafetensors(diffusers, {{"transformer_blocks.0.attn.add_k_proj.bias", torch::zeros({4})}});
  try {
    loadFluxTransformer(diffusers);
    FAIL();
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("diffusers"), std::string::npos) << e.what();
  }
}

// ae.safetensors: encoder.* and decoder.* only. Encoder: conv_in 2, down levels 4 x 2 ResBlocks x
// 8 + nin_shortcut in levels 1, 2 (2 x 2) + downsample in levels 0-2 (3 x 2), mid 8 + 10 + 8,
// norm_out 2, conv_out 2 = 106. Decoder: conv_in 2, mid 26, up 4 x 3 ResBlocks x 8 + nin_shortcut
// in levels 1, 0 (2 x 2) + upsample in levels 1-3 (3 x 2), norm_out 2, conv_out 2 = 138. 244 in all.
TEST(FluxAutoencoder, KeysOfTheReleasedFile) {
  FluxAutoencoder ae(FluxAutoencoderConfig::full());
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& [key, t] : ae->checkpointTensors()) shapes[key] = t.sizes().vec();
  EXPECT_EQ(shapes.size(), 244u);
  EXPECT_EQ(shapes["encoder.conv_out.weight"], (std::vector<int64_t>{32, 512, 3, 3}));
  EXPECT_EQ(shapes["decoder.conv_in.weight"], (std::vector<int64_t>{512, 16, 3, 3}));
  EXPECT_EQ(shapes["encoder.mid.attn_1.q.weight"], (std::vector<int64_t>{512, 512, 1, 1}));
  EXPECT_EQ(shapes["decoder.up.0.block.0.nin_shortcut.weight"], (std::vector<int64_t>{128, 256, 1, 1}));
  EXPECT_EQ(shapes.count("encoder.down.3.downsample.conv.weight"), 0u);
  EXPECT_EQ(shapes.count("decoder.up.3.upsample.conv.weight"), 1u);
  EXPECT_EQ(shapes.count("quant_conv.weight"), 0u);
  EXPECT_EQ(FluxAutoencoderConfig::full().downscale(), 8);
}

TEST(FluxAutoencoder, LatentsAreShiftedAndScaledAsFluxDoes) {
  torch::manual_seed(0);
  FluxAutoencoder ae(FluxAutoencoderConfig::tiny());
  torch::NoGradGuard noGrad;
  const Tensor images = torch::rand({2, 3, 16, 24}) * 2 - 1;
  const LatentDistribution d = ae->encode(images);
  EXPECT_EQ(d.mean.sizes(), (std::vector<int64_t>{2, 16, 8, 12}));
  EXPECT_EQ(d.logvar.sizes(), d.mean.sizes());
  const Tensor latents = ae->encodeToLatents(images, /*sample=*/false);
  EXPECT_TRUE(torch::allclose(latents, (d.mean - 0.1159) * 0.3611));
  at::Generator g1 = at::make_generator<at::CPUGeneratorImpl>(7), g2 = at::make_generator<at::CPUGeneratorImpl>(7);
  EXPECT_TRUE(torch::equal(ae->encodeToLatents(images, true, g1), ae->encodeToLatents(images, true, g2)));
  // Decoding undoes the normalisation: the decoder sees the encoder's own mean.
  const Tensor decoded = ae->decodeLatents(latents);
  EXPECT_EQ(decoded.sizes(), images.sizes());
  EXPECT_TRUE(torch::allclose(decoded, ae->decoder(d.mean), 1e-4, 1e-5));
  // Packed for the transformer: (8/2) x (12/2) tokens of 64.
  EXPECT_EQ(packFluxLatents(latents).sizes(), (std::vector<int64_t>{2, 24, 64}));
  EXPECT_THROW(ae->encode(torch::rand({1, 3, 15, 16})), std::invalid_argument);
  EXPECT_THROW(ae->decodeLatents(torch::rand({1, 4, 8, 8})), std::invalid_argument);
}

TEST(FluxAutoencoder, RandomAutoencoderRoundTripsThroughAFile) {
  TempDir dir;
  const std::string path = dir.file("ae_tiny.safetensors");
  writeRandomFluxAutoencoder(path, /*tiny=*/true, 9);
  FluxAutoencoder loaded = loadFluxAutoencoder(path);
  EXPECT_TRUE(loaded->config() == FluxAutoencoderConfig::tiny());
  FluxAutoencoder built = buildRandomFluxAutoencoder(FluxAutoencoderConfig::tiny(), 9);
  torch::NoGradGuard noGrad;
  const Tensor images = torch::rand({1, 3, 16, 16}) * 2 - 1;
  EXPECT_TRUE(torch::equal(loaded->encodeToLatents(images, false), built->encodeToLatents(images, false)));
  const Tensor z = torch::randn({1, 16, 4, 4});
  EXPECT_TRUE(torch::equal(loaded->decodeLatents(z), built->decodeLatents(z)));

  // A key gone: named.
  const std::string bad = dir.file("ae_bad.safetensors");
  rewrite(path, bad, [](std::map<std::string, Tensor>& t) { t.erase("decoder.mid.attn_1.k.bias"); });
  try {
    loadFluxAutoencoder(bad);
    FAIL();
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("decoder.mid.attn_1.k.bias"), std::string::npos) << e.what();
  }
}
