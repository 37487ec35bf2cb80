// SDXL LoRA training end to end through the real sinter-runner on a tiny checkpoint and a
// generated dataset, on the CPU: loss goes down, saves, resume continues exactly, graceful stop,
// and bad inputs.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <torch/version.h>

#include <cmath>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/events.h"
#include "io/safetensors.h"
#include "models/weights/served_weight.h"
#include "runner_process.h"
#include "safetensors_compare.h"

namespace fs = std::filesystem;
using sinter::test::writeText;
using sinter::test::ProcessResult;
using sinter::test::runRunner;
using sinter::test::expectLogInOrder;
using sinter::test::sameTensors;
using sinter::test::relativeDifference;
using sinter::test::doneStatus;
using sinter::test::losses;
using sinter::test::eventsOf;
using sinter::test::eventsOfType;
using sinter::test::lastRunnerPid;

namespace {

fs::path g_root;

std::string path(const std::string& rel) { return (g_root / rel).string(); }

// A config for the tiny model; `extra` lines are appended (later keys must not repeat earlier ones).
std::string writeConfig(const std::string& name, const std::string& outputDir, const std::string& extra,
                        const std::string& dataDir = "") {
  std::string text = "model_family = \"sdxl\"\n"
                     "pretrained_model_name_or_path = \"" + path("tiny_sdxl.safetensors") + "\"\n"
                     "clip_tokenizer = \"" + path("tokenizer") + "\"\n"
                     "train_data_dir = \"" + (dataDir.empty() ? path("images") : dataDir) + "\"\n"
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
                     "seed = 7\n" + extra;
  const std::string p = path(name);
  writeText(p, text);
  return p;
}

class SdxlLoraRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_train_run_" + std::to_string(::getpid()));
    fs::create_directories(g_root);
    ASSERT_EQ(runRunner({"--init_checkpoint", path("tiny_sdxl.safetensors"), "--model_family", "sdxl", "--model_size", "tiny", "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_dataset", path("images"), "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_tokenizer", path("tokenizer")}).exitCode, 0);
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

}  // namespace

TEST_F(SdxlLoraRun, ShortRunLowersTheLossAndSavesAKohyaLora) {
  std::string cfg = writeConfig("lower.toml", path("out_lower"),
                                "max_train_steps = 60\ntrain_batch_size = 2\ncache_latents = true\nnetwork_train_unet_only = true\n"
                                "save_every_n_steps = 30\n");
  ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(doneStatus(r), "completed");
  std::vector<double> l = losses(r);
  ASSERT_EQ(l.size(), 60u);
  double first = 0, last = 0;
  for (int i = 0; i < 10; ++i) first += l[i], last += l[l.size() - 1 - i];
  EXPECT_LT(last, first * 0.93) << "loss did not go down: first 10 steps " << first / 10 << ", last 10 " << last / 10;

  const std::string lora = path("out_lower/t.safetensors");
  ASSERT_TRUE(fs::exists(lora));
  EXPECT_TRUE(fs::exists(path("out_lower/t-step00000030.safetensors")));
  sinter::io::SafetensorsFile f(lora);
  bool hasUnetKey = false;
  for (const auto& k : f.keys()) {
    EXPECT_EQ(k.rfind("lora_unet_", 0), 0u) << k;  // network_train_unet_only
    hasUnetKey = hasUnetKey || k.find("_transformer_blocks_0_attn1_to_q.lora_down.weight") != std::string::npos;
  }
  EXPECT_TRUE(hasUnetKey);
  EXPECT_EQ(f.metadata().at("ss_network_module"), "networks.lora");
  EXPECT_EQ(f.metadata().at("ss_network_dim"), "4");
  EXPECT_EQ(f.metadata().at("ss_steps"), "60");
}

TEST_F(SdxlLoraRun, ResumeContinuesExactlyAndTextEncodersTrain) {
  const std::string extra = "max_train_steps = 6\nsave_every_n_steps = 3\nsave_state = true\n";
  ProcessResult straight = runRunner({"--config_file", writeConfig("straight.toml", path("out_straight"), extra)});
  ASSERT_EQ(straight.exitCode, 0) << straight.err;
  ASSERT_TRUE(fs::exists(path("out_straight/t-step00000003-state")));
  // Text encoder LoRA modules are there and trained (no unet_only).
  sinter::io::SafetensorsFile f(path("out_straight/t.safetensors"));
  bool te1 = false, te2 = false;
  for (const auto& k : f.keys()) te1 = te1 || k.rfind("lora_te1_", 0) == 0, te2 = te2 || k.rfind("lora_te2_", 0) == 0;
  EXPECT_TRUE(te1 && te2);

  std::string resumed = writeConfig("resumed.toml", path("out_resumed"), extra + "resume = \"" + path("out_straight/t-step00000003-state") + "\"\n");
  ProcessResult r = runRunner({"--config_file", resumed, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(losses(r).size(), 3u);
  EXPECT_TRUE(sameTensors(path("out_straight/t.safetensors"), path("out_resumed/t.safetensors"), 1e-6));
}

TEST_F(SdxlLoraRun, SameSeedSameRun) {
  const std::string extra = "max_train_steps = 3\nnetwork_train_unet_only = true\n";
  ASSERT_EQ(runRunner({"--config_file", writeConfig("a.toml", path("out_a"), extra)}).exitCode, 0);
  ASSERT_EQ(runRunner({"--config_file", writeConfig("b.toml", path("out_b"), extra)}).exitCode, 0);
  EXPECT_TRUE(sameTensors(path("out_a/t.safetensors"), path("out_b/t.safetensors"), 0));
}

// sd-scripts' network_args through a real run: conv_dim's 3x3 conv adapters train and are saved
// as sd-scripts names them; rank/module dropout and block lr weights, with gradient checkpointing
// (the recomputation replays the dropout draws); the same seed gives the same file.
TEST_F(SdxlLoraRun, ConvDimAndDropoutNetworkArgsTrainReproducibly) {
  const std::string extra =
      "max_train_steps = 4\nnetwork_train_unet_only = true\ngradient_checkpointing = true\n"
      "network_args = [\"conv_dim=2\", \"conv_alpha=1\", \"rank_dropout=0.2\", \"module_dropout=0.1\", \"down_lr_weight=sine+0.5\"]\n";
  ProcessResult r = runRunner({"--config_file", writeConfig("conv.toml", path("out_conv"), extra), "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::vector<double> l = losses(r);
  ASSERT_EQ(l.size(), 4u);
  for (double x : l) EXPECT_TRUE(std::isfinite(x));
  const std::string lora = path("out_conv/t.safetensors");
  sinter::io::SafetensorsFile f(lora);
  const torch::Tensor down = f.tensor("lora_unet_input_blocks_1_0_in_layers_2.lora_down.weight");
  EXPECT_EQ(down.sizes().vec(), (std::vector<int64_t>{2, 32, 3, 3}));
  EXPECT_EQ(f.tensor("lora_unet_input_blocks_1_0_in_layers_2.lora_up.weight").sizes().vec(), (std::vector<int64_t>{32, 2, 1, 1}));
  EXPECT_GT(f.tensor("lora_unet_input_blocks_1_0_in_layers_2.lora_up.weight").abs().sum().item<float>(), 0.0f);  // trained
  EXPECT_NE(f.metadata().at("ss_network_args").find("\"conv_dim\": \"2\""), std::string::npos) << f.metadata().at("ss_network_args");
  ASSERT_EQ(runRunner({"--config_file", path("conv.toml"), "--output_dir", path("out_conv2")}).exitCode, 0);
  EXPECT_TRUE(sameTensors(path("out_conv2/t.safetensors"), lora, 0));
}

// sd-scripts' noise and loss options, scale_weight_norms, no_half_vae and the caption options
// through a real run: it trains, every step event carries the max-norm figures, the saved modules
// are within the limit, and the options change the run (the losses differ from the plain run's).
TEST_F(SdxlLoraRun, NoiseLossMaxNormAndCaptionOptionsTrainAndReportTheirFigures) {
  const std::string common = "max_train_steps = 4\nnetwork_train_unet_only = true\n";
  const std::string options =
      "noise_offset = 0.05\nadaptive_noise_scale = 0.01\nnoise_offset_random_strength = true\nmultires_noise_iterations = 4\n"
      "multires_noise_discount = 0.3\nip_noise_gamma = 0.05\nip_noise_gamma_random_strength = true\n"
      "v_parameterization = true\nzero_terminal_snr = true\nscale_v_pred_loss_like_noise_pred = true\n"
      "debiased_estimation_loss = true\nscale_weight_norms = 0.01\nno_half_vae = true\n"
      "caption_prefix = \"photo of \"\ncaption_suffix = \", detailed\"\nkeep_tokens_separator = \"|||\"\n";
  ProcessResult r = runRunner({"--config_file", writeConfig("opts.toml", path("out_opts"), common + options), "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::vector<double> l = losses(r);
  ASSERT_EQ(l.size(), 4u);
  for (double x : l) EXPECT_TRUE(std::isfinite(x));
  for (const auto& s : eventsOfType<sinter::events::Step>(r)) {
    std::map<std::string, double> f(s.figures.begin(), s.figures.end());
    ASSERT_EQ(f.count("max_norm/keys_scaled"), 1u) << "step " << s.step;
    EXPECT_GE(f.at("max_norm/keys_scaled"), 0.0);
    EXPECT_LE(f.at("max_norm/max_key_norm"), 0.01 * (1 + 1e-4));
    EXPECT_LE(f.at("norm/avg_key_norm"), f.at("max_norm/max_key_norm") * (1 + 1e-6));
  }
  EXPECT_NE(r.err.find("max_norm/keys_scaled"), std::string::npos) << "the log line shows the figures";
  // The saved modules are within the limit (float32 rounding aside).
  sinter::io::SafetensorsFile f(path("out_opts/t.safetensors"));
  int checked = 0;
  for (const auto& k : f.keys()) {
    const std::string suffix = ".lora_down.weight";
    if (k.size() < suffix.size() || k.compare(k.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    const std::string base = k.substr(0, k.size() - suffix.size());
    const torch::Tensor down = f.tensor(k).to(torch::kFloat64), up = f.tensor(base + ".lora_up.weight").to(torch::kFloat64);
    if (down.dim() != 2) continue;
    const double scale = f.tensor(base + ".alpha").item<double>() / static_cast<double>(down.size(0));
    EXPECT_LE((torch::matmul(up, down) * scale).norm().item<double>(), 0.01 * (1 + 1e-3)) << base;
    ++checked;
  }
  EXPECT_GT(checked, 0);
  EXPECT_EQ(f.metadata().at("ss_scale_weight_norms"), "0.01");
  ProcessResult plain = runRunner({"--config_file", writeConfig("opts_plain.toml", path("out_opts_plain"), common), "--events", "jsonl"});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  EXPECT_NE(losses(plain), l);
}

TEST_F(SdxlLoraRun, GracefulStopSavesAndExitsZero) {
  std::string cfg = writeConfig("stop.toml", path("out_stop"), "max_train_steps = 100000\nnetwork_train_unet_only = true\n");
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
  EXPECT_FALSE(fs::exists(path("out_stop/t.safetensors")));  // not presented as a finished model
  bool stateSaved = false;
  for (const auto& entry : fs::directory_iterator(path("out_stop")))
    stateSaved = stateSaved || entry.path().filename().string().find("-state") != std::string::npos;
  EXPECT_TRUE(stateSaved);
  EXPECT_FALSE(fs::exists(path("out_stop/t.lock")));  // released and removed on the way out
}

TEST_F(SdxlLoraRun, BadInputsExitTwoWithAClearMessage) {
  struct Case {
    std::string name, extra, dataDir, says;
  };
  // A FLUX-layout checkpoint (header only is enough to be recognised).
  const std::string flux = path("flux.safetensors");
  {
    std::string header = R"({"double_blocks.0.img_attn.qkv.weight":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
    std::string bytes(8, '\0');
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((header.size() >> (8 * i)) & 0xFF);
    writeText(flux, bytes + header + std::string(4, '\0'));
  }
  const std::string corrupt = path("corrupt.safetensors");
  writeText(corrupt, "not a checkpoint at all");
  writeText(path("empty_data/10_x/readme.md"), "no images here");
  writeText(path("bad_images/10_x/a.png"), "this is not a png");
  writeText(path("latin1/10_x/a.txt"), "caf\xe9");
  fs::copy_file(path("images/10_demo shapes/shape_000.png"), path("latin1/10_x/a.png"));
  std::vector<Case> cases{
      {"missing_ckpt", "pretrained_model_name_or_path = \"" + path("absent.safetensors") + "\"\n", "", "absent.safetensors"},
      {"flux_ckpt", "pretrained_model_name_or_path = \"" + flux + "\"\n", "", "flux checkpoint"},
      {"corrupt_ckpt", "pretrained_model_name_or_path = \"" + corrupt + "\"\n", "", "corrupt.safetensors"},
      {"no_tokenizer", "clip_tokenizer = \"" + path("absent_tokenizer") + "\"\n", "", "absent_tokenizer"},
      {"no_data", "", path("absent_images"), "absent_images"},
      {"empty_data", "", path("empty_data"), "empty_data"},
      {"bad_images", "", path("bad_images"), "a.png"},
      {"latin1_caption", "", path("latin1"), "a.txt"},
  };
  for (const Case& c : cases) {
    // Keys given twice would be a config error of their own: put overrides on the command line.
    std::string cfg = writeConfig(c.name + ".toml", path("out_" + c.name), "max_train_steps = 2\n", c.dataDir);
    std::vector<std::string> args{"--config_file", cfg};
    if (c.extra.find("pretrained") == 0) args.insert(args.end(), {"--pretrained_model_name_or_path", c.extra.substr(c.extra.find('"') + 1, c.extra.rfind('"') - c.extra.find('"') - 1)});
    if (c.extra.find("clip_tokenizer") == 0) args.insert(args.end(), {"--clip_tokenizer", path("absent_tokenizer")});
    ProcessResult r = runRunner(args);
    EXPECT_EQ(r.exitCode, 2) << c.name << ":\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.name << " should mention " << c.says << ":\n" << r.err;
  }
  // An output folder that cannot be made (its parent is a file; root can write anywhere else).
  writeText(path("a_file"), "x");
  ProcessResult r = runRunner({"--config_file", writeConfig("unwritable.toml", path("a_file/out"), "max_train_steps = 2\n")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("a_file/out"), std::string::npos) << r.err;
}

// The errors of a run's log ("error ..." from spdlog, with their indented continuation lines).
std::vector<std::string> errorLines(const std::string& log) {
  std::vector<std::string> v;
  std::istringstream in(log);
  bool inError = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("error ", 0) == 0) inError = true;
    else if (line.rfind("  ", 0) != 0) inError = false;
    if (inError) v.push_back(line);
  }
  return v;
}

// Every check a run makes on its config runs before anything is loaded, and --dry_run makes the
// same checks: each bad config is refused by both with exit 2 and the same message.
TEST_F(SdxlLoraRun, DryRunAndRunRefuseTheSameConfigsBeforeLoading) {
  struct Case {
    std::string name, extra;
    std::vector<std::string> overrides;
    std::string says;
  };
  fs::create_directories(path("empty_tokenizer"));
  writeText(path("no_images/10_x/readme.md"), "no images here");
  writeText(path("bad_prompts.txt"), "# samples\na cat --w 1024\na dog --ww 512\n");
  writeText(path("heun_prompts.txt"), "a cat --ss heun\n");
  writeText(path("good_prompts.txt"), "a cat\n");
  writeText(path("color_aug_subset.toml"), "[[datasets]]\nresolution = 128\n[[datasets.subsets]]\nimage_dir = \"" +
                                             path("images/10_demo shapes") + "\"\ncaption_extension = \".txt\"\ncolor_aug = true\n");
  std::vector<Case> cases{
      {"sample_prompts", "sample_prompts = \"" + path("bad_prompts.txt") + "\"\n", {}, "bad_prompts.txt:3: unknown option --ww"},
      {"sample_ss", "sample_prompts = \"" + path("heun_prompts.txt") + "\"\nsample_every_n_steps = 1\n", {},
       "heun_prompts.txt:1: sampler 'heun' is not in this build; it renders with ddim, euler"},
      {"sample_sampler", "sample_prompts = \"" + path("good_prompts.txt") + "\"\nsample_at_first = true\nsample_sampler = \"pndm\"\n", {},
       "sampler 'pndm' is not in this build"},
      {"resolution_zero", "", {"--resolution", "0"}, "positive integers"},
      {"optimizer_nul", "optimizer_type = \"\\u0000\"\n", {}, "optimizer_type"},
      {"optimizer_unknown", "optimizer_type = \"AdEMAMix8bit\"\n", {}, "available: AdamW"},
      {"optimizer_args", "optimizer_args = [\"momentum=0.9\"]\n", {}, "momentum"},
      {"scheduler_unknown", "lr_scheduler = \"cosine_annealing\"\n", {}, "cosine_annealing"},
      {"scheduler_warmup", "lr_scheduler = \"constant\"\nlr_warmup_steps = 10\n", {}, "constant_with_warmup"},
      {"network_args", "network_args = [\"conv_dims=4\"]\n", {}, "conv_dims"},
      {"network_args_flux", "network_args = [\"train_blocks=single\"]\n", {}, "train_blocks is an argument of networks.lora_flux"},
      {"tokenizer_folder", "", {"--clip_tokenizer", path("empty_tokenizer")}, "empty_tokenizer"},
      {"output_name", "", {"--output_name", "../escaped"}, "output_name"},
      {"no_images", "", {"--train_data_dir", path("no_images")}, "no_images"},
      // A subset's color_aug with cached latents: refused before loading, as sd-scripts refuses it.
      {"cache_with_color_aug_subset", "cache_latents = true\n", {"--dataset_config", path("color_aug_subset.toml")},
       "cache_latents cannot be used with color_aug"},
      {"dreambooth_fused_masters",
       "training_type = \"dreambooth\"\nmixed_precision = \"bf16\"\noptimizer_type = \"Adafactor\"\nfused_backward_pass = true\n", {},
       "full_bf16"},
  };
  if (!torch::cuda::is_available()) cases.push_back({"fp16_on_cpu", "mixed_precision = \"fp16\"\n", {}, "needs a CUDA GPU"});
  // fp8_base and fp8_base_unet store the U-Net in float8: refused (not warned about and ignored)
  // where this libtorch has no float8, naming it.
  if (!sinter::models::float8InBuild()) {
    cases.push_back({"fp8_base", "fp8_base = true\n", {}, "fp8_base: this libtorch (" TORCH_VERSION ")"});
    cases.push_back({"fp8_base_unet", "fp8_base_unet = true\n", {}, "this libtorch (" TORCH_VERSION ")"});
  }
  // A DreamBooth run trains the weights fp8_base would store (sdxl_train.py has no fp8_base).
  cases.push_back({"dreambooth_fp8_base_unet", "training_type = \"dreambooth\"\nfp8_base_unet = true\n", {},
                   "fp8_base_unet stores frozen weights; a DreamBooth or fine-tune run trains them"});
  for (const Case& c : cases) {
    const std::string out = path("out_pre_" + c.name);
    std::vector<std::string> args{"--config_file", writeConfig("pre_" + c.name + ".toml", out, "max_train_steps = 2\n" + c.extra)};
    args.insert(args.end(), c.overrides.begin(), c.overrides.end());
    std::vector<std::string> dry = args;
    dry.push_back("--dry_run");
    args.insert(args.end(), {"--events", "jsonl"});
    const ProcessResult checked = runRunner(dry), ran = runRunner(args);
    EXPECT_EQ(checked.exitCode, 2) << c.name << ":\n" << checked.err;
    EXPECT_EQ(ran.exitCode, 2) << c.name << ":\n" << ran.err;
    const std::vector<std::string> errors = errorLines(ran.err);
    ASSERT_FALSE(errors.empty()) << c.name << ":\n" << ran.err;
    EXPECT_EQ(errorLines(checked.err), errors) << c.name;
    EXPECT_NE(ran.err.find(c.says), std::string::npos) << c.name << " should mention " << c.says << ":\n" << ran.err;
    EXPECT_EQ(ran.err.find('\0'), std::string::npos) << c.name;
    // Refused before the model was loaded or anything was written; the app sees it as events.
    EXPECT_EQ(ran.err.find("loading "), std::string::npos) << c.name << ":\n" << ran.err;
    EXPECT_FALSE(fs::exists(out)) << c.name;
    EXPECT_EQ(doneStatus(ran), "failed") << c.name;
  }
  EXPECT_FALSE(fs::exists(path("escaped.safetensors")));
}

std::string readBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// sample_at_first, every 2 steps and at the end: PNGs named as sd-scripts names them, with their
// settings in the PNG, a sample event each; the same seed makes the same image; and training is
// exactly what it is without samples.
TEST_F(SdxlLoraRun, SampleImagesAreMadeWhenAskedAndLeaveTrainingAlone) {
  writeText(path("prompts.txt"), "# two prompts with the same settings, one guided with Euler a between them\n"
                                 "a red square --w 64 --h 96 --d 5 --s 3\n"
                                 "a blue circle --n green --d 6 --s 2 --l 3 --ss euler_a --w 64 --h 64\n"
                                 "a red square --w 64 --h 96 --d 5 --s 3\n");
  const std::string extra = "max_train_steps = 3\n";
  const std::string sampled = writeConfig("sampled.toml", path("out_sampled"), extra + "sample_prompts = \"" + path("prompts.txt") +
                                          "\"\nsample_at_first = true\nsample_every_n_steps = 2\nsample_sampler = \"dpmsolver++\"\n");
  ProcessResult r = runRunner({"--config_file", sampled, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::vector<sinter::events::Sample> samples;
  bool sampleBeforeFirstStep = false, stepSeen = false;
  for (const auto& e : eventsOf(r)) {
    if (std::holds_alternative<sinter::events::Step>(e)) stepSeen = true;
    if (auto s = std::get_if<sinter::events::Sample>(&e)) {
      samples.push_back(*s);
      sampleBeforeFirstStep |= !stepSeen;
    }
  }
  ASSERT_EQ(samples.size(), 6u) << r.err;  // steps 0 and 2, three prompts each; not at the end (step 3), as sd-scripts
  EXPECT_TRUE(sampleBeforeFirstStep);
  const long long steps[] = {0, 0, 0, 2, 2, 2};
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto& s = samples[i];
    EXPECT_EQ(s.step, steps[i]);
    EXPECT_EQ(s.index, static_cast<int>(i % 3));
    EXPECT_EQ(s.prompt, i % 3 == 1 ? "a blue circle" : "a red square");
    EXPECT_EQ(fs::path(s.path).parent_path(), fs::path(path("out_sampled/sample")));
    char prefix[32];
    std::snprintf(prefix, sizeof prefix, "t_%06lld_%02d_", steps[i], static_cast<int>(i % 3));
    const std::string name = fs::path(s.path).filename().string();
    EXPECT_EQ(name.rfind(prefix, 0), 0u) << name;
    EXPECT_EQ(name.substr(name.size() - 6), i % 3 == 1 ? "_6.png" : "_5.png") << name;
    EXPECT_TRUE(fs::exists(s.path)) << s.path;
  }
  const std::string first = readBytes(samples[0].path), blue = readBytes(samples[1].path);
  EXPECT_EQ(first.substr(1, 3), "PNG");
  EXPECT_NE(first.find("a red square\nSteps: 3, Sampler: DPM++ 2M, CFG scale: 7.5, Seed: 5, Size: 64x96"), std::string::npos);
  EXPECT_NE(blue.find("a blue circle\nNegative prompt: green\nSteps: 2, Sampler: Euler a, CFG scale: 3, Seed: 6, Size: 64x64"),
            std::string::npos);
  EXPECT_EQ(readBytes(samples[2].path), first);             // the same prompt and seed: the same image
  EXPECT_NE(readBytes(samples[3].path), first);             // two steps later the LoRA has changed it
  // Training is unchanged by sampling: the same losses and the same LoRA as a run without samples.
  ProcessResult plain = runRunner({"--config_file", writeConfig("unsampled.toml", path("out_unsampled"), extra), "--events", "jsonl"});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  EXPECT_EQ(losses(plain), losses(r));
  EXPECT_TRUE(sameTensors(path("out_sampled/t.safetensors"), path("out_unsampled/t.safetensors"), 0.0));
}

TEST_F(SdxlLoraRun, GradientCheckpointingGivesTheSameRun) {
  const std::string extra = "max_train_steps = 2\nnetwork_train_unet_only = true\n";
  ASSERT_EQ(runRunner({"--config_file", writeConfig("plain.toml", path("out_plain"), extra)}).exitCode, 0);
  ProcessResult r = runRunner({"--config_file", writeConfig("gc.toml", path("out_gc"), extra + "gradient_checkpointing = true\n")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  // Recomputation sums gradients in another order; AdamW's first steps amplify rounding in
  // near-zero gradients, so the runs agree closely rather than bit for bit.
  EXPECT_LT(relativeDifference(path("out_gc/t.safetensors"), path("out_plain/t.safetensors")), 1e-3);
  std::vector<double> plain = losses(runRunner({"--config_file", path("plain.toml"), "--output_dir", path("out_plain2"), "--events", "jsonl"}));
  std::vector<double> gc = losses(runRunner({"--config_file", path("gc.toml"), "--output_dir", path("out_gc2"), "--events", "jsonl"}));
  ASSERT_EQ(plain.size(), 2u);
  ASSERT_EQ(gc.size(), 2u);
  EXPECT_NEAR(plain[0], gc[0], 1e-6);  // the same forward
}

// On a CPU build nothing is captured: a run with every compile option on says so in its plan and
// trains exactly like one with compile off.
TEST_F(SdxlLoraRun, CompileOnTheCpuTrainsExactlyLikeCompileOff) {
  // The caching passes too: compile_vae and compile_text_encoders with cached latents and text.
  const std::string extra = "max_train_steps = 3\nnetwork_train_unet_only = true\ncache_latents = true\ncache_text_encoder_outputs = true\n";
  ProcessResult off = runRunner({"--config_file", writeConfig("c_off.toml", path("out_c_off"), extra), "--events", "jsonl"});
  ASSERT_EQ(off.exitCode, 0) << off.err;
  ProcessResult on = runRunner({"--config_file", writeConfig("c_on.toml", path("out_c_on"), extra + "compile = true\ncompile_mode = \"max-autotune\"\ncompile_fullgraph = true\n"
                                                                                                   "compile_vae = true\ncompile_text_encoders = true\n"),
                                "--events", "jsonl"});
  ASSERT_EQ(on.exitCode, 0) << on.err;
  EXPECT_EQ(losses(on), losses(off));
  EXPECT_EQ(relativeDifference(path("out_c_on/t.safetensors"), path("out_c_off/t.safetensors")), 0.0);
  bool planned = false;
  for (const auto& e : eventsOf(on))
    if (auto p = std::get_if<sinter::events::CompilePlan>(&e)) {
      planned = true;
      EXPECT_TRUE(p->enabled);
      EXPECT_TRUE(p->regions.empty());  // nothing captured here
      bool saysWhy = false;
      bool vaeWhy = false, textWhy = false;
      for (const auto& u : p->unavailable) {
        saysWhy = saysWhy || u.rfind("CUDA graphs: ", 0) == 0;
        vaeWhy = vaeWhy || u.rfind("VAE capture: ", 0) == 0;
        textWhy = textWhy || u.rfind("text encoders capture: ", 0) == 0;
      }
      EXPECT_TRUE(saysWhy);
      EXPECT_TRUE(vaeWhy);
      EXPECT_TRUE(textWhy);
    }
  EXPECT_TRUE(planned);
}

// A step that compile_fullgraph requires captured but that cannot be (the text encoders train) is
// refused before anything loads, by the dry run and the run alike, on a build that captures; a CPU
// build captures nothing, so there it trains eagerly.
TEST_F(SdxlLoraRun, FullgraphWithTextEncoderTrainingIsPlannedAsTheBuildAllows) {
  const std::string cfg = writeConfig("fg.toml", path("out_fg"), "max_train_steps = 1\ncompile = true\ncompile_mode = \"reduce-overhead\"\ncompile_fullgraph = true\n");
  ProcessResult dry = runRunner({"--config_file", cfg, "--dry_run"});
  ProcessResult run = runRunner({"--config_file", cfg});
#if SINTER_WITH_CUDA
  if (dry.exitCode != 0) {
    EXPECT_EQ(dry.exitCode, 2);
    EXPECT_EQ(run.exitCode, 2);
    EXPECT_NE(run.err.find("compile_fullgraph: the training step cannot be captured as one graph: the text encoders train"), std::string::npos) << run.err;
    return;
  }
#endif
  EXPECT_EQ(dry.exitCode, 0) << dry.err;
  EXPECT_NE(dry.out.find("unavailable: CUDA graphs: "), std::string::npos) << dry.out;
  EXPECT_EQ(run.exitCode, 0) << run.err;
}

// profile_steps: a trace of the steps after the first where this libtorch has the Kineto profiler,
// and where it has none (Debian's), a warning naming the option and a run that trains anyway.
TEST_F(SdxlLoraRun, ProfileStepsWritesATraceOrSaysWhyNot) {
  const std::string cfg = writeConfig("prof.toml", path("out_prof"), "max_train_steps = 3\nnetwork_train_unet_only = true\nprofile_steps = 2\n");
  ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const fs::path trace = path("out_prof/t-profile.json");
  std::string warning;
  for (const auto& e : eventsOf(r))
    if (auto w = std::get_if<sinter::events::Warning>(&e))
      if (w->message.find("profile_steps") != std::string::npos) warning = w->message;
  if (fs::exists(trace)) {
    std::ifstream in(trace);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("traceEvents"), std::string::npos);
    bool announced = false;
    for (const auto& e : eventsOf(r))
      if (auto s = std::get_if<sinter::events::Saved>(&e)) announced = announced || (s->kind == "profile" && s->path == trace.string());
    EXPECT_TRUE(announced);
  } else {
    EXPECT_NE(warning.find("without the Kineto profiler"), std::string::npos) << r.err;
  }
  // Not a positive number of steps: refused with the option's name.
  ProcessResult zero = runRunner({"--config_file", cfg, "--profile_steps", "0", "--dry_run"});
  EXPECT_EQ(zero.exitCode, 2);
  EXPECT_NE(zero.err.find("profile_steps"), std::string::npos) << zero.err;
}

TEST_F(SdxlLoraRun, FullDiskFailsCleanlyAndKeepsTheLastGoodSave) {
  // A 64 KiB file system as the output folder: too small for the LoRA file.
  const std::string mnt = path("tiny_fs");
  fs::create_directories(mnt);
  if (::geteuid() != 0 || std::system(("mount -t tmpfs -o size=64k tmpfs '" + mnt + "' 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "needs root and tmpfs mounts to make a full disk";
  const std::string previous = mnt + "/t-step00000001.safetensors";
  writeText(previous, "the last good save");
  ProcessResult r = runRunner({"--config_file", writeConfig("full.toml", mnt, "max_train_steps = 2\nsave_every_n_steps = 1\nnetwork_train_unet_only = true\n")});
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(mnt)) left.push_back(entry.path().filename().string());
  std::string kept;
  {
    std::ifstream in(previous);  // closed before the unmount
    kept.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  EXPECT_EQ(std::system(("umount '" + mnt + "' || umount -l '" + mnt + "'").c_str()), 0);
  EXPECT_EQ(r.exitCode, 1) << r.err;  // it failed during training
  EXPECT_NE(r.err.find("No space left"), std::string::npos) << r.err;
  EXPECT_EQ(kept, "the last good save");
  EXPECT_EQ(left, std::vector<std::string>{"t-step00000001.safetensors"}) << "a half-written file was left behind";
}

// clip_tokenizer unset: the CLIP tokenizer that ships with Sinter (share/sinter/tokenizers/clip beside
// bin/), named by the dry run and the start event; a folder given still wins.
TEST_F(SdxlLoraRun, UnsetClipTokenizerIsTheBundledOne) {
  const std::string given = writeConfig("tokenizer_given.toml", path("out_tokenizer"), "max_train_steps = 1\n");
  std::ifstream in(given);
  std::string text, line;
  while (std::getline(in, line))
    if (line.rfind("clip_tokenizer", 0) != 0) text += line + "\n";
  const std::string unset = path("tokenizer_unset.toml");
  writeText(unset, text);

  ProcessResult dry = runRunner({"--config_file", unset, "--dry_run"});
  ASSERT_EQ(dry.exitCode, 0) << dry.err;
  EXPECT_NE(dry.out.find("# clip_tokenizer: bundled with Sinter ("), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("share/sinter/tokenizers/clip"), std::string::npos) << dry.out;

  auto startTokenizers = [](const ProcessResult& r) {
    for (const auto& l : r.lines())
      if (auto e = sinter::events::parseJsonLine(l))
        if (auto s = std::get_if<sinter::events::Start>(&*e)) return s->tokenizers;
    return std::vector<std::string>{};
  };
  ProcessResult run = runRunner({"--config_file", unset, "--events", "jsonl"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  std::vector<std::string> tokenizers = startTokenizers(run);
  ASSERT_EQ(tokenizers.size(), 1u);
  EXPECT_EQ(tokenizers[0].rfind("clip_tokenizer: bundled with Sinter (", 0), 0u) << tokenizers[0];

  run = runRunner({"--config_file", given, "--events", "jsonl"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  tokenizers = startTokenizers(run);
  ASSERT_EQ(tokenizers.size(), 1u);
  EXPECT_EQ(tokenizers[0], "clip_tokenizer: " + path("tokenizer"));
}

// A logging_dir that is not there yet (kohya_ss presets name such folders) is made when the run
// starts, as output_dir is; the dry run makes nothing; one that cannot be made is refused by both.
TEST_F(SdxlLoraRun, ALoggingDirNotThereYetIsMadeByTheRunNotByTheDryRun) {
  const std::string logs = path("logs/my-run");
  const std::string cfg = writeConfig("logs.toml", path("out_logs"), "max_train_steps = 1\nnetwork_train_unet_only = true\nlogging_dir = \"" +
                                                                          logs + "\"\n");
  const ProcessResult dry = runRunner({"--config_file", cfg, "--dry_run"});
  EXPECT_EQ(dry.exitCode, 0) << dry.err;
  EXPECT_FALSE(fs::exists(path("logs")));
  EXPECT_FALSE(fs::exists(path("out_logs")));
  const ProcessResult r = runRunner({"--config_file", cfg});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(fs::is_directory(logs));
  writeText(path("logs_file"), "x");
  for (const bool dryRun : {true, false}) {
    std::vector<std::string> args{"--config_file", cfg, "--logging_dir", path("logs_file/run")};
    if (dryRun) args.push_back("--dry_run");
    const ProcessResult refused = runRunner(args);
    EXPECT_EQ(refused.exitCode, 2) << refused.err;
    EXPECT_NE(refused.err.find("logging_dir '" + path("logs_file/run") + "' cannot be created: '" + path("logs_file") + "' is not a folder"),
              std::string::npos)
        << refused.err;
  }
}

nlohmann::json dataPositionOf(const std::string& stateFolder) {
  std::ifstream in(fs::path(stateFolder) / "train_state.json");
  return nlohmann::json::parse(in).at("data");
}

// A state records the batch size it was saved with; resumed with another, the run says so (log and
// warning event) and goes on from the same share of the epoch, and its own states record its size.
TEST_F(SdxlLoraRun, AResumeWithAnotherBatchSizeSaysWhatHappensToTheEpoch) {
  const std::string extra = "max_train_steps = 4\nsave_every_n_steps = 2\nsave_state = true\nnetwork_train_unet_only = true\n";
  const std::string bs2 = writeConfig("bs2.toml", path("out_bs2"), extra + "train_batch_size = 2\n");
  ASSERT_EQ(runRunner({"--config_file", bs2}).exitCode, 0);
  const std::string state = path("out_bs2/t-step00000002-state");
  const nlohmann::json saved = dataPositionOf(state);
  EXPECT_EQ(saved.value("train_batch_size", 0), 2);
  EXPECT_EQ(saved.value("index", 0), 2);
  const long long savedBatches = saved.value("batches_per_epoch", 0LL);
  ASSERT_GT(savedBatches, 2);

  auto batchSizeWarnings = [](const ProcessResult& r) {
    std::vector<std::string> v;
    for (const auto& w : eventsOfType<sinter::events::Warning>(r))
      if (w.message.find("train_batch_size") != std::string::npos) v.push_back(w.message);
    return v;
  };
  // The same batch size: nothing to say.
  const ProcessResult same = runRunner({"--config_file", bs2, "--output_dir", path("out_bs2_again"), "--resume", state, "--events", "jsonl"});
  ASSERT_EQ(same.exitCode, 0) << same.err;
  EXPECT_TRUE(batchSizeWarnings(same).empty());

  const ProcessResult r = runRunner({"--config_file", writeConfig("bs1.toml", path("out_bs1"), extra + "train_batch_size = 1\n"), "--resume",
                                     state, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(losses(r).size(), 2u);
  const nlohmann::json resumed = dataPositionOf(path("out_bs1/t-state"));
  EXPECT_EQ(resumed.value("train_batch_size", 0), 1);
  const long long batches = resumed.value("batches_per_epoch", 0LL);
  EXPECT_GT(batches, savedBatches);  // smaller batches, more of them
  const long long from = 2 * batches / savedBatches;  // the same share of the epoch
  EXPECT_EQ(resumed.value("index", 0LL), from + 2);
  const std::vector<std::string> warnings = batchSizeWarnings(r);
  ASSERT_EQ(warnings.size(), 1u) << r.err;
  for (const std::string& says : {"resume: " + state + " was saved with train_batch_size 2 and continues with 1",
                                  "an epoch is now " + std::to_string(batches) + " batches (was " + std::to_string(savedBatches) + ")",
                                  "goes on from batch " + std::to_string(from) + " (was 2)"}) {
    EXPECT_NE(warnings[0].find(says), std::string::npos) << says << "\n" << warnings[0];
    EXPECT_NE(r.err.find(says), std::string::npos) << says << "\n" << r.err;
  }
}

// Continue with changed settings (issue 57 item 5): a state resumed with another learning rate,
// scheduler, step count and dataset repeats goes on from its step and epoch, lists what changed, and
// takes the new values from there; a change the state cannot carry (the rank, a network_args entry
// that shapes the network, the optimizer) is refused by the dry run and the run alike, naming the
// key and both values.
TEST_F(SdxlLoraRun, AStateContinuesWithChangedSettingsAndRefusesWhatItCannotCarry) {
  // 12 images once: an epoch of 3 batches of 4; the state at step 4 is in the second epoch.
  for (const char* repeats : {"1", "2"}) {
    const fs::path dir = path(std::string("images_x") + repeats) + "/" + repeats + "_demo shapes";
    fs::create_directories(dir);
    for (const auto& entry : fs::directory_iterator(path("images") + "/10_demo shapes")) fs::copy_file(entry.path(), dir / entry.path().filename());
  }
  const std::string base = "train_batch_size = 4\nnetwork_train_unet_only = true\nsave_state = true\n";
  const std::string first = writeConfig("changed_a.toml", path("out_changed_a"), base + "max_train_steps = 4\n", path("images_x1"));
  const ProcessResult a = runRunner({"--config_file", first, "--events", "jsonl"});
  ASSERT_EQ(a.exitCode, 0) << a.err;
  const std::string state = path("out_changed_a/t-state");
  const nlohmann::json saved = dataPositionOf(state);
  ASSERT_EQ(saved.value("epoch", -1), 1);
  ASSERT_EQ(saved.value("index", -1), 1);
  ASSERT_EQ(saved.value("batches_per_epoch", 0), 3);

  // Twice the repeats: 6 batches an epoch, the same share of it (1 of 3 -> 2 of 6); cosine from 0.005 over 6 steps.
  const std::string changed = writeConfig("changed_b.toml", path("out_changed_b"),
                                          base + "max_train_steps = 6\nlr_scheduler = \"cosine\"\nresume = \"" + state + "\"\n",
                                          path("images_x2"));
  std::string text;
  {
    std::ifstream in(changed);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  text.replace(text.find("learning_rate = 0.01"), 20, "learning_rate = 0.005");
  writeText(changed, text);
  const ProcessResult dry = runRunner({"--config_file", changed, "--dry_run"});
  ASSERT_EQ(dry.exitCode, 0) << dry.err;
  const ProcessResult b = runRunner({"--config_file", changed, "--events", "jsonl"});
  ASSERT_EQ(b.exitCode, 0) << b.err;
  const auto steps = eventsOfType<sinter::events::Step>(b);
  ASSERT_EQ(steps.size(), 2u) << b.err;
  EXPECT_EQ(steps[0].step, 5);
  EXPECT_EQ(steps[1].step, 6);
  EXPECT_EQ(steps[0].total, 6);
  EXPECT_EQ(steps[0].epoch, 2);  // the second epoch, as the state left it (events count epochs from 1)
  // The schedule reads the optimizer's 4 completed steps: cosine at 4 of 6 is a quarter of the new rate.
  EXPECT_NEAR(steps[0].lr, 0.005 * 0.25, 1e-9);
  expectLogInOrder(b, {"resumed from " + state + " at step 4 (epoch 2) of 6",
                       "resume: 5 settings changed since the state was saved; the step and epoch counts go on from it:"});
  for (const std::string& line : {"train_data_dir: " + path("images_x1") + " -> " + path("images_x2"),
                                  "output_dir: " + path("out_changed_a") + " -> " + path("out_changed_b"), std::string("learning_rate: 0.01 -> 0.005"),
                                  std::string("lr_scheduler: constant -> cosine"), std::string("max_train_steps: 4 -> 6")})
    EXPECT_NE(b.err.find(line), std::string::npos) << line << "\n" << b.err;
  const nlohmann::json resumed = dataPositionOf(path("out_changed_b/t-state"));
  EXPECT_EQ(resumed.value("batches_per_epoch", 0), 6);
  EXPECT_EQ(resumed.value("index", -1), 4);  // batch 2 of the epoch, then two steps
  bool said = false;
  for (const auto& w : eventsOfType<sinter::events::Warning>(b))
    said |= w.message.find("an epoch of 3 batches and this run's has 6 (the dataset's repeats or images changed): it goes on from batch 2 "
                           "(was 1)") != std::string::npos;
  EXPECT_TRUE(said) << b.err;

  // What a state cannot carry: refused before anything loads, by the dry run as by the run.
  for (const auto& [line, says] : std::vector<std::pair<std::string, std::string>>{
           {"network_dim = 8", "network_dim: 4 in the state, 8 now: the state's LoRA has the other rank"},
           {"network_dim = 4\nnetwork_args = [\"conv_dim=2\"]", "network_args.conv_dim: (unset) in the state, 2 now: it shapes the network's tensors"},
           {"network_dim = 4\noptimizer_type = \"Lion\"", "optimizer_type: (unset) in the state, Lion now: the state holds the other optimizer's moments"}}) {
    std::string refused = text;
    refused.replace(refused.find("network_dim = 4"), 15, line);
    const std::string cfg = path("changed_refused.toml");
    writeText(cfg, refused);
    for (const bool dry : {true, false}) {
      std::vector<std::string> args{"--config_file", cfg, "--output_dir", path("out_changed_refused")};
      if (dry) args.push_back("--dry_run");
      const ProcessResult r = runRunner(args);
      EXPECT_EQ(r.exitCode, 2) << line << (dry ? " (dry run)" : "") << "\n" << r.err;
      EXPECT_NE(r.err.find("cannot continue with these changes"), std::string::npos) << r.err;
      EXPECT_NE(r.err.find(says), std::string::npos) << says << "\n" << r.err;
    }
  }
  // Setting it as it was (AdamW by its name, in another case) is no change.
  std::string same = text;
  same.replace(same.find("network_dim = 4"), 15, "network_dim = 4\noptimizer_type = \"adamw\"");
  writeText(path("changed_same.toml"), same);
  EXPECT_EQ(runRunner({"--config_file", path("changed_same.toml"), "--output_dir", path("out_changed_same"), "--dry_run"}).exitCode, 0);
}

// Two runs into one output_dir and output_name: the second is refused at start (exit 2, naming the
// lock file and the first run's pid) while the first trains; a dry run takes no lock, and a run with
// another output_name trains beside it. The lock file goes when the first run stops.
TEST_F(SdxlLoraRun, ASecondRunIntoTheSameOutputIsRefusedWhileTheFirstRuns) {
  const std::string cfg = writeConfig("busy.toml", path("out_busy"), "max_train_steps = 100000\nnetwork_train_unet_only = true\n");
  std::atomic<bool> training{false}, finished{false}, othersDone{false};
  std::atomic<pid_t> firstPid{-1};
  ProcessResult first;
  std::thread firstRun([&] {
    first = runRunner({"--config_file", cfg, "--events", "jsonl"}, [&](const std::string& line) {
      if (!training && line.find("\"type\":\"step\"") != std::string::npos) {
        firstPid = lastRunnerPid();
        training = true;
      }
      return !othersDone.load();
    });
    finished = true;
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (!training && !finished && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (!training) {
    othersDone = true;
    firstRun.join();
    FAIL() << "the first run did not start training:\n" << first.err;
  }
  const ProcessResult second = runRunner({"--config_file", cfg, "--max_train_steps", "2", "--events", "jsonl"});
  const ProcessResult dry = runRunner({"--config_file", cfg, "--dry_run"});
  const ProcessResult other = runRunner({"--config_file", cfg, "--max_train_steps", "1", "--output_name", "t2"});
  othersDone = true;
  firstRun.join();

  EXPECT_EQ(second.exitCode, 2) << second.err;
  EXPECT_NE(second.err.find("another run is writing output_name 't' into output_dir '" + path("out_busy") + "': '" +
                            path("out_busy/t.lock") + "' is locked by another run (pid " + std::to_string(firstPid) + ")"),
            std::string::npos)
      << second.err;
  EXPECT_EQ(doneStatus(second), "failed");
  EXPECT_EQ(second.err.find("loading "), std::string::npos) << second.err;  // refused before the models load
  EXPECT_EQ(dry.exitCode, 0) << dry.err;
  EXPECT_EQ(other.exitCode, 0) << other.err;
  EXPECT_TRUE(fs::exists(path("out_busy/t2.safetensors")));
  EXPECT_EQ(first.exitCode, 0) << first.err;
  EXPECT_EQ(doneStatus(first), "stopped");
  EXPECT_FALSE(fs::exists(path("out_busy/t.lock")));
  EXPECT_FALSE(fs::exists(path("out_busy/t2.lock")));
}

// A lock file that nobody holds (its run was killed) is taken over with a warning naming the pid it
// held; a run that fails after taking the lock removes it too.
TEST_F(SdxlLoraRun, ALockFileLeftByADeadRunIsTakenOverWithAWarning) {
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_GT(dead, 0);
  ::waitpid(dead, nullptr, 0);
  const std::string lock = path("out_stale/t.lock");
  writeText(lock, std::to_string(dead) + "\n");
  const std::string cfg = writeConfig("stale.toml", path("out_stale"), "max_train_steps = 1\nnetwork_train_unet_only = true\n");
  const ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::vector<std::string> warnings;
  for (const auto& w : eventsOfType<sinter::events::Warning>(r))
    if (w.message.find(lock) != std::string::npos) warnings.push_back(w.message);
  ASSERT_EQ(warnings.size(), 1u) << r.err;
  EXPECT_NE(warnings[0].find("was left by pid " + std::to_string(dead)), std::string::npos) << warnings[0];
  EXPECT_NE(r.err.find("was left by pid " + std::to_string(dead)), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(lock));
  // A state folder that holds no state passes the checks and fails once the run has started.
  fs::create_directories(path("not_a_state"));
  const ProcessResult failed = runRunner({"--config_file", cfg, "--resume", path("not_a_state")});
  EXPECT_EQ(failed.exitCode, 2) << failed.err;
  EXPECT_NE(failed.err.find("not_a_state"), std::string::npos) << failed.err;
  EXPECT_FALSE(fs::exists(lock));
  // A second stop signal ends the run at once, from the signal handler: the file goes too.
  bool signalled = false;
  const ProcessResult abrupt = runRunner({"--config_file", cfg, "--max_train_steps", "100000", "--events", "jsonl"}, [&](const std::string& line) {
    if (!signalled && line.find("\"type\":\"step\"") != std::string::npos) {
      ::kill(lastRunnerPid(), SIGINT);
      ::kill(lastRunnerPid(), SIGTERM);
      signalled = true;
    }
    return true;
  });
  EXPECT_TRUE(signalled);
  EXPECT_EQ(abrupt.exitCode, 1) << abrupt.err;
  EXPECT_NE(abrupt.err.find("second stop signal, exiting without saving"), std::string::npos) << abrupt.err;
  EXPECT_FALSE(fs::exists(lock));
}

// With float8 in this libtorch, fp8_base trains the SDXL LoRA with the U-Net stored in float8 (the
// log says so; no warning that it is ignored) and fp8_base_unet keeps the text encoders as they were;
// where it has none, DryRunAndRunRefuseTheSameConfigsBeforeLoading checks the refusal.
TEST_F(SdxlLoraRun, Fp8BaseTrainsWithTheUnetInFloat8) {
  if (!sinter::models::float8InBuild()) GTEST_SKIP() << "this libtorch (" TORCH_VERSION ") has no float8";
  for (const std::string key : {"fp8_base", "fp8_base_unet"}) {
    const ProcessResult r = runRunner({"--config_file", writeConfig(key + ".toml", path("out_" + key), "max_train_steps = 3\n" + key + " = true\n"),
                                       "--events", "jsonl"});
    ASSERT_EQ(r.exitCode, 0) << key << ":\n" << r.err;
    EXPECT_NE(r.err.find(key + ": the U-Net's Linear and Conv2d weights stored as float8 e4m3"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(key == "fp8_base" ? "the text encoders' Linear weights too" : "the text encoders stay in the weight dtype"),
              std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("is in this build for"), std::string::npos) << r.err;
    for (double loss : losses(r)) EXPECT_TRUE(std::isfinite(loss)) << key;
    EXPECT_TRUE(fs::exists(path("out_" + key + "/t.safetensors"))) << key;
  }
}

// The start is staged (train/sdxl/sdxl_family.h): a LoRA run places its U-Net only after the caches
// are built, the VAE while latents are cached and the text encoders while their outputs are (each
// back in host memory after); a caching stage moves its models only when something is encoded. On
// the CPU nothing moves, so the log's order is what shows it. The losses do not depend on where the
// caches came from, and a fine-tune run's trained U-Net is placed before the caches.
TEST_F(SdxlLoraRun, TheStartPlacesTheUnetAfterTheCaches) {
  // Its own images: the caches on disk are this test's alone.
  const std::string images = path("images_staged");
  fs::copy(path("images"), images, fs::copy_options::recursive);
  const std::string extra = "max_train_steps = 3\nnetwork_train_unet_only = true\ncache_latents_to_disk = true\n"
                            "cache_text_encoder_outputs_to_disk = true\n";
  const ProcessResult first = runRunner({"--config_file", writeConfig("staged.toml", path("out_staged"), extra, images), "--events", "jsonl"});
  ASSERT_EQ(first.exitCode, 0) << first.err;
  expectLogInOrder(first, {"caching latents", "placing the VAE on cpu for caching", "latents: ", "caching text encoder outputs",
                "placing CLIP-L and OpenCLIP bigG on cpu for caching", "text encoder outputs: ", "placing the SDXL U-Net on cpu"});
  EXPECT_EQ(first.err.find("placing the SDXL U-Net"), first.err.rfind("placing the SDXL U-Net")) << first.err;
  // Latents and text outputs read whole from disk (the tiny VAE's own factor, 2, not SDXL's 8): their
  // stages move nothing, and the steps are the same.
  const ProcessResult again = runRunner({"--config_file", writeConfig("staged2.toml", path("out_staged2"), extra, images), "--events", "jsonl"});
  ASSERT_EQ(again.exitCode, 0) << again.err;
  EXPECT_EQ(again.err.find("OpenCLIP bigG on cpu for caching"), std::string::npos) << again.err;
  EXPECT_EQ(again.err.find("placing the VAE on cpu for caching"), std::string::npos) << again.err;
  expectLogInOrder(again, {"latents: 0 encoded", "text encoder outputs: 0 encoded", "placing the SDXL U-Net on cpu"});
  ASSERT_EQ(losses(first).size(), 3u);
  EXPECT_EQ(losses(again), losses(first));
  // Without cached text outputs the encoders stay for the steps: placed after the latents, not for caching.
  const ProcessResult uncached = runRunner(
      {"--config_file", writeConfig("staged_te.toml", path("out_staged_te"), "max_train_steps = 1\ncache_latents = true\n", images),
       "--events", "jsonl"});
  ASSERT_EQ(uncached.exitCode, 0) << uncached.err;
  EXPECT_EQ(uncached.err.find("OpenCLIP bigG on"), std::string::npos) << uncached.err;
  expectLogInOrder(uncached, {"latents: ", "placing the SDXL U-Net on cpu"});
  // A fine-tune run trains its U-Net: on the device before the method attaches, so before the caches.
  const ProcessResult finetune = runRunner(
      {"--config_file", writeConfig("staged_ft.toml", path("out_staged_ft"), "training_type = \"finetune\"\nmax_train_steps = 1\ncache_latents = true\n", images),
       "--events", "jsonl"});
  ASSERT_EQ(finetune.exitCode, 0) << finetune.err;
  expectLogInOrder(finetune, {"placing the SDXL U-Net on cpu", "caching latents", "placing the VAE on cpu for caching", "latents: "});
}
