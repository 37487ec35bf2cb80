// LyCORIS networks (network_module = "lycoris.kohya") end to end through the real sinter-runner
// on the tiny SDXL checkpoint, on the CPU: each algorithm trains, saves LyCORIS's keys and the
// saved file loads back as network_weights; a resume continues exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "io/safetensors.h"
#include "runner_process.h"
#include "safetensors_compare.h"

namespace fs = std::filesystem;
using sinter::test::ProcessResult;
using sinter::test::runRunner;
using sinter::test::writeText;
using sinter::test::sameTensors;
using sinter::test::losses;

namespace {

fs::path g_root;

std::string path(const std::string& rel) { return (g_root / rel).string(); }

std::string writeConfig(const std::string& name, const std::string& outputDir, const std::string& extra) {
  const std::string text = "model_family = \"sdxl\"\n"
                           "pretrained_model_name_or_path = \"" + path("tiny_sdxl.safetensors") + "\"\n"
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
                           "network_module = \"lycoris.kohya\"\n"
                           "network_dim = 4\n"
                           "network_alpha = 2.0\n"
                           "learning_rate = 0.01\n"
                           "seed = 7\n" + extra;
  const std::string p = path(name);
  writeText(p, text);
  return p;
}

class LycorisRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_lycoris_run_" + std::to_string(::getpid()));
    fs::create_directories(g_root);
    ASSERT_EQ(runRunner({"--init_checkpoint", path("tiny_sdxl.safetensors"), "--model_family", "sdxl", "--model_size", "tiny", "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_dataset", path("images"), "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_tokenizer", path("tokenizer")}).exitCode, 0);
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

}  // namespace

TEST_F(LycorisRun, EachAlgorithmTrainsSavesLycorisKeysAndReloads) {
  struct Algo {
    std::string name, args, key;  // key: one tensor name LyCORIS gives the attn1.to_q module
  };
  const std::vector<Algo> algos{
      {"locon", "\"algo=locon\", \"conv_dim=2\", \"conv_alpha=1\"", "lora_up.weight"},
      {"loha", "\"algo=loha\", \"dora_wd=True\"", "hada_w1_a"},
      {"lokr", "\"algo=lokr\", \"factor=4\", \"use_scalar=True\"", "lokr_w1"},
      {"ia3", "\"algo=ia3\", \"preset=attn-mlp\"", "on_input"},
      {"full", "\"algo=full\", \"preset=attn-only\", \"rank_dropout=0.1\"", "diff"},
  };
  for (const Algo& a : algos) {
    SCOPED_TRACE(a.name);
    const std::string out = path("out_" + a.name);
    const std::string cfg = writeConfig(a.name + ".toml", out, "max_train_steps = 3\nnetwork_args = [" + a.args + "]\n");
    ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::vector<double> l = losses(r);
    ASSERT_EQ(l.size(), 3u);
    for (double x : l) EXPECT_TRUE(std::isfinite(x));
    const std::string file = out + "/t.safetensors";
    sinter::io::SafetensorsFile f(file);
    bool found = false, te = false;
    for (const auto& k : f.keys()) {
      found |= k.find("_transformer_blocks_0_attn1_to_q." + a.key) != std::string::npos;
      te |= k.rfind("lora_te1_", 0) == 0;
    }
    EXPECT_TRUE(found) << a.key;
    EXPECT_TRUE(te);  // the text encoders' attention (and MLP) modules too
    EXPECT_EQ(f.metadata().at("ss_network_module"), "lycoris.kohya");
    EXPECT_NE(f.metadata().at("ss_network_args").find("\"algo\": \"" + a.name + "\""), std::string::npos);
    // The file loads back into a run of the same settings.
    const std::string again = writeConfig(a.name + "_again.toml", path("again_" + a.name),
                                          "max_train_steps = 1\nnetwork_args = [" + a.args + "]\nnetwork_weights = \"" + file + "\"\n");
    ProcessResult r2 = runRunner({"--config_file", again});
    ASSERT_EQ(r2.exitCode, 0) << r2.err;
    EXPECT_NE(r2.err.find("network_weights: "), std::string::npos) << r2.err;
    EXPECT_EQ(r2.err.find("network_weights: 0 modules"), std::string::npos) << r2.err;
  }
}

// What the build does not train is refused before anything loads, naming the key.
TEST_F(LycorisRun, UntrainedChoicesAreRefusedByTheDryRun) {
  for (const auto& [extra, says] : std::vector<std::pair<std::string, std::string>>{
           {"network_args = [\"algo=dylora\"]\n", "algo=dylora"},
           {"network_args = [\"algo=loha\", \"train_norm=True\"]\n", "train_norm"},
           {"network_args = [\"algo=full\", \"bypass_mode=True\"]\n", "bypass_mode"},
           {"network_args = [\"algo=lokr\", \"block_dims=1\"]\n", "block_dims"},
           {"network_weights = \"" + path("tiny_sdxl.safetensors") + "\"\ndim_from_weights = true\n", "dim_from_weights"}}) {
    ProcessResult r = runRunner({"--config_file", writeConfig("refused.toml", path("out_refused"), extra), "--dry_run"});
    EXPECT_EQ(r.exitCode, 2) << extra << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  }
}

TEST_F(LycorisRun, ResumeContinuesExactly) {
  const std::string extra = "max_train_steps = 4\nsave_every_n_steps = 2\nsave_state = true\n"
                            "network_args = [\"algo=lokr\", \"factor=4\", \"use_scalar=True\", \"dora_wd=True\"]\n";
  ASSERT_EQ(runRunner({"--config_file", writeConfig("straight.toml", path("out_straight"), extra)}).exitCode, 0);
  ASSERT_TRUE(fs::exists(path("out_straight/t-step00000002-state")));
  const std::string resumed =
      writeConfig("resumed.toml", path("out_resumed"), extra + "resume = \"" + path("out_straight/t-step00000002-state") + "\"\n");
  ProcessResult r = runRunner({"--config_file", resumed, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(losses(r).size(), 2u);
  EXPECT_TRUE(sameTensors(path("out_straight/t.safetensors"), path("out_resumed/t.safetensors"), 1e-6));
}

// gradient_accumulation_steps 2: LoHa's and DoRA's deltas are built once per step. The run trains
// as one that rebuilds them in every forward pass (gradient checkpointing keeps that path; it
// changes no values), and a resume from its state continues exactly.
TEST_F(LycorisRun, AccumulatedStepsBuildTheDeltaOncePerStep) {
  const std::string extra = "max_train_steps = 2\ngradient_accumulation_steps = 2\noptimizer_type = \"SGDNesterov\"\n"
                            "network_args = [\"algo=loha\", \"dora_wd=True\", \"conv_dim=2\"]\n";
  ProcessResult once = runRunner({"--config_file", writeConfig("accum_once.toml", path("out_accum_once"), extra)});
  ASSERT_EQ(once.exitCode, 0) << once.err;
  EXPECT_NE(once.err.find("deltas built once per step"), std::string::npos) << once.err;
  ProcessResult each = runRunner(
      {"--config_file", writeConfig("accum_each.toml", path("out_accum_each"), extra + "gradient_checkpointing = true\n")});
  ASSERT_EQ(each.exitCode, 0) << each.err;
  EXPECT_NE(each.err.find("rebuilt in every forward pass"), std::string::npos) << each.err;
  EXPECT_TRUE(sameTensors(path("out_accum_once/t.safetensors"), path("out_accum_each/t.safetensors"), 1e-5));

  const std::string stateful = "max_train_steps = 4\nsave_every_n_steps = 2\nsave_state = true\ngradient_accumulation_steps = 2\n"
                               "network_args = [\"algo=lokr\", \"factor=4\", \"dora_wd=True\"]\n";
  ASSERT_EQ(runRunner({"--config_file", writeConfig("accum_straight.toml", path("out_accum_straight"), stateful)}).exitCode, 0);
  const std::string resumed = writeConfig("accum_resumed.toml", path("out_accum_resumed"),
                                          stateful + "resume = \"" + path("out_accum_straight/t-step00000002-state") + "\"\n");
  ProcessResult r = runRunner({"--config_file", resumed});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(sameTensors(path("out_accum_straight/t.safetensors"), path("out_accum_resumed/t.safetensors"), 1e-6));
}

namespace {

std::string writeFluxConfig(const std::string& name, const std::string& outputDir, const std::string& extra) {
  std::string text = "model_family = \"flux\"\n"
                     "pretrained_model_name_or_path = \"" + path("flux/flux1-dev.safetensors") + "\"\n"
                     "ae = \"" + path("flux/ae.safetensors") + "\"\n"
                     "clip_l = \"" + path("flux/clip_l.safetensors") + "\"\n"
                     "t5xxl = \"" + path("flux/t5xxl_fp16.safetensors") + "\"\n"
                     "clip_tokenizer = \"" + path("tokenizer") + "\"\n"
                     "t5_tokenizer = \"" + path("tokenizer") + "\"\n"
                     "t5xxl_max_token_length = 16\n"
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
                     "network_module = \"lycoris.kohya\"\n"
                     "network_dim = 4\n"
                     "network_alpha = 2.0\n"
                     "learning_rate = 0.01\n"
                     "seed = 7\n" + extra;
  const std::string p = path(name);
  writeText(p, text);
  return p;
}

class LycorisFluxRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_lycoris_flux_run_" + std::to_string(::getpid()));
    fs::create_directories(g_root);
    ASSERT_EQ(runRunner({"--init_checkpoint", path("flux/flux1-dev.safetensors"), "--model_family", "flux", "--model_size", "tiny",
                         "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_dataset", path("images"), "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_tokenizer", path("tokenizer")}).exitCode, 0);
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

}  // namespace

// FLUX: the transformer's double and single blocks and CLIP-L (lora_te1_) take LyCORIS modules;
// attn-only keeps the double blocks' SelfAttentions only.
TEST_F(LycorisFluxRun, LohaAndAttnOnlyLokrTrainAndReload) {
  const std::string args = "network_args = [\"algo=loha\", \"dora_wd=True\"]\n";
  ProcessResult r = runRunner({"--config_file", writeFluxConfig("loha.toml", path("out_loha"), "max_train_steps = 2\n" + args),
                               "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  for (double x : losses(r)) EXPECT_TRUE(std::isfinite(x));
  const std::string file = path("out_loha/t.safetensors");
  {
    sinter::io::SafetensorsFile f(file);
    for (const char* key : {"lora_unet_double_blocks_0_img_attn_qkv.hada_w1_a", "lora_unet_double_blocks_0_txt_mlp_2.dora_scale",
                            "lora_unet_single_blocks_0_linear1.hada_w2_b", "lora_unet_single_blocks_0_modulation_lin.alpha",
                            "lora_te1_text_model_encoder_layers_0_self_attn_q_proj.hada_w1_b"})
      EXPECT_NO_THROW(f.tensor(key)) << key;
    EXPECT_EQ(f.metadata().at("ss_network_module"), "lycoris.kohya");
  }
  ProcessResult again = runRunner({"--config_file", writeFluxConfig("loha_again.toml", path("again_loha"),
                                                                    "max_train_steps = 1\n" + args + "network_weights = \"" + file + "\"\n")});
  ASSERT_EQ(again.exitCode, 0) << again.err;
  EXPECT_EQ(again.err.find("network_weights: 0 modules"), std::string::npos) << again.err;

  ProcessResult attn = runRunner({"--config_file", writeFluxConfig("attn.toml", path("out_attn"),
                                                                   "max_train_steps = 1\nnetwork_train_unet_only = true\n"
                                                                   "network_args = [\"algo=lokr\", \"preset=attn-only\"]\n")});
  ASSERT_EQ(attn.exitCode, 0) << attn.err;
  sinter::io::SafetensorsFile f(path("out_attn/t.safetensors"));
  for (const auto& k : f.keys()) {
    EXPECT_EQ(k.rfind("lora_unet_double_blocks_", 0), 0u) << k;
    EXPECT_TRUE(k.find("_img_attn_") != std::string::npos || k.find("_txt_attn_") != std::string::npos) << k;
  }
}
