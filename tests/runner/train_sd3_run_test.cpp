// SD 3.x training end to end through the real sinter-runner on a tiny random SD 3.5 Medium file
// (MMDiT-X, VAE, CLIP-L and CLIP-G inside, T5-XXL beside it) and a generated dataset, on the CPU:
// LoRA as sd3_train_network.py trains it (networks.lora_sd3's modules on the MMDiT and both CLIPs,
// its metadata), resume continuing exactly, the family told from the file's keys, cached outputs
// with sd-scripts' partial cache, the caption dropouts, samples, DreamBooth and fine-tune saving the
// checkpoint's layout, and what is refused refused by the dry run and the run alike.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "distributed/process_group.h"
#include "io/safetensors.h"
#include "runner_process.h"
#include "safetensors_compare.h"

namespace fs = std::filesystem;
using sinter::test::losses;
using sinter::test::ProcessResult;
using sinter::test::runRunner;
using sinter::test::sameTensors;
using sinter::test::writeText;

namespace {

fs::path g_root;

std::string path(const std::string& rel) { return (g_root / rel).string(); }

std::string writeConfig(const std::string& name, const std::string& outputDir, const std::string& extra) {
  std::string text = "pretrained_model_name_or_path = \"" + path("sd3/sd3.safetensors") + "\"\n"
                     "t5xxl = \"" + path("sd3/t5xxl_fp16.safetensors") + "\"\n"
                     "t5_tokenizer = \"" + path("tokenizer") + "\"\n"
                     "train_data_dir = \"" + path("images") + "\"\n"
                     "output_dir = \"" + outputDir + "\"\n"
                     "output_name = \"s\"\n"
                     "resolution = \"128,128\"\n"
                     "caption_extension = \".txt\"\n"
                     "max_data_loader_n_workers = 0\n"
                     "network_dim = 4\n"
                     "network_alpha = 4.0\n"
                     "learning_rate = 0.01\n"
                     "t5xxl_max_token_length = 16\n"
                     "seed = 7\n" + extra;
  const std::string p = path(name);
  writeText(p, text);
  return p;
}

std::set<std::string> modulesOf(const std::string& file) {
  std::set<std::string> modules;
  for (const std::string& k : sinter::io::SafetensorsFile(file).keys()) modules.insert(k.substr(0, k.find('.')));
  return modules;
}

size_t countWithPrefix(const std::set<std::string>& modules, const std::string& prefix) {
  size_t n = 0;
  for (const std::string& m : modules) n += m.rfind(prefix, 0) == 0;
  return n;
}

class Sd3Run : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_sd3_run_" + std::to_string(::getpid()));
    fs::create_directories(g_root);
    ASSERT_EQ(runRunner({"--init_checkpoint", path("sd3/sd3.safetensors"), "--model_family", "sd3", "--model_size", "tiny", "--seed", "3"})
                  .exitCode,
              0);
    ASSERT_EQ(runRunner({"--init_dataset", path("images"), "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_tokenizer", path("tokenizer")}).exitCode, 0);
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

}  // namespace

TEST_F(Sd3Run, InitCheckpointWritesSd35MediumWithBothClipsAndT5Beside) {
  const sinter::io::SafetensorsFile f(path("sd3/sd3.safetensors"));
  for (const char* key : {"model.diffusion_model.joint_blocks.0.x_block.attn2.qkv.weight", "model.diffusion_model.pos_embed",
                          "first_stage_model.encoder.conv_in.weight", "text_encoders.clip_l.transformer.text_projection.weight",
                          "text_encoders.clip_g.transformer.text_model.final_layer_norm.weight"})
    EXPECT_TRUE(f.has(key)) << key;
  EXPECT_EQ(f.metadata().at("modelspec.architecture"), "stable-diffusion-3-5-medium");
  EXPECT_TRUE(fs::exists(path("sd3/t5xxl_fp16.safetensors")));
  // The LoRA listing from the configs alone: the MMDiT's 19 modules (block 0: 7 in x with attn2 + 5 in
  // context; block 1, the last: 5 + 2) and 6 per CLIP layer (2 in CLIP-L, 3 in CLIP-G).
  const ProcessResult layout = runRunner({"--print_lora_layout", "--model_family", "sd3", "--model_size", "tiny"});
  ASSERT_EQ(layout.exitCode, 0) << layout.err;
  EXPECT_NE(layout.out.find("lora_unet_joint_blocks_0_x_block_attn2_qkv"), std::string::npos) << layout.out;
  EXPECT_NE(layout.out.find("lora_te2_text_model_encoder_layers_2_mlp_fc2"), std::string::npos);
}

TEST_F(Sd3Run, LoraTrainsTheMmditAndBothClipsAndResumesExactly) {
  const std::string extra = "model_family = \"sd3\"\nmax_train_steps = 6\nsave_every_n_steps = 3\nsave_state = true\n";
  const ProcessResult straight = runRunner({"--config_file", writeConfig("straight.toml", path("out_straight"), extra)});
  ASSERT_EQ(straight.exitCode, 0) << straight.err;
  const std::set<std::string> modules = modulesOf(path("out_straight/s.safetensors"));
  EXPECT_EQ(countWithPrefix(modules, "lora_unet_"), 19u);
  EXPECT_EQ(countWithPrefix(modules, "lora_te1_"), 2u * 6);
  EXPECT_EQ(countWithPrefix(modules, "lora_te2_"), 3u * 6);
  EXPECT_EQ(countWithPrefix(modules, "lora_te3_"), 0u);  // T5-XXL only with train_t5xxl=True
  EXPECT_TRUE(modules.count("lora_unet_joint_blocks_1_context_block_adaLN_modulation_1"));
  EXPECT_FALSE(modules.count("lora_unet_joint_blocks_1_context_block_attn_proj"));  // pre_only
  const sinter::io::SafetensorsFile saved(path("out_straight/s.safetensors"));
  const auto& m = saved.metadata();
  EXPECT_EQ(m.at("ss_network_module"), "networks.lora_sd3");
  EXPECT_EQ(m.at("ss_base_model_version"), "5-medium");
  EXPECT_EQ(m.at("modelspec.architecture"), "stable-diffusion-3-5-medium/lora");
  EXPECT_EQ(m.at("ss_weighting_scheme"), "uniform");
  EXPECT_EQ(m.at("ss_apply_lg_attn_mask"), "False");

  const std::string resumed =
      writeConfig("resumed.toml", path("out_resumed"), extra + "resume = \"" + path("out_straight/s-step00000003-state") + "\"\n");
  const ProcessResult r = runRunner({"--config_file", resumed, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(losses(r).size(), 3u);
  EXPECT_TRUE(sameTensors(path("out_straight/s.safetensors"), path("out_resumed/s.safetensors"), 0.0));
}

// Several GPUs (here two CPU ranks over Gloo): the MMDiT's and both CLIPs' LoRA trained data parallel,
// the weights identical on both ranks after every step, one set of files.
TEST_F(Sd3Run, TwoRanksTrainTheSameWeights) {
  if (!sinter::distributed::distributedCompiledIn()) GTEST_SKIP() << "this libtorch has no c10d process groups (Gloo)";
  const std::string cfg = writeConfig("ranks.toml", path("out_ranks"), "model_family = \"sd3\"\nmax_train_steps = 2\n");
  const ProcessResult r = runRunner({"--config_file", cfg, "--nproc_per_node", "2"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("the trained weights are identical on all 2 ranks"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(path("out_ranks/s.safetensors")));
}

// No model_family: the file's keys say SD 3. Everything cached with the U-Net alone training, the
// options of sd-scripts' SD 3 scripts on, samples at the end.
TEST_F(Sd3Run, DetectedFromItsKeysWithCachedOutputsDropoutsAndSamples) {
  writeText(path("prompts.txt"), "a red square --n blurry --l 4 --s 3 --w 64 --h 64\n");
  const std::string extra = "max_train_steps = 3\ncache_latents = true\ncache_text_encoder_outputs = true\nnetwork_train_unet_only = true\n"
                            "clip_l_dropout_rate = 0.5\nclip_g_dropout_rate = 0.5\nt5_dropout_rate = 0.3\npos_emb_random_crop_rate = 0.5\n"
                            "weighting_scheme = \"logit_normal\"\ntraining_shift = 3.0\ngradient_checkpointing = true\napply_t5_attn_mask = true\n"
                            "sample_every_n_steps = 3\nsample_prompts = \"" + path("prompts.txt") + "\"\n";
  const ProcessResult r = runRunner({"--config_file", writeConfig("detected.toml", path("out_detected"), extra), "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("SD 3 MMDiT (5-medium)"), std::string::npos) << r.err;
  for (double loss : losses(r)) EXPECT_TRUE(std::isfinite(loss));
  const std::set<std::string> modules = modulesOf(path("out_detected/s.safetensors"));
  EXPECT_EQ(countWithPrefix(modules, "lora_unet_"), modules.size());
  size_t samples = 0;
  for (const auto& e : fs::directory_iterator(path("out_detected/sample"))) samples += e.path().extension() == ".png";
  EXPECT_EQ(samples, 1u);
}

// sd-scripts' partial cache: T5-XXL's outputs cached while the CLIPs' LoRA trains in the step; no
// model_family: the config is validated as the family the checkpoint shows.
TEST_F(Sd3Run, PartialCacheTrainsTheClipsWithT5Cached) {
  const ProcessResult r = runRunner({"--config_file", writeConfig("partial.toml", path("out_partial"),
                                                                  "max_train_steps = 2\ncache_text_encoder_outputs = true\n")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("sd-scripts' partial cache"), std::string::npos) << r.err;
  EXPECT_EQ(countWithPrefix(modulesOf(path("out_partial/s.safetensors")), "lora_te2_"), 3u * 6);
}

// apply_lg_attn_mask (the CLIPs' padding masked in their attention, the CLIPs' LoRA training),
// enable_scaled_pos_embed (the position table scaled to the 128 px resolution) and fp8_base (the
// MMDiT's Linear weights in float8): each changes the first step's loss from the same seed's plain run,
// and the metadata says which ran.
TEST_F(Sd3Run, LgAttentionMaskScaledPositionsAndFp8BaseChangeTheStep) {
  struct Variant {
    std::string name, extra;
  };
  const std::vector<Variant> variants{{"plain", ""}, {"lg_mask", "apply_lg_attn_mask = true\n"},
                                      {"scaled_pos", "enable_scaled_pos_embed = true\npos_emb_random_crop_rate = 0.5\n"},
                                      {"fp8_base", "fp8_base = true\n"}};
  std::vector<double> first;
  for (const Variant& v : variants) {
    const std::string out = path("out_variant_" + v.name);
    const ProcessResult r = runRunner({"--config_file", writeConfig("variant_" + v.name + ".toml", out,
                                                                    "model_family = \"sd3\"\nmax_train_steps = 1\n" + v.extra),
                                       "--events", "jsonl"});
    if (v.name == "fp8_base" && r.err.find("has no float8 type") != std::string::npos) {
      EXPECT_EQ(r.exitCode, 2);  // a libtorch before 2.1 (CI's Debian one): refused by name before loading
      first.push_back(std::nan(""));
      continue;
    }
    ASSERT_EQ(r.exitCode, 0) << v.name << "\n" << r.err;
    ASSERT_FALSE(losses(r).empty()) << v.name;
    first.push_back(losses(r).front());
    const auto metadata = sinter::io::SafetensorsFile(out + "/s.safetensors").metadata();
    EXPECT_EQ(metadata.at("ss_apply_lg_attn_mask"), v.name == "lg_mask" ? "True" : "False") << v.name;
    if (v.name == "scaled_pos")
      EXPECT_NE(r.err.find("scaled position embeddings for the resolutions 128x128 (latent sizes 16)"), std::string::npos) << r.err;
    if (v.name == "fp8_base") EXPECT_NE(r.err.find("fp8_base: the MMDiT's"), std::string::npos) << r.err;
  }
  EXPECT_NE(first[1], first[0]);
  EXPECT_NE(first[2], first[0]);
  if (!std::isnan(first[3])) EXPECT_NE(first[3], first[0]);  // the MMDiT's weights rounded to float8
}

// sd3_medium_incl_clips_t5xxlfp16: T5-XXL under text_encoders.t5xxl.transformer. is read from the
// checkpoint (t5xxl unset), and trains as the same weights given apart do.
TEST_F(Sd3Run, T5xxlInsideTheCheckpointNeedsNoT5xxlFile) {
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  const sinter::io::SafetensorsFile sd3(path("sd3/sd3.safetensors")), t5(path("sd3/t5xxl_fp16.safetensors"));
  for (const std::string& key : sd3.keys()) tensors.emplace_back(key, sd3.tensor(key));
  for (const std::string& key : t5.keys()) tensors.emplace_back("text_encoders.t5xxl.transformer." + key, t5.tensor(key));
  sinter::io::writeSafetensors(path("sd3/sd3_incl_t5.safetensors"), tensors);
  std::vector<double> first;
  for (const bool inside : {false, true}) {
    const std::string name = inside ? "incl_t5" : "apart_t5", out = path("out_" + name);
    std::string config = writeConfig(name + ".toml", out, "model_family = \"sd3\"\nmax_train_steps = 1\n");
    if (inside) {
      std::string text = sinter::test::readText(config);
      text.replace(text.find("pretrained_model_name_or_path"), text.find('\n') + 1,
                   "pretrained_model_name_or_path = \"" + path("sd3/sd3_incl_t5.safetensors") + "\"\n");
      const size_t t5Line = text.find("t5xxl = ");
      text.erase(t5Line, text.find('\n', t5Line) - t5Line + 1);
      writeText(config, text);
      const ProcessResult dry = runRunner({"--config_file", config, "--dry_run"});
      EXPECT_EQ(dry.exitCode, 0) << dry.err;
    }
    const ProcessResult r = runRunner({"--config_file", config, "--events", "jsonl"});
    ASSERT_EQ(r.exitCode, 0) << name << "\n" << r.err;
    ASSERT_FALSE(losses(r).empty());
    first.push_back(losses(r).front());
  }
  EXPECT_EQ(first[0], first[1]);
}

// sd3_train.py's train_text_encoder: the CLIPs train whole at learning_rate_te1 / learning_rate_te2 (0
// leaves one as it was), encoding in the step while T5-XXL's outputs come from the partial cache, and
// the file holds them.
TEST_F(Sd3Run, FineTuneTrainsTheClipsWithTrainTextEncoder) {
  const std::string out = path("out_ft_te");
  const ProcessResult r = runRunner({"--config_file", writeConfig("ft_te.toml", out,
                                                                  "training_type = \"finetune\"\nmax_train_steps = 2\n"
                                                                  "train_text_encoder = true\nlearning_rate_te1 = 0.001\nlearning_rate_te2 = 0\n"
                                                                  "cache_latents = true\ncache_text_encoder_outputs = true\n")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("sd-scripts' partial cache"), std::string::npos) << r.err;
  const sinter::io::SafetensorsFile saved(out + "/s.safetensors"), in(path("sd3/sd3.safetensors"));
  auto changed = [&](const std::string& key) { return (saved.tensor(key) - in.tensor(key)).abs().max().item<double>(); };
  const std::string layer = "transformer.text_model.encoder.layers.0.self_attn.q_proj.weight";
  EXPECT_GT(changed("text_encoders.clip_l." + layer), 1e-7);
  EXPECT_EQ(changed("text_encoders.clip_g." + layer), 0.0);  // learning_rate_te2 = 0: not trained
  EXPECT_GT(changed("model.diffusion_model.joint_blocks.0.x_block.attn.qkv.weight"), 1e-7);
}

// sd3_train.py's train_t5xxl: T5-XXL trains whole at learning_rate_te3 beside the CLIPs and is saved in
// the checkpoint (text_encoders.t5xxl.transformer.*), which the next run reads it from; learning_rate_te3
// = 0 leaves it out; what sd3_train.py asserts is refused before loading.
TEST_F(Sd3Run, FineTuneTrainsT5xxlWithTrainT5xxl) {
  const std::string base = "training_type = \"finetune\"\nmax_train_steps = 2\ntrain_text_encoder = true\ncache_latents = true\n"
                           "train_t5xxl = true\n";
  const std::string out = path("out_ft_t5");
  const ProcessResult r = runRunner({"--config_file", writeConfig("ft_t5.toml", out, base + "learning_rate_te3 = 0.001\n")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("T5-XXL (lr 0.001"), std::string::npos) << r.err;
  const sinter::io::SafetensorsFile saved(out + "/s.safetensors"), t5(path("sd3/t5xxl_fp16.safetensors"));
  const std::string q = "encoder.block.0.layer.0.SelfAttention.q.weight";
  ASSERT_TRUE(saved.has("text_encoders.t5xxl.transformer." + q));
  const double moved = (saved.tensor("text_encoders.t5xxl.transformer." + q).to(torch::kFloat32) - t5.tensor(q).to(torch::kFloat32)).abs().max().item<double>();
  EXPECT_GT(moved, 1e-7);
  // The saved file holds T5-XXL: a run from it needs no t5xxl file and starts from the trained one.
  const std::string again = writeConfig("ft_t5_again.toml", path("out_ft_t5_again"), base + "learning_rate_te3 = 0\n");
  std::string text;
  {
    std::ifstream in(again);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  text.replace(text.find(path("sd3/sd3.safetensors")), path("sd3/sd3.safetensors").size(), out + "/s.safetensors");
  text.erase(text.find("t5xxl = "), text.find('\n', text.find("t5xxl = ")) + 1 - text.find("t5xxl = "));
  sinter::test::writeText(again, text);
  const ProcessResult r2 = runRunner({"--config_file", again});
  ASSERT_EQ(r2.exitCode, 0) << r2.err;
  EXPECT_EQ(r2.err.find("T5-XXL (lr"), std::string::npos) << r2.err;  // learning_rate_te3 = 0: not trained, not saved
  EXPECT_FALSE(sinter::io::SafetensorsFile(path("out_ft_t5_again/s.safetensors")).has("text_encoders.t5xxl.transformer." + q));

  for (const auto& [extra, says] : std::vector<std::pair<std::string, std::string>>{
           {"train_t5xxl = true\n", "train_t5xxl needs train_text_encoder"},
           {"train_t5xxl = true\ntrain_text_encoder = true\ncache_text_encoder_outputs = true\n",
            "cache_text_encoder_outputs cannot be used with train_t5xxl"}})
    sinter::test::expectRefusedBeforeLoading(
        "t5", {"--config_file", writeConfig("bad_t5.toml", path("out_bad_t5"), "training_type = \"finetune\"\nmax_train_steps = 2\n" + extra)},
        says, path("out_bad_t5"));
}

// network_args emb_dims: the embedders' and final layer's modules train and are saved with lora_sd3's
// names, the x_embedder's down as a 2x2 conv.
TEST_F(Sd3Run, EmbDimsTrainTheEmbeddersAndFinalLayer) {
  const std::string out = path("out_emb_dims");
  const ProcessResult r = runRunner({"--config_file", writeConfig("emb_dims.toml", out,
                                                                  "model_family = \"sd3\"\nmax_train_steps = 2\nnetwork_train_unet_only = true\n"
                                                                  "network_args = [\"emb_dims=[2, 2, 3, 0, 2, 2]\"]\n")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const sinter::io::SafetensorsFile saved(out + "/s.safetensors");
  for (const char* name : {"lora_unet_context_embedder", "lora_unet_t_embedder_mlp_0", "lora_unet_t_embedder_mlp_2",
                           "lora_unet_final_layer_adaLN_modulation_1", "lora_unet_final_layer_linear"})
    EXPECT_TRUE(saved.has(std::string(name) + ".lora_up.weight")) << name;
  EXPECT_FALSE(saved.has("lora_unet_y_embedder_mlp_0.lora_up.weight"));
  ASSERT_TRUE(saved.has("lora_unet_x_embedder_proj.lora_down.weight"));
  EXPECT_EQ(saved.tensor("lora_unet_x_embedder_proj.lora_down.weight").sizes(), (std::vector<int64_t>{3, 16, 2, 2}));
  EXPECT_GT(saved.tensor("lora_unet_final_layer_linear.lora_up.weight").abs().max().item<double>(), 0.0);  // trained from zero
  EXPECT_NE(saved.metadata().at("ss_network_args").find("emb_dims"), std::string::npos);
}

// networks.lora_sd3's train_t5xxl=True with text_encoder_lr's three values [CLIP-L, CLIP-G, T5-XXL]:
// the third (sd3_t5xxl_lr) is T5-XXL's alone; 0 leaves its group out, so its modules stay as created
// while CLIP-G's train at the second.
TEST_F(Sd3Run, TextEncoderLrsThirdValueIsT5xxlsRate) {
  const std::string base = "model_family = \"sd3\"\nmax_train_steps = 2\nnetwork_args = [\"train_t5xxl=True\"]\n";
  const ProcessResult r =
      runRunner({"--config_file", writeConfig("three_lrs.toml", path("out_three_lrs"), base + "text_encoder_lr = [0.01, 0.02, 0.0]\n")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const sinter::io::SafetensorsFile f(path("out_three_lrs/s.safetensors"));
  EXPECT_EQ(f.metadata().at("ss_text_encoder_lr"), "[0.01, 0.02, 0.0]");
  const std::string t5 = "lora_te3_encoder_block_0_layer_0_SelfAttention_q.lora_up.weight";
  const std::string clipG = "lora_te2_text_model_encoder_layers_0_self_attn_q_proj.lora_up.weight";
  ASSERT_TRUE(f.has(t5));
  EXPECT_EQ(f.tensor(t5).abs().max().item<double>(), 0.0);
  EXPECT_GT(f.tensor(clipG).abs().max().item<double>(), 0.0);
  // Two values: T5-XXL trains at the second, as lora_sd3 fills the list.
  const ProcessResult two =
      runRunner({"--config_file", writeConfig("two_lrs.toml", path("out_two_lrs"), base + "text_encoder_lr = [0.01, 0.02]\n")});
  ASSERT_EQ(two.exitCode, 0) << two.err;
  EXPECT_GT(sinter::io::SafetensorsFile(path("out_two_lrs/s.safetensors")).tensor(t5).abs().max().item<double>(), 0.0);
}

// lycoris.kohya on SD 3.x: LyCORIS's target classes here are SingleDiTBlock and CLIP's attention and
// MLP, which are lora_sd3's modules; T5-XXL has no target class. Its files and resume as on SDXL.
TEST_F(Sd3Run, LycorisTrainsTheSingleDiTBlocksAndResumesExactly) {
  const std::string extra = "model_family = \"sd3\"\nmax_train_steps = 4\nsave_every_n_steps = 2\nsave_state = true\n"
                            "network_module = \"lycoris.kohya\"\nnetwork_args = [\"algo=loha\"]\n";
  const ProcessResult straight = runRunner({"--config_file", writeConfig("loha.toml", path("out_loha"), extra)});
  ASSERT_EQ(straight.exitCode, 0) << straight.err;
  const sinter::io::SafetensorsFile saved(path("out_loha/s.safetensors"));
  const std::set<std::string> modules = modulesOf(path("out_loha/s.safetensors"));
  EXPECT_EQ(countWithPrefix(modules, "lora_unet_"), 19u);
  EXPECT_EQ(countWithPrefix(modules, "lora_te1_"), 2u * 6);
  EXPECT_EQ(countWithPrefix(modules, "lora_te2_"), 3u * 6);
  EXPECT_EQ(countWithPrefix(modules, "lora_te3_"), 0u);
  EXPECT_TRUE(saved.has("lora_unet_joint_blocks_0_x_block_attn2_qkv.hada_w1_a"));
  EXPECT_TRUE(saved.has("lora_unet_joint_blocks_1_context_block_adaLN_modulation_1.hada_w2_b"));
  EXPECT_EQ(saved.metadata().at("ss_network_module"), "lycoris.kohya");
  const std::string resumed =
      writeConfig("loha_resumed.toml", path("out_loha_resumed"), extra + "resume = \"" + path("out_loha/s-step00000002-state") + "\"\n");
  const ProcessResult r = runRunner({"--config_file", resumed});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(sameTensors(path("out_loha/s.safetensors"), path("out_loha_resumed/s.safetensors"), 0.0));
}

TEST_F(Sd3Run, WhatIsRefusedIsRefusedBeforeLoading) {
  struct Case {
    std::string name, extra, says;
  };
  const std::vector<Case> cases{
      {"t5_cached", "model_family = \"sd3\"\ncache_text_encoder_outputs = true\nnetwork_args = [\"train_t5xxl=True\"]\n", "train_t5xxl=True"},
      {"flux_args", "network_args = [\"train_blocks=single\"]\n", "train_blocks"},
      // The tiny MMDiT's 2 joint blocks: none can swap (two stay on the device), as sd-scripts asserts.
      {"swap", "blocks_to_swap = 1\n", "blocks_to_swap = 1: the MMDiT's 2 joint blocks can swap at most 0"},
  };
  for (const Case& c : cases)
    sinter::test::expectRefusedBeforeLoading(
        c.name, {"--config_file", writeConfig("bad_" + c.name + ".toml", path("out_bad_" + c.name), "max_train_steps = 2\n" + c.extra)},
        c.says, path("out_bad_" + c.name));
}

// sd3_train.py: the MMDiT trains whole; the file keeps the checkpoint's layout (MMDiT, VAE, both CLIPs).
TEST_F(Sd3Run, FineTuneAndDreamBoothSaveTheCheckpointsLayout) {
  for (const std::string type : {"finetune", "dreambooth"}) {
    const std::string out = path("out_" + type);
    const ProcessResult r = runRunner({"--config_file", writeConfig(type + ".toml", out,
                                                                    "training_type = \"" + type + "\"\nmax_train_steps = 2\n"
                                                                    "cache_latents = true\ncache_text_encoder_outputs = true\n")});
    ASSERT_EQ(r.exitCode, 0) << type << "\n" << r.err;
    const sinter::io::SafetensorsFile saved(out + "/s.safetensors"), in(path("sd3/sd3.safetensors"));
    EXPECT_EQ(saved.keys(), in.keys()) << type;
    EXPECT_GT((saved.tensor("model.diffusion_model.joint_blocks.0.x_block.attn.qkv.weight") -
               in.tensor("model.diffusion_model.joint_blocks.0.x_block.attn.qkv.weight"))
                  .abs()
                  .max()
                  .item<double>(),
              1e-7)
        << type;
  }
}
