// SD 1.x and SD 2.x end to end through the real sinter-runner on tiny checkpoints and a generated
// dataset, on the CPU: LoRA with sd-scripts' train_network.py names and metadata, DreamBooth and
// fine-tune writing a whole single-file checkpoint that loads back, v2 checked against the file,
// clip_skip, and resume.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "io/safetensors.h"
#include "models/checkpoints/sd_checkpoint.h"
#include "runner_process.h"
#include "tiny_run_inputs.h"
#include "safetensors_compare.h"

namespace fs = std::filesystem;
using sinter::test::doneStatus;
using sinter::test::losses;
using sinter::test::ProcessResult;
using sinter::test::runRunner;
using sinter::test::sameTensors;
using sinter::test::writeText;

namespace {

fs::path g_root;

std::string path(const std::string& rel) { return (g_root / rel).string(); }

std::string writeConfig(const std::string& name, const std::string& family, const std::string& outputDir, const std::string& extra) {
  const std::string text = "model_family = \"" + family + "\"\n"
                           "pretrained_model_name_or_path = \"" + path("tiny_" + family + ".safetensors") + "\"\n"
                           "clip_tokenizer = \"" + path("tokenizer") + "\"\n"
                           "train_data_dir = \"" + path("images") + "\"\n"
                           "output_dir = \"" + outputDir + "\"\n"
                           "output_name = \"t\"\n"
                           "resolution = \"64,64\"\n"
                           "caption_extension = \".txt\"\n"
                           "max_data_loader_n_workers = 0\n"
                           "seed = 7\n" + extra;
  writeText(path(name), text);
  return path(name);
}

class SdRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_sd_run_" + std::to_string(::getpid()));
    sinter::test::writeTinyRunInputs(g_root, {"sd15", "sd2"});
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

std::set<std::string> prefixesOf(const sinter::io::SafetensorsFile& f) {
  std::set<std::string> out;
  for (const auto& k : f.keys()) out.insert(k.substr(0, k.find('_', 5)));  // lora_unet / lora_te
  return out;
}

}  // namespace

TEST_F(SdRun, Sd15LoraTrainsWithSdScriptsNamesAndMetadata) {
  const std::string cfg = writeConfig("sd15_lora.toml", "sd15", path("out_sd15"),
                                      "network_dim = 4\nnetwork_alpha = 2.0\nlearning_rate = 0.01\nmax_train_steps = 40\ncache_latents = true\n"
                                      "network_args = [\"conv_dim=2\"]\nclip_skip = 2\n");
  ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(doneStatus(r), "completed");
  const std::vector<double> l = losses(r);
  ASSERT_EQ(l.size(), 40u);
  double first = 0, last = 0;
  for (int i = 0; i < 8; ++i) first += l[i], last += l[l.size() - 1 - i];
  EXPECT_LT(last, first) << "loss did not go down";

  sinter::io::SafetensorsFile f(path("out_sd15/t.safetensors"));
  EXPECT_EQ(prefixesOf(f), (std::set<std::string>{"lora_te", "lora_unet"}));
  // diffusers' names, as sd-scripts' SD 1.x UNet has them; 1x1-conv projections are 4-d.
  for (const char* key : {"lora_unet_down_blocks_0_attentions_0_proj_in.lora_down.weight",
                          "lora_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn2_to_k.lora_up.weight",
                          "lora_unet_mid_block_attentions_0_proj_out.alpha", "lora_unet_up_blocks_3_attentions_0_proj_in.alpha",
                          "lora_unet_down_blocks_0_resnets_0_conv1.lora_down.weight",          // conv_dim
                          "lora_unet_down_blocks_0_downsamplers_0_conv.lora_down.weight",
                          "lora_unet_up_blocks_0_upsamplers_0_conv.lora_down.weight",
                          "lora_unet_mid_block_resnets_1_time_emb_proj.lora_down.weight",
                          "lora_te_text_model_encoder_layers_1_self_attn_q_proj.lora_down.weight"})
    EXPECT_TRUE(f.has(key)) << key;
  EXPECT_EQ(f.info("lora_unet_down_blocks_0_attentions_0_proj_in.lora_down.weight").shape, (std::vector<int64_t>{4, 32, 1, 1}));
  EXPECT_EQ(f.info("lora_unet_down_blocks_0_resnets_0_conv1.lora_down.weight").shape, (std::vector<int64_t>{2, 32, 3, 3}));
  for (const auto& k : f.keys()) EXPECT_EQ(k.find("input_blocks"), std::string::npos) << k;
  EXPECT_EQ(f.metadata().at("ss_base_model_version"), "sd_v1");
  EXPECT_EQ(f.metadata().at("ss_v2"), "False");
  EXPECT_EQ(f.metadata().at("ss_clip_skip"), "2");
  EXPECT_EQ(f.metadata().at("modelspec.architecture"), "stable-diffusion-v1/lora");

  // network_weights loads the file back into the same modules (every key matched).
  const std::string again = writeConfig("sd15_again.toml", "sd15", path("out_sd15_again"),
                                        "network_dim = 4\nnetwork_alpha = 2.0\nmax_train_steps = 1\nnetwork_args = [\"conv_dim=2\"]\n"
                                        "network_weights = \"" + path("out_sd15/t.safetensors") + "\"\n");
  ProcessResult r2 = runRunner({"--config_file", again});
  ASSERT_EQ(r2.exitCode, 0) << r2.err;
}

TEST_F(SdRun, Sd2LoraLeavesTheDroppedTextLayerOutAndSaysV2) {
  const std::string cfg = writeConfig("sd2_lora.toml", "sd2", path("out_sd2"),
                                      "v2 = true\nv_parameterization = true\nnetwork_dim = 4\nmax_train_steps = 3\n");
  ProcessResult r = runRunner({"--config_file", cfg});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  sinter::io::SafetensorsFile f(path("out_sd2/t.safetensors"));
  // The tiny OpenCLIP has 3 layers; sd-scripts' SD 2.x model keeps 2 of them.
  EXPECT_TRUE(f.has("lora_te_text_model_encoder_layers_1_mlp_fc2.alpha"));
  EXPECT_FALSE(f.has("lora_te_text_model_encoder_layers_2_mlp_fc2.alpha"));
  EXPECT_TRUE(f.has("lora_unet_down_blocks_0_attentions_0_proj_in.alpha"));
  EXPECT_EQ(f.info("lora_unet_down_blocks_0_attentions_0_proj_in.lora_down.weight").shape.size(), 2u);  // Linear in SD 2.x
  EXPECT_EQ(f.metadata().at("ss_base_model_version"), "sd_v2_v");  // get_model_version_str_for_sd1_sd2
  EXPECT_EQ(f.metadata().at("ss_v2"), "True");
  EXPECT_EQ(f.metadata().at("modelspec.architecture"), "stable-diffusion-v2-768-v/lora");
  EXPECT_EQ(f.metadata().at("modelspec.prediction_type"), "v");
}

TEST_F(SdRun, V2IsCheckedAgainstTheCheckpoint) {
  const std::string cfg = writeConfig("v2_wrong.toml", "sd15", path("out_v2_wrong"), "v2 = true\nmax_train_steps = 1\n");
  ProcessResult r = runRunner({"--config_file", cfg, "--dry_run"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("v2 = true, but the checkpoint is SD 1.x"), std::string::npos) << r.err;
  // model_family sd2 on an SD 1.x file: the family check names both.
  const std::string other = writeConfig("family_wrong.toml", "sd2", path("out_family_wrong"), "max_train_steps = 1\n");
  writeText(other, "model_family = \"sd2\"\npretrained_model_name_or_path = \"" + path("tiny_sd15.safetensors") + "\"\n" +
                       "train_data_dir = \"" + path("images") + "\"\noutput_dir = \"" + path("out_family_wrong") + "\"\n");
  ProcessResult r2 = runRunner({"--config_file", other, "--dry_run"});
  EXPECT_EQ(r2.exitCode, 2);
  EXPECT_NE(r2.err.find("sd15 checkpoint"), std::string::npos) << r2.err;
}

TEST_F(SdRun, DreamBoothWritesACheckpointThatLoadsAndResumesExactly) {
  const std::string extra = "training_type = \"dreambooth\"\nmax_train_steps = 4\nsave_every_n_steps = 2\nsave_state = true\n"
                            "train_text_encoder = true\noptimizer_type = \"AdamW\"\nlearning_rate = 0.0001\n";
  ProcessResult whole = runRunner({"--config_file", writeConfig("db.toml", "sd15", path("out_db"), extra)});
  ASSERT_EQ(whole.exitCode, 0) << whole.err;
  const std::string saved = path("out_db/t.safetensors");
  // The whole model in the original layout, loaded by the same loader as a downloaded checkpoint.
  const sinter::models::SdCheckpoint loaded = sinter::models::loadSdCheckpoint(saved);
  EXPECT_EQ(loaded.config.version, sinter::models::SdVersion::V1);
  sinter::io::SafetensorsFile base(path("tiny_sd15.safetensors")), trained(saved);
  EXPECT_EQ(base.keys(), trained.keys());
  EXPECT_FALSE(base.tensor("cond_stage_model.transformer.text_model.encoder.layers.0.mlp.fc1.weight")
                   .equal(trained.tensor("cond_stage_model.transformer.text_model.encoder.layers.0.mlp.fc1.weight")))
      << "train_text_encoder: the text encoder trains";
  EXPECT_FALSE(base.tensor("model.diffusion_model.input_blocks.1.1.proj_in.weight")
                   .equal(trained.tensor("model.diffusion_model.input_blocks.1.1.proj_in.weight")));

  // Resume from step 2's state: the same final weights as the uninterrupted run.
  ProcessResult resumed = runRunner({"--config_file", writeConfig("db_resume.toml", "sd15", path("out_db_resume"),
                                                                  extra + "resume = \"" + path("out_db/t-step00000002-state") + "\"\n")});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  EXPECT_TRUE(sameTensors(saved, path("out_db_resume/t.safetensors"), 1e-6));
}

TEST_F(SdRun, Sd2FineTuneSavesTheOpenClipLayout) {
  const std::string extra = "training_type = \"finetune\"\nv2 = true\nmax_train_steps = 2\noptimizer_type = \"AdamW\"\n"
                            "learning_rate = 0.0001\n";
  ProcessResult r = runRunner({"--config_file", writeConfig("ft2.toml", "sd2", path("out_ft2"), extra)});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  sinter::io::SafetensorsFile f(path("out_ft2/t.safetensors"));
  EXPECT_TRUE(f.has("cond_stage_model.model.transformer.resblocks.0.attn.in_proj_weight"));
  EXPECT_TRUE(f.has("first_stage_model.encoder.conv_in.weight"));
  EXPECT_EQ(sinter::models::loadSdCheckpoint(path("out_ft2/t.safetensors")).config.version, sinter::models::SdVersion::V2);
}

TEST_F(SdRun, TwoRanksTrainTogetherAndSamplesRender) {
  writeText(path("prompts.txt"), "a red circle --w 64 --h 64 --d 1 --s 3 --l 4 --n blurry\n");
  const std::string cfg = writeConfig("sd15_ddp.toml", "sd15", path("out_ddp"),
                                      "network_dim = 4\nlearning_rate = 0.01\nmax_train_steps = 2\nsample_every_n_steps = 2\n"
                                      "sample_prompts = \"" + path("prompts.txt") + "\"\n");
  ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl", "--nproc_per_node", "2"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(doneStatus(r), "completed");
  EXPECT_TRUE(fs::exists(path("out_ddp/t.safetensors")));
  size_t images = 0;
  for (const auto& entry : fs::directory_iterator(path("out_ddp/sample"))) images += entry.path().extension() == ".png";
  EXPECT_GT(images, 0u) << "the prompts rendered no image";
}
