// DreamBooth and fine-tune runs (full weights) end to end through the real sinter-runner on tiny
// SDXL and FLUX.1 files and a generated dataset, on the CPU: a few steps lower the loss and change
// only what trains; the saved checkpoint has every key and shape of the one it started from, in
// save_precision, and sinter-runner trains from it again; resume continues exactly; bad inputs
// exit 2 naming the option.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/events.h"
#include "io/safetensors.h"
#include "models/flux/flux_transformer.h"
#include "runner_process.h"

namespace fs = std::filesystem;
using sinter::test::ProcessResult;
using sinter::test::readText;
using sinter::test::runRunner;
using sinter::test::writeText;
using sinter::test::losses;

namespace {

fs::path g_root;

std::string path(const std::string& rel) { return (g_root / rel).string(); }

// A DreamBooth config for the tiny SDXL checkpoint; `extra` lines are appended (keys must not repeat).
std::string writeConfig(const std::string& name, const std::string& outputDir, const std::string& extra) {
  const std::string text = "model_family = \"sdxl\"\n"
                           "pretrained_model_name_or_path = \"" + path("tiny_sdxl.safetensors") + "\"\n"
                           "clip_tokenizer = \"" + path("tokenizer") + "\"\n"
                           "train_data_dir = \"" + path("images") + "\"\n"
                           "output_dir = \"" + outputDir + "\"\n"
                           "output_name = \"db\"\n"
                           "resolution = \"128,128\"\n"
                           "caption_extension = \".txt\"\n"
                           "max_data_loader_n_workers = 0\n"
                           "learning_rate = 0.001\n"
                           "seed = 7\n" + extra;
  const std::string p = path(name);
  fs::create_directories(fs::path(p).parent_path());
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

// max |a - b| over the tensors of two files whose keys start with `prefix` (the keys must agree).
double maxDifference(const std::string& a, const std::string& b, const std::string& prefix) {
  sinter::io::SafetensorsFile fa(a), fb(b);
  double worst = 0;
  for (const auto& k : fa.keys())
    if (k.rfind(prefix, 0) == 0) {
      EXPECT_TRUE(fb.has(k)) << k;
      if (!fb.has(k)) return 1e9;
      worst = std::max(worst, (fa.tensor(k).to(torch::kFloat64) - fb.tensor(k).to(torch::kFloat64)).abs().max().item<double>());
    }
  return worst;
}

// A FLUX transformer with 4 double and 6 single blocks, so that 2 can be swapped (the tiny one has
// none to spare); written once per suite.
std::string deeperFlux() {
  const std::string file = path("flux/deeper.safetensors");
  if (fs::exists(file)) return file;
  sinter::models::FluxConfig c = sinter::models::FluxConfig::tiny();
  c.depth = 4;
  c.depthSingleBlocks = 6;
  torch::manual_seed(9);
  sinter::models::FluxTransformer deeper(c);
  sinter::io::writeSafetensors(file, deeper->checkpointTensors());
  return file;
}

class FullWeightsRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_full_weights_" + std::to_string(::getpid()));
    fs::create_directories(g_root);
    ASSERT_EQ(runRunner({"--init_checkpoint", path("tiny_sdxl.safetensors"), "--model_family", "sdxl", "--model_size", "tiny",
                         "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_checkpoint", path("flux/flux1-dev.safetensors"), "--model_family", "flux", "--model_size", "tiny",
                         "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_dataset", path("images"), "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_dataset", path("reg"), "--seed", "4"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_tokenizer", path("tokenizer")}).exitCode, 0);
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

}  // namespace

// sdxl_train.py's DreamBooth: the U-Net trains, the text encoders and the VAE stay as they were;
// the file is a whole SDXL checkpoint again, in fp16 as save_precision asks.
TEST_F(FullWeightsRun, DreamBoothTrainsTheUnetAndSavesAWholeCheckpoint) {
  const std::string cfg = writeConfig("db.toml", path("out_db"),
                                      "training_type = \"dreambooth\"\nmax_train_steps = 30\ncache_latents = true\n"
                                      "save_precision = \"fp16\"\nreg_data_dir = \"" + path("reg") + "\"\nprior_loss_weight = 0.5\n");
  ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::vector<double> l = losses(r);
  ASSERT_EQ(l.size(), 30u);
  double first = 0, last = 0;
  for (int i = 0; i < 10; ++i) first += l[i], last += l[l.size() - 1 - i];
  EXPECT_LT(last, first) << "loss did not go down: first 10 steps " << first / 10 << ", last 10 " << last / 10;

  const std::string saved = path("out_db/db.safetensors"), base = path("tiny_sdxl.safetensors");
  ASSERT_TRUE(fs::exists(saved));
  sinter::io::SafetensorsFile out(saved), in(base);
  EXPECT_EQ(out.keys(), in.keys());
  for (const auto& k : in.keys()) {
    ASSERT_TRUE(out.has(k)) << k;
    EXPECT_EQ(out.info(k).shape, in.info(k).shape) << k;
    EXPECT_EQ(out.info(k).dtype, "F16") << k;
  }
  EXPECT_GT(maxDifference(saved, base, "model.diffusion_model."), 1e-3);  // trained
  // Frozen: the same weights, rounded to fp16 once.
  EXPECT_LT(maxDifference(saved, base, "conditioner."), 1e-3);
  EXPECT_LT(maxDifference(saved, base, "first_stage_model."), 1e-3);
  EXPECT_EQ(out.metadata().at("modelspec.architecture"), "stable-diffusion-xl-v1-base");
  EXPECT_EQ(out.metadata().at("modelspec.title"), "db");

  // The saved checkpoint is one sinter-runner trains from again.
  ProcessResult again = runRunner({"--config_file", writeConfig("again.toml", path("out_again"), "training_type = \"finetune\"\nmax_train_steps = 2\n"),
                                   "--pretrained_model_name_or_path", saved});
  EXPECT_EQ(again.exitCode, 0) << again.err;
}

// train_text_encoder with learning_rate_te1 / learning_rate_te2: a learning rate of 0 keeps that
// encoder frozen, as in sd-scripts.
TEST_F(FullWeightsRun, TextEncodersTrainWithTheirOwnLearningRates) {
  const std::string cfg = writeConfig("te.toml", path("out_te"),
                                      "training_type = \"finetune\"\nmax_train_steps = 4\ntrain_text_encoder = true\n"
                                      "learning_rate_te1 = 0.001\nlearning_rate_te2 = 0.0\n");
  ProcessResult r = runRunner({"--config_file", cfg});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::string saved = path("out_te/db.safetensors"), base = path("tiny_sdxl.safetensors");
  EXPECT_GT(maxDifference(saved, base, "conditioner.embedders.0."), 1e-6);
  EXPECT_EQ(maxDifference(saved, base, "conditioner.embedders.1."), 0.0);
  EXPECT_EQ(maxDifference(saved, base, "first_stage_model."), 0.0);
}

// sdxl_train.py's default precision: mixed_precision bf16 without full_bf16 trains float32 weights
// under autocast. Here the weights are float32 masters computed through bf16 copies: the saved
// float32 checkpoint holds the masters (not bf16-rounded values), what does not train is saved as
// it computed (in bf16), the first loss is full_bf16's (the same bf16 weights), and resume continues
// exactly from the masters.
TEST_F(FullWeightsRun, MixedPrecisionTrainsFloat32Masters) {
  const std::string extra = "training_type = \"dreambooth\"\nmax_train_steps = 4\nsave_precision = \"float\"\n";
  ProcessResult fp32 = runRunner({"--config_file", writeConfig("fp32.toml", path("out_fp32"), extra), "--events", "jsonl"});
  ASSERT_EQ(fp32.exitCode, 0) << fp32.err;
  const std::string mixed = extra + "mixed_precision = \"bf16\"\nsave_every_n_steps = 2\nsave_state = true\n";
  ProcessResult bf16 = runRunner({"--config_file", writeConfig("masters.toml", path("out_masters"), mixed), "--events", "jsonl"});
  ASSERT_EQ(bf16.exitCode, 0) << bf16.err;
  EXPECT_NE(bf16.err.find("the trained weights are float32 masters, computed through BFloat16 copies"), std::string::npos) << bf16.err;
  ASSERT_EQ(losses(bf16).size(), 4u);
  // The first forward pass computes with the masters rounded to bf16: full_bf16's weights.
  ProcessResult fullBf16 = runRunner({"--config_file", writeConfig("full_bf16.toml", path("out_full_bf16"),
                                                                   extra + "mixed_precision = \"bf16\"\nfull_bf16 = true\n"),
                                      "--events", "jsonl"});
  ASSERT_EQ(fullBf16.exitCode, 0) << fullBf16.err;
  EXPECT_EQ(losses(bf16)[0], losses(fullBf16)[0]);
  // bf16 compute on a tiny random UNet at lr 1e-3 drifts from the float32 run within a few steps.
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(losses(bf16)[i], losses(fp32)[i], 0.1 * std::abs(losses(fp32)[i])) << i;

  const std::string saved = path("out_masters/db.safetensors"), base = path("tiny_sdxl.safetensors");
  sinter::io::SafetensorsFile file(saved);
  const torch::Tensor w = file.tensor("model.diffusion_model.out.2.weight");
  EXPECT_EQ(w.scalar_type(), torch::kFloat32);
  EXPECT_GT(maxDifference(saved, base, "model.diffusion_model."), 1e-6);
  EXPECT_GT((w - w.to(torch::kBFloat16).to(torch::kFloat32)).abs().max().item<double>(), 0.0) << "saved through bf16";
  // The frozen models computed in bf16 and are saved so, as sd-scripts casts them to the weight dtype.
  sinter::io::SafetensorsFile original(base);
  for (const auto& k : file.keys())
    if (k.rfind("conditioner.", 0) == 0 || k.rfind("first_stage_model.", 0) == 0) {
      const torch::Tensor o = original.tensor(k);
      ASSERT_TRUE(torch::equal(file.tensor(k), o.to(torch::kBFloat16).to(o.scalar_type()))) << k;
    }

  ProcessResult resumed = runRunner({"--config_file", writeConfig("masters_resumed.toml", path("out_masters_resumed"),
                                                                  mixed + "resume = \"" + path("out_masters/db-step00000002-state") + "\"\n"),
                                     "--events", "jsonl"});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  EXPECT_EQ(losses(resumed).size(), 2u);
  EXPECT_EQ(maxDifference(path("out_masters_resumed/db.safetensors"), saved, ""), 0.0);
}

TEST_F(FullWeightsRun, ResumeContinuesExactly) {
  const std::string extra = "training_type = \"dreambooth\"\nmax_train_steps = 6\nsave_every_n_steps = 3\nsave_state = true\n";
  ProcessResult straight = runRunner({"--config_file", writeConfig("straight.toml", path("out_straight"), extra)});
  ASSERT_EQ(straight.exitCode, 0) << straight.err;
  ASSERT_TRUE(fs::exists(path("out_straight/db-step00000003-state")));
  ProcessResult resumed = runRunner({"--config_file",
                                     writeConfig("resumed.toml", path("out_resumed"),
                                                 extra + "resume = \"" + path("out_straight/db-step00000003-state") + "\"\n"),
                                     "--events", "jsonl"});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  EXPECT_EQ(losses(resumed).size(), 3u);
  EXPECT_LE(maxDifference(path("out_straight/db.safetensors"), path("out_resumed/db.safetensors"), ""), 1e-6);
}

// sdxl_train.py's low-memory recipe: Adafactor, and fused_backward_pass stepping each weight within
// the backward pass: the same weights as the plain step (no clipping: the fused pass clips each
// weight by its own norm, the plain step by the global one).
TEST_F(FullWeightsRun, AdafactorWithAFusedBackwardPassTrainsAsThePlainStep) {
  const std::string extra = "training_type = \"finetune\"\nmax_train_steps = 4\noptimizer_type = \"Adafactor\"\n"
                            "optimizer_args = [\"scale_parameter=False\", \"relative_step=False\", \"warmup_init=False\"]\n"
                            "max_grad_norm = 0.0\n";
  ProcessResult plain = runRunner({"--config_file", writeConfig("adafactor.toml", path("out_adafactor"), extra)});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  ProcessResult fused = runRunner({"--config_file", writeConfig("fused.toml", path("out_fused"), extra + "fused_backward_pass = true\n"),
                                   "--events", "jsonl"});
  ASSERT_EQ(fused.exitCode, 0) << fused.err;
  EXPECT_NE(fused.err.find("fused_backward_pass: each parameter is stepped by Adafactor"), std::string::npos) << fused.err;
  EXPECT_EQ(losses(fused).size(), 4u);
  const std::string base = path("tiny_sdxl.safetensors");
  EXPECT_GT(maxDifference(path("out_fused/db.safetensors"), base, "model.diffusion_model."), 1e-6);
  EXPECT_EQ(maxDifference(path("out_fused/db.safetensors"), path("out_adafactor/db.safetensors"), ""), 0.0);

  // Adafactor's default relative step replaces the named schedule, as sd-scripts does.
  ProcessResult relative = runRunner({"--config_file", writeConfig("relative.toml", path("out_relative"),
                                                                   "training_type = \"finetune\"\nmax_train_steps = 2\n"
                                                                   "optimizer_type = \"adafactor\"\nlr_scheduler = \"cosine\"\n"),
                                      "--events", "jsonl"});
  ASSERT_EQ(relative.exitCode, 0) << relative.err;
  EXPECT_NE(relative.err.find("its own relative step sets the learning rate"), std::string::npos) << relative.err;
  for (const auto& line : relative.lines())
    if (auto e = sinter::events::parseJsonLine(line))
      if (auto step = std::get_if<sinter::events::Step>(&*e)) EXPECT_DOUBLE_EQ(step->lr, 1e-2);  // min(1e-2, 1/sqrt(step))
}

// flux_train.py: the transformer trains and is saved in BFL's layout, every key of the original.
TEST_F(FullWeightsRun, FluxFineTuneSavesTheTransformer) {
  const std::string cfg = writeConfig("flux.toml", path("out_flux"),
                                      "training_type = \"finetune\"\nmax_train_steps = 3\ncache_latents = true\n"
                                      "cache_text_encoder_outputs = true\nt5xxl_max_token_length = 16\nguidance_scale = 1.0\n");
  const std::string flux = path("flux/flux1-dev.safetensors");
  ProcessResult r = runRunner({"--config_file", cfg, "--model_family", "flux", "--pretrained_model_name_or_path", flux, "--ae",
                               path("flux/ae.safetensors"), "--clip_l", path("flux/clip_l.safetensors"), "--t5xxl",
                               path("flux/t5xxl_fp16.safetensors"), "--t5_tokenizer", path("tokenizer")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::string saved = path("out_flux/db.safetensors");
  sinter::io::SafetensorsFile out(saved), in(flux);
  EXPECT_EQ(out.keys(), in.keys());
  EXPECT_GT(maxDifference(saved, flux, "double_blocks."), 1e-6);
  EXPECT_EQ(out.metadata().at("modelspec.architecture"), "flux-1-dev");
}

// flux_train.py's low-memory recipe: blocks_to_swap with Adafactor's fused backward pass. The swapped
// blocks' weights are stepped in the backward pass through their device copies and written back to
// host memory: the run trains as one that keeps every block (a transformer with 4 double and 6
// single blocks, so that 2 can be swapped), with gradient checkpointing too, and resumes exactly.
TEST_F(FullWeightsRun, FluxBlockSwapTrainsTheSwappedBlocksAsResidentOnes) {
  const std::string base = deeperFlux();
  const std::string extra = "training_type = \"finetune\"\ncache_latents = true\ncache_text_encoder_outputs = true\n"
                            "t5xxl_max_token_length = 16\nguidance_scale = 1.0\noptimizer_type = \"Adafactor\"\n"
                            "optimizer_args = [\"scale_parameter=False\", \"relative_step=False\", \"warmup_init=False\"]\n"
                            "fused_backward_pass = true\nmax_grad_norm = 1.0\n";
  auto runWith = [&](const std::string& name, const std::string& more) {
    ProcessResult r = runRunner({"--config_file", writeConfig(name + ".toml", path("out_" + name), extra + more), "--model_family",
                                 "flux", "--pretrained_model_name_or_path", base, "--ae", path("flux/ae.safetensors"), "--clip_l",
                                 path("flux/clip_l.safetensors"), "--t5xxl", path("flux/t5xxl_fp16.safetensors"), "--t5_tokenizer",
                                 path("tokenizer"), "--events", "jsonl"});
    EXPECT_EQ(r.exitCode, 0) << name << ":\n" << r.err;
    return r;
  };
  const ProcessResult kept = runWith("ft_kept", "max_train_steps = 4\n");
  const ProcessResult swapped = runWith("ft_swap", "max_train_steps = 4\nblocks_to_swap = 2\n");
  EXPECT_NE(swapped.err.find("double_blocks.1-3, single_blocks.2-5"), std::string::npos) << swapped.err;
  ASSERT_EQ(losses(kept).size(), 4u);
  ASSERT_EQ(losses(swapped).size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(losses(kept)[i], losses(swapped)[i], 1e-6) << i;
  const std::string keptFile = path("out_ft_kept/db.safetensors"), swappedFile = path("out_ft_swap/db.safetensors");
  EXPECT_GT(maxDifference(swappedFile, base, "single_blocks.5."), 1e-6);  // a streamed block trained
  EXPECT_LE(maxDifference(swappedFile, keptFile, ""), 1e-6);

  const ProcessResult checkpointed = runWith("ft_swap_gc", "max_train_steps = 4\nblocks_to_swap = 2\ngradient_checkpointing = true\n");
  ASSERT_EQ(losses(checkpointed).size(), 4u);
  EXPECT_LE(maxDifference(path("out_ft_swap_gc/db.safetensors"), keptFile, ""), 1e-6);

  // save_state at step 2, resumed: the swapped masters and their optimizer state continue.
  const ProcessResult stated = runWith("ft_swap_state", "max_train_steps = 4\nblocks_to_swap = 2\nsave_every_n_steps = 2\nsave_state = true\n");
  ASSERT_TRUE(fs::exists(path("out_ft_swap_state/db-step00000002-state")));
  const ProcessResult resumed = runWith("ft_swap_resumed", "max_train_steps = 4\nblocks_to_swap = 2\nresume = \"" +
                                                               path("out_ft_swap_state/db-step00000002-state") + "\"\n");
  EXPECT_EQ(losses(resumed).size(), 2u);
  EXPECT_LE(maxDifference(path("out_ft_swap_resumed/db.safetensors"), keptFile, ""), 1e-6);

  // Without the fused backward pass the swapped weights have nowhere to be stepped: refused up front.
  std::string plain = extra;
  plain.replace(plain.find("fused_backward_pass = true"), std::string("fused_backward_pass = true").size(), "fused_backward_pass = false");
  const ProcessResult refused = runRunner({"--config_file", writeConfig("ft_swap_plain.toml", path("out_ft_swap_plain"),
                                                                        plain + "max_train_steps = 2\nblocks_to_swap = 2\n"),
                                           "--model_family", "flux", "--pretrained_model_name_or_path", base, "--ae",
                                           path("flux/ae.safetensors"), "--clip_l", path("flux/clip_l.safetensors"), "--t5xxl",
                                           path("flux/t5xxl_fp16.safetensors"), "--t5_tokenizer", path("tokenizer")});
  EXPECT_EQ(refused.exitCode, 2);
  EXPECT_NE(refused.err.find("blocks_to_swap: a swapped block's weights are trained inside the backward pass"), std::string::npos)
      << refused.err;
}

// The DreamBooth and fine-tune presets of both families pass every check the runner makes before
// it trains (their optimizer, precision, fused backward pass and block swap together), on the tiny
// models at 128² (the FLUX fine-tune's 16 swapped blocks scaled to the 2 its test model has).
TEST_F(FullWeightsRun, ThePresetsStartRuns) {
  for (const std::string preset : {"sdxl_dreambooth", "sdxl_finetune", "flux_dreambooth", "flux_finetune"}) {
    std::vector<std::string> args{"--config_file", std::string(SINTER_PRESETS_DIR) + "/" + preset + ".toml", "--train_data_dir",
                                  path("images"), "--output_dir", path("out_preset_" + preset), "--clip_tokenizer", path("tokenizer"),
                                  "--resolution", "128,128", "--min_bucket_reso", "64", "--max_bucket_reso", "256", "--dry_run"};
    if (preset.rfind("flux", 0) == 0) {
      for (const std::string& a : {std::string("--pretrained_model_name_or_path"), deeperFlux(), std::string("--ae"),
                                   path("flux/ae.safetensors"), std::string("--clip_l"), path("flux/clip_l.safetensors"),
                                   std::string("--t5xxl"), path("flux/t5xxl_fp16.safetensors"), std::string("--t5_tokenizer"),
                                   path("tokenizer")})
        args.push_back(a);
      if (preset == "flux_finetune") args.insert(args.end(), {"--blocks_to_swap", "2"});
    } else {
      args.insert(args.end(), {"--pretrained_model_name_or_path", path("tiny_sdxl.safetensors")});
    }
    const ProcessResult r = runRunner(args);
    EXPECT_EQ(r.exitCode, 0) << preset << ":\n" << r.err;
  }
}

TEST_F(FullWeightsRun, BadInputsExitTwoNamingTheOption) {
  struct Case {
    std::string name, extra, says;
  };
  const std::vector<Case> cases{
      {"fused_float32_masters", "mixed_precision = \"bf16\"\nfused_backward_pass = true\noptimizer_type = \"Adafactor\"\n",
       "fused_backward_pass"},
      {"fp8_base", "fp8_base = true\n", "fp8_base stores frozen weights; a DreamBooth or fine-tune run trains them"},
      {"fp8_base_unet", "fp8_base_unet = true\n", "fp8_base_unet stores frozen weights; a DreamBooth or fine-tune run trains them"},
      {"blocks_to_swap", "blocks_to_swap = 2\n", "blocks_to_swap"},  // SDXL: no blocks to swap
      {"fused_adamw", "fused_backward_pass = true\n", "fused_backward_pass"},
      {"fused_accumulation", "fused_backward_pass = true\noptimizer_type = \"Adafactor\"\ngradient_accumulation_steps = 2\n",
       "fused_backward_pass"},
      {"adafactor_schedule", "lr_scheduler = \"adafactor\"\n", "lr_scheduler"},
      {"adafactor_args", "optimizer_type = \"Adafactor\"\noptimizer_args = [\"betas=0.9,0.99\"]\n", "optimizer_args"},
  };
  for (const Case& c : cases) {
    const std::vector<std::string> args{"--config_file", writeConfig("bad_" + c.name + ".toml", path("out_bad_" + c.name),
                                                                     "training_type = \"dreambooth\"\nmax_train_steps = 2\n" + c.extra)};
    std::vector<std::string> dry = args;
    dry.push_back("--dry_run");
    const ProcessResult checked = runRunner(dry), ran = runRunner(args);
    EXPECT_EQ(checked.exitCode, 2) << c.name << ":\n" << checked.err;
    EXPECT_EQ(ran.exitCode, 2) << c.name << ":\n" << ran.err;
    EXPECT_NE(ran.err.find(c.says), std::string::npos) << c.name << " should mention " << c.says << ":\n" << ran.err;
    EXPECT_FALSE(fs::exists(path("out_bad_" + c.name + "/db.safetensors"))) << c.name;
  }
}

// Fine-tune with in_json: the images of train_data_dir, captioned by sd-scripts' metadata file.
TEST_F(FullWeightsRun, FineTuneReadsCaptionsFromInJson) {
  std::string json = "{";
  bool first = true;
  for (const auto& entry : fs::recursive_directory_iterator(path("images")))
    if (entry.path().extension() == ".png") {
      json += std::string(first ? "" : ",") + "\"" + entry.path().string() + "\": {\"caption\": \"a shape\", \"tags\": \"demo\"}";
      first = false;
    }
  json += "}";
  std::ofstream(path("meta.json")) << json;
  const std::string cfg = writeConfig("ft.toml", path("out_ft"),
                                      "training_type = \"finetune\"\nmax_train_steps = 2\nin_json = \"" + path("meta.json") + "\"\n");
  ProcessResult r = runRunner({"--config_file", cfg});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(fs::exists(path("out_ft/db.safetensors")));
  std::ofstream(path("bad_meta.json")) << "{\"nowhere\": {\"caption\": \"x\"}}";
  ProcessResult bad = runRunner({"--config_file", writeConfig("ft_bad.toml", path("out_ft_bad"),
                                                              "training_type = \"finetune\"\nmax_train_steps = 2\nin_json = \"" +
                                                                  path("bad_meta.json") + "\"\n")});
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_NE(bad.err.find("bad_meta.json: \"nowhere\": no image"), std::string::npos) << bad.err;
}

// block_lr (sdxl_train.py): the U-Net's blocks train at their own rates, and a block at 0 keeps its
// weights exactly; the text encoders and the VAE stay frozen.
TEST_F(FullWeightsRun, BlockLrTrainsEachBlockAtItsRate) {
  std::string rates;
  for (int b = 0; b < 23; ++b) rates += (b ? "," : "") + std::string(b <= 9 ? "0" : "0.001");  // embeddings and input blocks frozen
  const std::string cfg = writeConfig("block_lr.toml", path("out_block_lr"),
                                      "training_type = \"finetune\"\nmax_train_steps = 3\nblock_lr = \"" + rates + "\"\n");
  ProcessResult r = runRunner({"--config_file", cfg});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("U-Net block10"), std::string::npos) << r.err;
  const std::string saved = path("out_block_lr/db.safetensors"), base = path("tiny_sdxl.safetensors");
  EXPECT_EQ(maxDifference(saved, base, "model.diffusion_model.time_embed."), 0.0);
  EXPECT_EQ(maxDifference(saved, base, "model.diffusion_model.label_emb."), 0.0);
  EXPECT_EQ(maxDifference(saved, base, "model.diffusion_model.input_blocks."), 0.0);
  EXPECT_GT(maxDifference(saved, base, "model.diffusion_model.middle_block."), 1e-6);
  EXPECT_GT(maxDifference(saved, base, "model.diffusion_model.output_blocks."), 1e-6);
  EXPECT_GT(maxDifference(saved, base, "model.diffusion_model.out."), 1e-6);
  EXPECT_EQ(maxDifference(saved, base, "conditioner."), 0.0);

  // Refused where sd-scripts has no block_lr (FLUX, LoRA), and with a count other than 23.
  const std::string flux = path("block_lr_flux.toml");
  std::ofstream(flux) << "model_family = \"flux\"\ntraining_type = \"finetune\"\npretrained_model_name_or_path = \"" +
                             path("flux/flux1-dev.safetensors") + "\"\nblock_lr = \"" + rates + "\"\n";
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--config_file", flux, "--dry_run"},
           {"--config_file", writeConfig("block_lr_lora.toml", path("out_block_lr_lora"), "training_type = \"lora\"\nblock_lr = \"" + rates + "\"\n"),
            "--dry_run"},
           {"--config_file", writeConfig("block_lr_count.toml", path("out_block_lr_count"), "training_type = \"finetune\"\nblock_lr = \"0.001,0\"\n"),
            "--dry_run"}}) {
    const ProcessResult refused = runRunner(args);
    EXPECT_EQ(refused.exitCode, 2) << args[1] << ":\n" << refused.err;
    EXPECT_NE(refused.err.find("block_lr"), std::string::npos) << refused.err;
  }
}

// initial_step / initial_epoch (train_network.py): the step and epoch counters start there, and the
// lr schedule starts from its beginning (a fresh run has no state to continue it from).
TEST_F(FullWeightsRun, InitialStepStartsTheCountersNotTheSchedule) {
  const std::string cfg = writeConfig("initial_step.toml", path("out_initial_step"),
                                      "training_type = \"finetune\"\nmax_train_steps = 6\ninitial_step = 3\n"
                                      "lr_scheduler = \"constant_with_warmup\"\nlr_warmup_steps = 2\n");
  ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto steps = sinter::test::eventsOfType<sinter::events::Step>(r);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].step, 4);
  EXPECT_EQ(steps[2].step, 6);
  EXPECT_NEAR(steps[0].lr, 0.0, 1e-12);      // warmup step 0 of 2
  EXPECT_NEAR(steps[1].lr, 0.0005, 1e-12);   // 1 of 2
  EXPECT_NEAR(steps[2].lr, 0.001, 1e-12);
  EXPECT_EQ(sinter::test::eventsOfType<sinter::events::Done>(r).back().steps, 6);

  // initial_epoch 2 of 2 with skip_until_initial_step: the second epoch's steps alone. The pictures
  // once each (a "1_" folder), so that an epoch is a few steps.
  const fs::path once = path("images_once/1_demo shapes");
  fs::create_directories(once);
  for (const auto& f : fs::directory_iterator(path("images/10_demo shapes")))
    fs::copy_file(f.path(), once / f.path().filename(), fs::copy_options::overwrite_existing);
  std::string epochConfig = readText(writeConfig("initial_epoch.toml", path("out_initial_epoch"),
                                                 "training_type = \"finetune\"\nmax_train_epochs = 2\ninitial_epoch = 2\ntrain_batch_size = 4\n"
                                                 "skip_until_initial_step = true\n"));
  epochConfig.replace(epochConfig.find(path("images")), path("images").size(), path("images_once"));
  writeText(path("initial_epoch.toml"), epochConfig);
  ProcessResult e = runRunner({"--config_file", path("initial_epoch.toml"), "--events", "jsonl"});
  ASSERT_EQ(e.exitCode, 0) << e.err;
  const auto epochSteps = sinter::test::eventsOfType<sinter::events::Step>(e);
  const auto epochs = sinter::test::eventsOfType<sinter::events::Epoch>(e);
  ASSERT_EQ(epochs.size(), 1u);
  EXPECT_EQ(epochs[0].epoch, 2);
  const long long perEpoch = epochs[0].step / 2;
  ASSERT_EQ(static_cast<long long>(epochSteps.size()), perEpoch);
  EXPECT_EQ(epochSteps.front().step, perEpoch + 1);
  EXPECT_EQ(epochSteps.front().epoch, 2);

  // initial_step at or past max_train_steps is refused naming it.
  const ProcessResult past = runRunner({"--config_file", cfg, "--initial_step", "6", "--dry_run"});
  EXPECT_EQ(past.exitCode, 2) << past.err;
  EXPECT_NE(past.err.find("initial_step"), std::string::npos) << past.err;
}

// save_last_n_steps_state keeps the states of the last N steps; the models follow save_last_n_steps
// (unset here: all kept).
TEST_F(FullWeightsRun, SaveLastNStepsStatePrunesOnlyStates) {
  const std::string cfg = writeConfig("last_states.toml", path("out_last_states"),
                                      "training_type = \"finetune\"\nmax_train_steps = 5\nsave_every_n_steps = 1\nsave_state = true\n"
                                      "save_last_n_steps_state = 1\n");
  ProcessResult r = runRunner({"--config_file", cfg});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  for (int step = 1; step <= 4; ++step) {
    char stem[64];
    std::snprintf(stem, sizeof stem, "out_last_states/db-step%08d", step);
    EXPECT_TRUE(fs::exists(path(std::string(stem) + ".safetensors"))) << stem;
    // sd-scripts: saving step s removes the state of step s - 1 - 1 (rounded to the save interval).
    EXPECT_EQ(fs::exists(path(std::string(stem) + "-state")), step >= 3) << stem;
  }
  EXPECT_TRUE(fs::exists(path("out_last_states/db-state")));
}
