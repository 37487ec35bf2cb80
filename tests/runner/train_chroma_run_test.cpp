// Chroma training end to end through the real sinter-runner on tiny random Chroma files
// (transformer, AE, T5: no CLIP-L) and a generated dataset, on the CPU. LoRA as sd-scripts'
// flux_train_network.py --model_type chroma trains it: networks.lora_flux's block modules (no
// modulation Linears to target, no CLIP-L LoRA), Chroma's metadata, resume continuing exactly, the
// model recognised from its file without model_type, samples from the start's T5 encodings, and
// what sd-scripts refuses refused by the dry run and the run alike. And the fine-tune, which
// sd-scripts' flux_train.py does not offer for Chroma: the whole transformer, approximator included.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

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

// sd-scripts' recommended Chroma settings on the tiny files; `extra` lines are appended.
std::string writeConfig(const std::string& name, const std::string& outputDir, const std::string& extra) {
  std::string text = "model_family = \"flux\"\n"
                     "ae = \"" + path("chroma/ae.safetensors") + "\"\n"
                     "t5xxl = \"" + path("chroma/t5xxl_fp16.safetensors") + "\"\n"
                     "t5_tokenizer = \"" + path("tokenizer") + "\"\n"
                     "train_data_dir = \"" + path("images") + "\"\n"
                     "output_dir = \"" + outputDir + "\"\n"
                     "output_name = \"c\"\n"
                     "resolution = \"128,128\"\n"
                     "caption_extension = \".txt\"\n"
                     "max_data_loader_n_workers = 0\n"
                     "network_dim = 4\n"
                     "network_alpha = 4.0\n"
                     "learning_rate = 0.01\n"
                     "t5xxl_max_token_length = 16\n"
                     "guidance_scale = 0.0\n"
                     "timestep_sampling = \"sigmoid\"\n"
                     "model_prediction_type = \"raw\"\n"
                     "seed = 7\n" + extra;
  if (extra.find("pretrained_model_name_or_path =") == std::string::npos)
    text += "pretrained_model_name_or_path = \"" + path("chroma/chroma.safetensors") + "\"\n";
  if (extra.find("# no apply_t5_attn_mask") == std::string::npos) text += "apply_t5_attn_mask = true\n";
  const std::string p = path(name);
  writeText(p, text);
  return p;
}

class ChromaLoraRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_chroma_run_" + std::to_string(::getpid()));
    fs::create_directories(g_root);
    ASSERT_EQ(runRunner({"--init_checkpoint", path("chroma/chroma.safetensors"), "--model_family", "flux", "--model_type", "chroma",
                         "--model_size", "tiny", "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_dataset", path("images"), "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_tokenizer", path("tokenizer")}).exitCode, 0);
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

}  // namespace

TEST_F(ChromaLoraRun, InitCheckpointWritesChromaWithoutClipL) {
  EXPECT_TRUE(fs::exists(path("chroma/ae.safetensors")));
  EXPECT_TRUE(fs::exists(path("chroma/t5xxl_fp16.safetensors")));
  EXPECT_FALSE(fs::exists(path("chroma/clip_l.safetensors")));
  const sinter::io::SafetensorsFile f(path("chroma/chroma.safetensors"));
  EXPECT_TRUE(f.has("distilled_guidance_layer.in_proj.weight"));
  EXPECT_EQ(f.metadata().at("modelspec.architecture"), "chroma");
}

TEST_F(ChromaLoraRun, TrainsTheBlocksWithChromasMetadataAndResumesExactly) {
  const std::string extra = "model_type = \"chroma\"\nmax_train_steps = 6\nsave_every_n_steps = 3\nsave_state = true\n";
  const ProcessResult straight = runRunner({"--config_file", writeConfig("straight.toml", path("out_straight"), extra)});
  ASSERT_EQ(straight.exitCode, 0) << straight.err;
  EXPECT_NE(straight.err.find("(Chroma: no CLIP-L)"), std::string::npos) << straight.err;
  const sinter::io::SafetensorsFile f(path("out_straight/c.safetensors"));
  std::set<std::string> modules;
  for (const std::string& k : f.keys()) modules.insert(k.substr(0, k.find('.')));
  // networks.lora_flux on Chroma's blocks: 8 per double block (img_ and txt_ attn.qkv, attn.proj,
  // mlp.0, mlp.2: no mod.lin) and 2 per single block (linear1, linear2: no modulation.lin); sd-scripts'
  // use_clip_l is False for Chroma, so no lora_te1_ modules although the text encoders "train".
  EXPECT_EQ(modules.size(), 2u * 8 + 2u * 2);
  for (const std::string& m : modules) EXPECT_EQ(m.rfind("lora_unet_", 0), 0u) << m;
  EXPECT_TRUE(modules.count("lora_unet_double_blocks_1_txt_mlp_2"));
  EXPECT_TRUE(modules.count("lora_unet_single_blocks_0_linear1"));
  EXPECT_FALSE(modules.count("lora_unet_single_blocks_0_modulation_lin"));
  const auto& m = f.metadata();
  EXPECT_EQ(m.at("ss_network_module"), "networks.lora_flux");
  EXPECT_EQ(m.at("ss_model_type"), "chroma");
  EXPECT_EQ(m.at("ss_base_model_version"), "chroma");  // flux_utils.MODEL_VERSION_CHROMA
  EXPECT_EQ(m.at("modelspec.architecture"), "chroma/lora");
  EXPECT_EQ(m.at("modelspec.implementation"), "https://huggingface.co/lodestones/Chroma");
  EXPECT_EQ(m.at("ss_apply_t5_attn_mask"), "True");
  EXPECT_EQ(m.at("ss_guidance_scale"), "0.0");

  const std::string resumed =
      writeConfig("resumed.toml", path("out_resumed"), extra + "resume = \"" + path("out_straight/c-step00000003-state") + "\"\n");
  const ProcessResult r = runRunner({"--config_file", resumed, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(losses(r).size(), 3u);
  EXPECT_TRUE(sameTensors(path("out_straight/c.safetensors"), path("out_resumed/c.safetensors"), 0.0));
}

// No model_type: the file says it is Chroma (sd-scripts would need --model_type chroma). Cached
// text outputs carry no CLIP-L; the samples use the start's T5 encodings with CFG and guidance 0.
TEST_F(ChromaLoraRun, RecognisedFromItsFileWithCachedTextAndSamples) {
  writeText(path("prompts.txt"), "a red square --n blurry --l 4 --g 0 --s 3 --w 64 --h 64\n");
  const ProcessResult r = runRunner({"--config_file", writeConfig("detected.toml", path("out_detected"),
                                                                  "max_train_steps = 2\ncache_latents = true\ncache_text_encoder_outputs = true\n"
                                                                  "sample_every_n_steps = 2\nsample_prompts = \"" + path("prompts.txt") + "\"\n")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("Chroma: 2 double and 2 single blocks"), std::string::npos) << r.err;
  // The resolved config says what ran (the dry run prints it).
  const ProcessResult dry = runRunner({"--config_file", path("detected.toml"), "--dry_run"});
  EXPECT_NE(dry.out.find("model_type = \"chroma\""), std::string::npos) << dry.out;
  EXPECT_EQ(sinter::io::SafetensorsFile(path("out_detected/c.safetensors")).metadata().at("ss_model_type"), "chroma");
  size_t samples = 0;
  for (const auto& e : fs::directory_iterator(path("out_detected/sample"))) samples += e.path().extension() == ".png";
  EXPECT_EQ(samples, 1u);
}

TEST_F(ChromaLoraRun, WhatSdScriptsRefusesIsRefusedBeforeLoading) {
  ASSERT_EQ(runRunner({"--init_checkpoint", path("flux/flux1-dev.safetensors"), "--model_family", "flux", "--model_size", "tiny"}).exitCode, 0);
  struct Case {
    std::string name, extra, says;
  };
  const std::vector<Case> cases{
      {"no_mask", "# no apply_t5_attn_mask\n", "Chroma needs apply_t5_attn_mask = true"},
      {"flux_file", "model_type = \"chroma\"\npretrained_model_name_or_path = \"" + path("flux/flux1-dev.safetensors") + "\"\n",
       "is a FLUX.1 transformer"},
      {"model_type", "model_type = \"sd3\"\n", "model_type"},
  };
  for (const Case& c : cases)
    sinter::test::expectRefusedBeforeLoading(
        c.name, {"--config_file", writeConfig("bad_" + c.name + ".toml", path("out_bad_" + c.name), "max_train_steps = 2\n" + c.extra)},
        c.says, path("out_bad_" + c.name));
}

TEST_F(ChromaLoraRun, FineTuneTrainsTheWholeTransformerAndSavesChromasLayout) {
  const ProcessResult r = runRunner({"--config_file", writeConfig("finetune.toml", path("out_finetune"),
                                                                  "training_type = \"finetune\"\nmax_train_steps = 3\n"
                                                                  "cache_latents = true\ncache_text_encoder_outputs = true\n")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const sinter::io::SafetensorsFile out(path("out_finetune/c.safetensors")), in(path("chroma/chroma.safetensors"));
  EXPECT_EQ(out.keys(), in.keys());
  EXPECT_EQ(out.metadata().at("modelspec.architecture"), "chroma");
  for (const char* key : {"double_blocks.0.img_attn.qkv.weight", "distilled_guidance_layer.out_proj.weight"})
    EXPECT_GT((out.tensor(key) - in.tensor(key)).abs().max().item<double>(), 1e-7) << key;
}

// The LoRA tools on Chroma's files: merged into the checkpoint and extracted back under Chroma's names
// and modelspec (flux_merge_lora.py / flux_extract_lora.py know FLUX.1's only).
TEST_F(ChromaLoraRun, LoraToolsMergeAndExtractWithChromasModelSpec) {
  ASSERT_EQ(runRunner({"--config_file", writeConfig("tools.toml", path("out_tools"), "max_train_steps = 2\n")}).exitCode, 0);
  const std::string merged = path("out_tools/merged.safetensors"), extracted = path("out_tools/extracted.safetensors");
  const ProcessResult merge = runRunner({"flux_merge_lora", "--flux_model", path("chroma/chroma.safetensors"), "--models",
                                         path("out_tools/c.safetensors"), "--ratios", "1", "--save_to", merged});
  ASSERT_EQ(merge.exitCode, 0) << merge.err;
  EXPECT_NE(merge.err.find("merging 20 module(s) into 20"), std::string::npos) << merge.err;
  EXPECT_EQ(sinter::io::SafetensorsFile(merged).metadata().at("modelspec.architecture"), "chroma");
  const ProcessResult extract = runRunner({"flux_extract_lora", "--model_org", path("chroma/chroma.safetensors"), "--model_tuned", merged,
                                           "--save_to", extracted, "--dim", "4"});
  ASSERT_EQ(extract.exitCode, 0) << extract.err;
  const sinter::io::SafetensorsFile file(extracted);
  const auto& m = file.metadata();
  EXPECT_EQ(m.at("ss_base_model_version"), "chroma");
  EXPECT_EQ(m.at("modelspec.architecture"), "chroma/lora");
}
