// FLUX.1 LoRA training end to end through the real sinter-runner on tiny random FLUX.1-dev files
// (transformer, AE, CLIP-L, T5) and a generated dataset, on the CPU: loss goes down, a
// networks.lora_flux file with FLUX's metadata, resume continuing exactly, graceful stop, the
// train_blocks argument, and bad inputs each refused naming the option or file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/events.h"
#include "data/image_decode.h"
#include "io/safetensors.h"
#include "models/flux/flux_transformer.h"
#include "models/weights/served_weight.h"
#include "runner_process.h"
#include "safetensors_compare.h"

namespace fs = std::filesystem;
using sinter::test::writeText;
using sinter::test::ProcessResult;
using sinter::test::runRunner;
using sinter::test::expectLogInOrder;
using sinter::test::sameTensors;
using sinter::test::doneStatus;
using sinter::test::losses;
using sinter::test::eventsOf;

namespace {

fs::path g_root;

std::string path(const std::string& rel) { return (g_root / rel).string(); }

// A config for the tiny FLUX.1-dev files; `extra` lines are appended (keys must not repeat).
std::string writeConfig(const std::string& name, const std::string& outputDir, const std::string& extra) {
  std::string text = "model_family = \"flux\"\n"
                     "pretrained_model_name_or_path = \"" + path("flux/flux1-dev.safetensors") + "\"\n"
                     "clip_tokenizer = \"" + path("tokenizer") + "\"\n"
                     "train_data_dir = \"" + path("images") + "\"\n"
                     "output_dir = \"" + outputDir + "\"\n"
                     "output_name = \"t\"\n"
                     "resolution = \"128,128\"\n"
                     "enable_bucket = true\n"
                     "min_bucket_reso = 64\n"
                     "max_bucket_reso = 256\n"
                     "bucket_reso_steps = 32\n"
                     "caption_extension = \".txt\"\n"
                     "max_data_loader_n_workers = 0\n"
                     "network_dim = 4\n"
                     "network_alpha = 4.0\n"
                     "learning_rate = 0.01\n"
                     "t5xxl_max_token_length = 16\n"
                     "seed = 7\n" + extra;
  // Files the bad-input cases replace come last, so a case can leave one out.
  for (const auto& [key, file] : std::vector<std::pair<std::string, std::string>>{
           {"ae", "flux/ae.safetensors"}, {"clip_l", "flux/clip_l.safetensors"}, {"t5xxl", "flux/t5xxl_fp16.safetensors"},
           {"t5_tokenizer", "tokenizer"}})
    if (extra.find(key + " =") == std::string::npos && extra.find("# no " + key) == std::string::npos)
      text += key + " = \"" + path(file) + "\"\n";
  const std::string p = path(name);
  writeText(p, text);
  return p;
}

class FluxLoraRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_flux_run_" + std::to_string(::getpid()));
    fs::create_directories(g_root);
    ASSERT_EQ(runRunner({"--init_checkpoint", path("flux/flux1-dev.safetensors"), "--model_family", "flux", "--model_size", "tiny",
                         "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_dataset", path("images"), "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_tokenizer", path("tokenizer")}).exitCode, 0);
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

}  // namespace

TEST_F(FluxLoraRun, ShortRunLowersTheLossAndSavesAFluxLora) {
  // sd-scripts' recommended FLUX LoRA settings; the flow-matching loss of one step swings with its
  // random sigma, so the loss is compared over 25-step windows of a 100-step run.
  const std::string cfg = writeConfig("lower.toml", path("out_lower"),
                                      "max_train_steps = 100\ntrain_batch_size = 2\ncache_latents = true\n"
                                      "cache_text_encoder_outputs = true\nnetwork_train_unet_only = true\n"
                                      "save_every_n_steps = 50\ntimestep_sampling = \"shift\"\ndiscrete_flow_shift = 3.1582\n"
                                      "model_prediction_type = \"raw\"\nguidance_scale = 1.0\n");
  ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(doneStatus(r), "completed");
  const std::vector<double> l = losses(r);
  ASSERT_EQ(l.size(), 100u);
  double first = 0, last = 0;
  for (int i = 0; i < 25; ++i) first += l[i], last += l[l.size() - 1 - i];
  EXPECT_LT(last, first * 0.9) << "loss did not go down: first 25 steps " << first / 25 << ", last 25 " << last / 25;

  const std::string lora = path("out_lower/t.safetensors");
  ASSERT_TRUE(fs::exists(lora));
  EXPECT_TRUE(fs::exists(path("out_lower/t-step00000050.safetensors")));
  sinter::io::SafetensorsFile f(lora);
  size_t modules = 0;
  for (const auto& k : f.keys()) {
    EXPECT_EQ(k.rfind("lora_unet_", 0), 0u) << k;  // network_train_unet_only
    if (k.size() > 6 && k.compare(k.size() - 6, 6, ".alpha") == 0) ++modules;
  }
  EXPECT_TRUE(f.has("lora_unet_double_blocks_0_img_attn_qkv.lora_down.weight"));
  EXPECT_TRUE(f.has("lora_unet_single_blocks_1_linear2.lora_up.weight"));
  // networks.lora_flux's default targets: every Linear of the blocks, 10 per double block (img_ and
  // txt_ mod.lin, attn.qkv, attn.proj, mlp.0, mlp.2) and 3 per single block (linear1, linear2, modulation.lin).
  EXPECT_EQ(modules, 2u * 10 + 2u * 3);
  const auto& m = f.metadata();
  EXPECT_EQ(m.at("ss_network_module"), "networks.lora_flux");
  EXPECT_EQ(m.at("ss_base_model_version"), "flux1");
  EXPECT_EQ(m.at("ss_model_type"), "flux");
  EXPECT_EQ(m.at("ss_timestep_sampling"), "shift");
  EXPECT_EQ(m.at("ss_guidance_scale"), "1.0");
  EXPECT_EQ(m.at("ss_model_prediction_type"), "raw");
  EXPECT_EQ(m.at("ss_apply_t5_attn_mask"), "False");
  EXPECT_EQ(m.at("ss_steps"), "100");
  EXPECT_EQ(m.at("modelspec.architecture"), "flux-1-dev/lora");
  EXPECT_EQ(m.at("modelspec.implementation"), "https://github.com/black-forest-labs/flux");
  EXPECT_EQ(m.count("modelspec.prediction_type"), 0u);  // FLUX files carry none
  EXPECT_EQ(m.at("ss_sd_model_name"), "flux1-dev.safetensors");
}

TEST_F(FluxLoraRun, ResumeContinuesExactlyAndClipLTrains) {
  const std::string extra = "max_train_steps = 6\nsave_every_n_steps = 3\nsave_state = true\napply_t5_attn_mask = true\n";
  ProcessResult straight = runRunner({"--config_file", writeConfig("straight.toml", path("out_straight"), extra)});
  ASSERT_EQ(straight.exitCode, 0) << straight.err;
  ASSERT_TRUE(fs::exists(path("out_straight/t-step00000003-state")));
  // CLIP-L's LoRA modules (lora_te1_) are there; T5 is not trained by networks.lora_flux's default.
  sinter::io::SafetensorsFile f(path("out_straight/t.safetensors"));
  bool te1 = false, te3 = false;
  for (const auto& k : f.keys()) te1 = te1 || k.rfind("lora_te1_", 0) == 0, te3 = te3 || k.rfind("lora_te3_", 0) == 0;
  EXPECT_TRUE(te1);
  EXPECT_FALSE(te3);
  EXPECT_TRUE(f.has("lora_te1_text_model_encoder_layers_0_self_attn_q_proj.lora_down.weight"));

  const std::string resumed =
      writeConfig("resumed.toml", path("out_resumed"), extra + "resume = \"" + path("out_straight/t-step00000003-state") + "\"\n");
  ProcessResult r = runRunner({"--config_file", resumed, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(losses(r).size(), 3u);
  EXPECT_TRUE(sameTensors(path("out_straight/t.safetensors"), path("out_resumed/t.safetensors"), 1e-6));
}

TEST_F(FluxLoraRun, TrainBlocksKeepsOneKindOfBlockAndGradientCheckpointingGivesTheSameForward) {
  const std::string extra = "max_train_steps = 2\nnetwork_train_unet_only = true\nnetwork_args = [\"train_blocks=single\"]\n";
  ProcessResult plain = runRunner({"--config_file", writeConfig("single.toml", path("out_single"), extra), "--events", "jsonl"});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  sinter::io::SafetensorsFile f(path("out_single/t.safetensors"));
  for (const auto& k : f.keys()) EXPECT_EQ(k.rfind("lora_unet_single_blocks_", 0), 0u) << k;
  EXPECT_EQ(f.metadata().at("ss_network_args"), "{\"train_blocks\": \"single\"}");
  ProcessResult gc = runRunner({"--config_file", writeConfig("gc.toml", path("out_gc"), extra + "gradient_checkpointing = true\n"),
                                "--events", "jsonl"});
  ASSERT_EQ(gc.exitCode, 0) << gc.err;
  ASSERT_EQ(losses(gc).size(), 2u);
  EXPECT_NEAR(losses(gc)[0], losses(plain)[0], 1e-6);
}

// FLUX samples: the flow-matching Euler sampler with dev's guidance (--g), guided by a negative
// prompt when --l is not 1, made before training and at the end of an epoch.
TEST_F(FluxLoraRun, SampleImagesWithTheGuidanceEmbedding) {
  writeText(path("prompts.txt"), "a red square --w 64 --h 80 --d 3 --s 2 --g 4\na blue circle --n green --l 2 --s 2 --d 4 --w 64 --h 64\n");
  ProcessResult r = runRunner({"--config_file", writeConfig("sampled.toml", path("out_sampled"),
                                                            "max_train_steps = 1\nsample_prompts = \"" + path("prompts.txt") +
                                                                "\"\nsample_at_first = true\nsample_every_n_epochs = 1\n"),
                               "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::vector<sinter::events::Sample> samples;
  for (const auto& e : eventsOf(r))
    if (auto s = std::get_if<sinter::events::Sample>(&e)) samples.push_back(*s);
  // Before training, and at the end: max_train_steps ends epoch 1 early, and sd-scripts' sample_images
  // for that epoch still runs.
  ASSERT_EQ(samples.size(), 4u) << r.err;
  EXPECT_EQ(samples[0].step, 0);
  EXPECT_EQ(samples[3].step, 1);
  std::ifstream in(samples[0].path, std::ios::binary);
  const std::string png((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(png.find("Steps: 2, Sampler: Euler, CFG scale: 1, Distilled CFG Scale: 4, Seed: 3, Size: 64x80"), std::string::npos);
  std::ifstream in2(samples[1].path, std::ios::binary);
  const std::string guided((std::istreambuf_iterator<char>(in2)), std::istreambuf_iterator<char>());
  EXPECT_NE(guided.find("Negative prompt: green\nSteps: 2, Sampler: Euler, CFG scale: 2, Distilled CFG Scale: 3.5, Seed: 4, Size: 64x64"),
            std::string::npos);
}

// With cached text encoder outputs the sample prompts are encoded at the start with the captions
// (sd-scripts' sample_prompts_te_outputs), so a sample needs only the AE back on the device; the
// images are those of a run that encodes them when sampling.
// sd-scripts' partial cache: cache_text_encoder_outputs while CLIP-L's LoRA modules train reads
// T5-XXL's outputs from the cache and encodes CLIP-L in each step, so it trains what the run
// without the cache trains.
TEST_F(FluxLoraRun, CachedT5WithClipLTrainingTrainsAsTheUncachedRun) {
  const std::string extra = "max_train_steps = 3\n";
  ProcessResult live = runRunner({"--config_file", writeConfig("clip_live.toml", path("out_clip_live"), extra)});
  ASSERT_EQ(live.exitCode, 0) << live.err;
  ProcessResult cached =
      runRunner({"--config_file", writeConfig("clip_cached.toml", path("out_clip_cached"), extra + "cache_text_encoder_outputs = true\n")});
  ASSERT_EQ(cached.exitCode, 0) << cached.err;
  EXPECT_NE(cached.err.find("T5-XXL's are read from the cache, CLIP-L, whose LoRA modules train, encodes in each step"),
            std::string::npos) << cached.err;
  sinter::io::SafetensorsFile f(path("out_clip_cached/t.safetensors"));
  ASSERT_TRUE(f.has("lora_te1_text_model_encoder_layers_0_self_attn_q_proj.lora_up.weight"));
  // lora_up starts at zero: CLIP-L's modules moved.
  EXPECT_GT(f.tensor("lora_te1_text_model_encoder_layers_0_self_attn_q_proj.lora_up.weight").abs().max().item<double>(), 0.0);
  EXPECT_TRUE(sameTensors(path("out_clip_live/t.safetensors"), path("out_clip_cached/t.safetensors"), 1e-5));
}

// networks.lora_flux's train_t5xxl=True: T5-XXL gets LoRA modules (lora_te3_, q/k/v/o and
// wi_0/wi_1/wo in every block) and encodes in the step with its autograd graph; text_encoder_lr's
// second value is T5-XXL's rate (a rate of 0 leaves its group out, as sd-scripts' assemble_params).
TEST_F(FluxLoraRun, TrainT5xxlTrainsT5sLoraAtTextEncoderLrsSecondValue) {
  const std::string base = "max_train_steps = 3\nnetwork_args = [\"train_t5xxl=True\"]\n";
  ProcessResult r = runRunner({"--config_file", writeConfig("t5.toml", path("out_t5"), base + "text_encoder_lr = [0.01, 0.02]\n")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  sinter::io::SafetensorsFile f(path("out_t5/t.safetensors"));
  size_t te3 = 0;
  for (const auto& k : f.keys()) te3 += k.rfind("lora_te3_", 0) == 0 && k.find(".alpha") != std::string::npos;
  EXPECT_EQ(te3, 2u * 7);  // the tiny T5's 2 blocks
  for (const char* module : {"lora_te3_encoder_block_0_layer_0_SelfAttention_q", "lora_te3_encoder_block_1_layer_0_SelfAttention_o",
                             "lora_te3_encoder_block_0_layer_1_DenseReluDense_wi_0", "lora_te3_encoder_block_1_layer_1_DenseReluDense_wo"}) {
    ASSERT_TRUE(f.has(std::string(module) + ".lora_up.weight")) << module;
    // lora_up starts at zero: T5-XXL's modules trained.
    EXPECT_GT(f.tensor(std::string(module) + ".lora_up.weight").abs().max().item<double>(), 0.0) << module;
  }
  EXPECT_TRUE(f.has("lora_te1_text_model_encoder_layers_0_self_attn_q_proj.lora_up.weight"));
  EXPECT_EQ(f.metadata().at("ss_text_encoder_lr"), "[0.01, 0.02]");
  EXPECT_EQ(f.metadata().at("ss_network_args"), "{\"train_t5xxl\": \"True\"}");

  // T5-XXL's rate 0: its modules are saved as created (lora_up zero), CLIP-L's still train.
  ProcessResult frozen = runRunner({"--config_file", writeConfig("t5_zero.toml", path("out_t5_zero"), base + "text_encoder_lr = [0.01, 0.0]\n")});
  ASSERT_EQ(frozen.exitCode, 0) << frozen.err;
  sinter::io::SafetensorsFile z(path("out_t5_zero/t.safetensors"));
  EXPECT_EQ(z.tensor("lora_te3_encoder_block_0_layer_0_SelfAttention_q.lora_up.weight").abs().max().item<double>(), 0.0);
  EXPECT_GT(z.tensor("lora_te1_text_model_encoder_layers_0_self_attn_q_proj.lora_up.weight").abs().max().item<double>(), 0.0);

  // T5-XXL's outputs change as it trains: caching them is refused before anything loads, as sd-scripts does.
  const std::string cached = writeConfig("t5_cached.toml", path("out_t5_cached"), base + "cache_text_encoder_outputs = true\n");
  for (bool dry : {true, false}) {
    std::vector<std::string> args{"--config_file", cached};
    if (dry) args.push_back("--dry_run");
    ProcessResult refused = runRunner(args);
    EXPECT_EQ(refused.exitCode, 2) << refused.err;
    EXPECT_NE(refused.err.find("cache_text_encoder_outputs cannot be used with network_args train_t5xxl=True"), std::string::npos)
        << refused.err;
    EXPECT_EQ(refused.err.find("loading "), std::string::npos) << refused.err;
  }
}

TEST_F(FluxLoraRun, SamplePromptsAreEncodedAtTheStartWithCachedTextOutputs) {
  writeText(path("prompts_cached.txt"), "a red square --w 64 --h 64 --d 3 --s 2\na blue circle --n green --l 2 --s 2 --d 4 --w 64 --h 64\n");
  const std::string common = "max_train_steps = 1\nnetwork_train_unet_only = true\nsample_at_first = true\nsample_prompts = \"" +
                             path("prompts_cached.txt") + "\"\n";
  std::vector<std::vector<sinter::events::Sample>> samples;
  std::vector<ProcessResult> runs;
  for (const bool cached : {false, true}) {
    const std::string name = cached ? "cached_samples" : "live_samples";
    runs.push_back(runRunner({"--config_file",
                              writeConfig(name + ".toml", path("out_" + name),
                                          common + (cached ? "cache_text_encoder_outputs = true\n" : "")),
                              "--events", "jsonl"}));
    ASSERT_EQ(runs.back().exitCode, 0) << runs.back().err;
    samples.emplace_back();
    for (const auto& e : eventsOf(runs.back()))
      if (auto s = std::get_if<sinter::events::Sample>(&e); s && s->step == 0) samples.back().push_back(*s);
    ASSERT_EQ(samples.back().size(), 2u) << runs.back().err;
  }
  // "a red square", its empty negative prompt, "a blue circle" and "green".
  EXPECT_NE(runs[1].err.find("sample prompts: 4 texts encoded for the samples"), std::string::npos) << runs[1].err;
  EXPECT_NE(runs[1].err.find("samples are conditioned on the start's encodings"), std::string::npos) << runs[1].err;
  EXPECT_EQ(runs[0].err.find("samples are conditioned on the start's encodings"), std::string::npos);
  // Before any step the LoRA adds nothing: the same pixels, up to the batched encoding's rounding
  // (the guided sample encodes its two texts as one batch when sampling, one by one at the start).
  for (size_t i = 0; i < 2; ++i) {
    const sinter::data::RgbImage live = sinter::data::loadImageFile(samples[0][i].path);
    const sinter::data::RgbImage cached = sinter::data::loadImageFile(samples[1][i].path);
    ASSERT_EQ(live.width, cached.width);
    ASSERT_EQ(live.height, cached.height);
    ASSERT_EQ(live.pixels.size(), cached.pixels.size());
    int worst = 0;
    for (size_t p = 0; p < live.pixels.size(); ++p) worst = std::max(worst, std::abs(int(live.pixels[p]) - int(cached.pixels[p])));
    EXPECT_LE(worst, 1) << "sample " << i;
  }
}

TEST_F(FluxLoraRun, GracefulStopSavesAndExitsZero) {
  const std::string cfg = writeConfig("stop.toml", path("out_stop"), "max_train_steps = 100000\nnetwork_train_unet_only = true\n");
  int steps = 0;
  ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl"}, [&](const std::string& line) {
    if (line.find("\"type\":\"step\"") != std::string::npos) ++steps;
    return steps < 2;
  });
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(doneStatus(r), "stopped");
  bool savedStopped = false;
  for (const auto& e : eventsOf(r))
    if (auto s = std::get_if<sinter::events::Saved>(&e)) savedStopped = savedStopped || s->kind == "stopped";
  EXPECT_TRUE(savedStopped);
  EXPECT_FALSE(fs::exists(path("out_stop/t.safetensors")));
}

// Each missing or wrong file is refused before loading, by the dry run and the run, naming the
// option or the file.
TEST_F(FluxLoraRun, BadInputsExitTwoNamingTheOptionOrFile) {
  ASSERT_EQ(runRunner({"--init_checkpoint", path("sdxl.safetensors"), "--model_family", "sdxl", "--model_size", "tiny"}).exitCode, 0);
  struct Case {
    std::string name, extra, says;
  };
  const std::vector<Case> cases{
      {"no_ae", "# no ae\n", "ae is not set"},
      {"absent_ae", "ae = \"" + path("absent_ae.safetensors") + "\"\n", "absent_ae.safetensors"},
      {"no_clip_l", "# no clip_l\n", "clip_l is not set"},
      {"clip_l_is_t5", "clip_l = \"" + path("flux/t5xxl_fp16.safetensors") + "\"\n", "t5xxl_fp16.safetensors"},
      {"no_t5xxl", "# no t5xxl\n", "t5xxl is not set"},
      {"t5xxl_is_ae", "t5xxl = \"" + path("flux/ae.safetensors") + "\"\n", "T5 encoder"},
      {"no_t5_tokenizer", "# no t5_tokenizer\n", "t5_tokenizer is not set"},
      {"t5_tokenizer_elsewhere", "t5_tokenizer = \"" + path("images") + "\"\n", "spiece.model"},
      {"sdxl_checkpoint", "", "is a sdxl checkpoint"},
      {"train_blocks", "network_args = [\"train_blocks=middle\"]\n", "train_blocks='middle'"},
      {"sdxl_module", "network_module = \"networks.lora\"\n", "networks.lora_flux"},
      // The tiny model has 2 double and 2 single blocks: sd-scripts keeps 2 of each on the device.
      {"blocks_to_swap", "blocks_to_swap = 1\n", "blocks_to_swap up to 0"},
  };
  std::vector<Case> all = cases;
  if (!sinter::models::float8InBuild()) all.push_back({"fp8_base", "fp8_base = true\n", "fp8_base: this libtorch"});
  // FP8 tensor-core GEMMs: refused without a GPU that has them (or a libtorch with at::_scaled_mm).
  if (!torch::cuda::is_available()) all.push_back({"fp8_fast", "fp8_base = true\nfp8_scaled = true\nfp8_fast = true\n", "fp8_fast: "});
  for (const Case& c : all) {
    std::vector<std::string> args{"--config_file", writeConfig("bad_" + c.name + ".toml", path("out_bad_" + c.name), "max_train_steps = 2\n" + c.extra)};
    if (c.name == "sdxl_checkpoint") args.insert(args.end(), {"--pretrained_model_name_or_path", path("sdxl.safetensors")});
    sinter::test::expectRefusedBeforeLoading(c.name, args, c.says, path("out_bad_" + c.name));
  }
}

// blocks_to_swap streams the last blocks' weights through a ring instead of keeping them: the
// run trains exactly as one that keeps them (a transformer with 4 double and 6 single blocks, so
// that 2 can be swapped: 3 double and 4 single blocks stream).
TEST_F(FluxLoraRun, BlockSwapTrainsLikeTheResidentModel) {
  sinter::models::FluxConfig c = sinter::models::FluxConfig::tiny();
  c.depth = 4;
  c.depthSingleBlocks = 6;
  torch::manual_seed(9);
  sinter::models::FluxTransformer deeper(c);
  sinter::io::writeSafetensors(path("flux/deeper.safetensors"), deeper->checkpointTensors());
  const std::string extra = "max_train_steps = 3\nnetwork_train_unet_only = true\ncache_latents = true\n";
  auto runWith = [&](const std::string& name, const std::string& more) {
    ProcessResult r = runRunner({"--config_file", writeConfig(name + ".toml", path("out_" + name), extra + more),
                                 "--pretrained_model_name_or_path", path("flux/deeper.safetensors"), "--events", "jsonl"});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return r;
  };
  const ProcessResult kept = runWith("swap_kept", "");
  const ProcessResult swapped = runWith("swap_2", "blocks_to_swap = 2\n");
  EXPECT_NE(swapped.err.find("double_blocks.1-3, single_blocks.2-5"), std::string::npos) << swapped.err;
  ASSERT_EQ(losses(kept).size(), 3u);
  ASSERT_EQ(losses(swapped).size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(losses(kept)[i], losses(swapped)[i], 1e-6) << i;
  EXPECT_TRUE(sameTensors(path("out_swap_kept/t.safetensors"), path("out_swap_2/t.safetensors"), 1e-6));
  // And with gradient checkpointing, as 24 GB recipes combine them.
  const ProcessResult checkpointed = runWith("swap_gc", "blocks_to_swap = 2\ngradient_checkpointing = true\n");
  ASSERT_EQ(losses(checkpointed).size(), 3u);
  EXPECT_NEAR(losses(kept)[0], losses(checkpointed)[0], 1e-6);
}

// The bundled FLUX demo preset trains as the demo runs it.
TEST_F(FluxLoraRun, DemoPresetTrains) {
  ProcessResult r = runRunner({"--config_file", std::string(SINTER_PRESETS_DIR) + "/demo_flux_lora_tiny.toml",
                               "--pretrained_model_name_or_path", path("flux/flux1-dev.safetensors"), "--ae", path("flux/ae.safetensors"),
                               "--clip_l", path("flux/clip_l.safetensors"), "--t5xxl", path("flux/t5xxl_fp16.safetensors"),
                               "--clip_tokenizer", path("tokenizer"), "--t5_tokenizer", path("tokenizer"), "--train_data_dir",
                               path("images"), "--output_dir", path("out_demo"), "--max_train_steps", "4", "--sample_prompts", std::string(SINTER_PRESETS_DIR) + "/demo_sample_prompts.txt", "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(fs::exists(path("out_demo/demo_flux_lora.safetensors")));
}

// The start is staged (train/flux/flux_family.h): a LoRA run places its transformer only after the
// caches are built, the encoders whose outputs are not cached after the latents; the caching
// stages move their models only when something is encoded. On the CPU nothing moves, so the log's
// order is what shows it.
TEST_F(FluxLoraRun, TheStartPlacesTheTransformerAfterTheCaches) {
  const std::string extra = "max_train_steps = 2\nnetwork_train_unet_only = true\ncache_latents_to_disk = true\n"
                            "cache_text_encoder_outputs_to_disk = true\n";
  const ProcessResult first = runRunner({"--config_file", writeConfig("staged.toml", path("out_staged"), extra), "--events", "jsonl"});
  ASSERT_EQ(first.exitCode, 0) << first.err;
  expectLogInOrder(first, {"caching latents", "placing the AE on cpu for caching", "latents: ", "caching text encoder outputs",
                "placing CLIP-L and T5-XXL on cpu for caching", "text encoder outputs: ", "placing the FLUX transformer on cpu",
                "steps"});
  // Latents (the tiny AE's own factor) and text encoder outputs read whole from disk: their stages move no model.
  const ProcessResult again = runRunner({"--config_file", writeConfig("staged.toml", path("out_staged2"), extra), "--events", "jsonl"});
  ASSERT_EQ(again.exitCode, 0) << again.err;
  EXPECT_EQ(again.err.find("CLIP-L and T5-XXL on"), std::string::npos) << again.err;
  EXPECT_EQ(again.err.find("placing the AE on"), std::string::npos) << again.err;
  expectLogInOrder(again, {"latents: 0 encoded", "text encoder outputs: 0 encoded", "placing the FLUX transformer on cpu"});
  EXPECT_EQ(losses(first).size(), 2u);
  EXPECT_EQ(losses(again).size(), 2u);
  // Without cached text outputs the encoders go to the device after the latents, the transformer last.
  const ProcessResult uncached = runRunner(
      {"--config_file", writeConfig("staged_te.toml", path("out_staged_te"), "max_train_steps = 1\ncache_latents = true\n"), "--events",
       "jsonl"});
  ASSERT_EQ(uncached.exitCode, 0) << uncached.err;
  EXPECT_EQ(uncached.err.find("CLIP-L and T5-XXL on"), std::string::npos) << uncached.err;
  expectLogInOrder(uncached, {"latents: ", "placing the FLUX transformer on cpu"});
}
