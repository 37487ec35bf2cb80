// kohya_ss JSON import: family and training type from each tab's markers, the three report groups
// (not carried / carried / at kohya_ss's defaults), network_args as kohya_ss's GUI builds them, and
// accelerate's dynamo settings as Sinter's compile settings.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "core/atomic_file.h"
#include "core/kohya_import.h"
#include "core/kohya_network.h"
#include "core/toml_config.h"
#include "core/validation.h"

using namespace sinter;

namespace {

std::string dataFile(const std::string& name) { return std::string(SINTER_TEST_DATA_DIR) + "/kohya/" + name; }

// The item of `group` that accounts for `key`, or nullptr.
const KohyaImportItem* itemFor(const std::vector<KohyaImportItem>& group, const std::string& key) {
  for (const KohyaImportItem& item : group)
    if (std::find(item.keys.begin(), item.keys.end(), key) != item.keys.end()) return &item;
  return nullptr;
}

bool mentions(const std::vector<KohyaImportItem>& group, const std::string& what) {
  return std::any_of(group.begin(), group.end(), [&](const KohyaImportItem& i) { return i.text.find(what) != std::string::npos; });
}

std::string textFor(const std::vector<KohyaImportItem>& group, const std::string& key) {
  const KohyaImportItem* item = itemFor(group, key);
  return item ? item->text : "(no item for " + key + ")";
}

// Every key of the file is in a group, and (one field holding several settings aside) in one only.
void expectEveryKeyReportedOnce(const std::string& fileText, const KohyaImportResult& r) {
  const nlohmann::json root = nlohmann::json::parse(fileText);
  for (auto it = root.begin(); it != root.end(); ++it) {
    int groups = 0;
    for (const auto* group : {&r.notCarried, &r.carried, &r.atDefaults}) groups += itemFor(*group, it.key()) ? 1 : 0;
    if (it.key() == "additional_parameters") EXPECT_GE(groups, 1) << it.key();
    else EXPECT_EQ(groups, 1) << it.key();
  }
  for (const auto* group : {&r.notCarried, &r.carried, &r.atDefaults})
    for (const KohyaImportItem& item : *group)
      for (const std::string& k : item.keys) EXPECT_TRUE(root.contains(k)) << k << " in " << item.text;
}

KohyaImportResult importFixture(const std::string& name) {
  const std::string text = readWholeFile(dataFile(name));
  KohyaImportResult r = importKohyaJson(text, name);
  expectEveryKeyReportedOnce(text, r);
  return r;
}

}  // namespace

TEST(KohyaImport, SdxlLoraPreset) {
  KohyaImportResult r = importFixture("sdxl_lora_gui.json");
  const Config& c = r.config;
  EXPECT_EQ(c.getString("model_family"), "sdxl");
  EXPECT_EQ(c.getString("training_type"), "lora");
  EXPECT_EQ(c.getString("network_module"), "networks.lora");
  EXPECT_EQ(c.getString("optimizer_type"), "AdamW8bit");               // optimizer -> optimizer_type
  EXPECT_EQ(c.getString("resolution"), "1024,1024");                   // max_resolution -> resolution
  EXPECT_EQ(c.getInt("max_train_epochs"), 10);                         // epoch, max_train_steps being ""
  EXPECT_EQ(c.getInt("seed"), 1234);                                   // numbers stored as strings
  EXPECT_EQ(c.getInt("network_dim"), 32);
  EXPECT_DOUBLE_EQ(c.getDouble("text_encoder_lr"), 5e-5);
  EXPECT_DOUBLE_EQ(c.getDouble("lr_warmup_steps"), 0.1);               // 10 % -> ratio
  EXPECT_EQ(c.getList("optimizer_args"), (StringList{"weight_decay=0.01", "betas=0.9,0.999"}));
  EXPECT_TRUE(c.getBool("sdpa"));
  EXPECT_FALSE(c.getBool("xformers"));
  EXPECT_DOUBLE_EQ(c.getDouble("max_grad_norm"), 0.5);                 // from additional_parameters
  EXPECT_DOUBLE_EQ(c.getDouble("min_snr_gamma"), 5.0);
  EXPECT_FALSE(c.has("noise_offset"));                                 // 0 means off in the GUI
  EXPECT_FALSE(c.has("save_every_n_steps"));
  EXPECT_FALSE(c.has("max_train_steps"));                              // "" keeps the default
  EXPECT_FALSE(c.has("clip_skip"));                                    // not an SDXL option
  EXPECT_FALSE(c.has("vae_batch_size"));                               // kohya_ss's 0 is "unset"
  EXPECT_FALSE(c.has("network_args"));
  EXPECT_EQ(c.getInt("max_data_loader_n_workers"), 0);

  // Not carried: only what changes training.
  EXPECT_TRUE(mentions(r.notCarried, "--no_such_flag"));
  EXPECT_EQ(r.notCarried.size(), 1u) << r.notCarried.front().text;
  EXPECT_DOUBLE_EQ(c.getDouble("scale_weight_norms"), 1.0);
  EXPECT_NE(itemFor(r.carried, "scale_weight_norms"), nullptr);
  // kohya_ss's SDXL checkbox passes --no_half_vae.
  EXPECT_TRUE(c.getBool("no_half_vae"));
  EXPECT_EQ(textFor(r.carried, "sdxl_no_half_vae"), "sdxl_no_half_vae true -> no_half_vae = true");
  // Carried, renames shown.
  EXPECT_EQ(textFor(r.carried, "optimizer"), "optimizer -> optimizer_type = \"AdamW8bit\"");
  EXPECT_EQ(textFor(r.carried, "sdxl"), "sdxl true -> model_family = \"sdxl\"");
  EXPECT_EQ(textFor(r.carried, "LoRA_type"), "LoRA_type \"Standard\" -> network_module = \"networks.lora\"");
  EXPECT_TRUE(mentions(r.carried, "additional_parameters: --max_grad_norm 0.5"));
  // kohya_ss's unset values and defaults: nothing lost.
  for (const char* key : {"vae_batch_size", "noise_offset_type", "num_cpu_threads_per_process", "conv_dim", "conv_alpha",
                          "LyCORIS_preset", "use_wandb", "noise_offset", "v2", "model_list"})
    EXPECT_NE(itemFor(r.atDefaults, key), nullptr) << key;
  EXPECT_EQ(textFor(r.atDefaults, "conv_dim"), "conv_dim 1: not used by LoRA_type \"Standard\"");

  // What was imported is a valid config that saves.
  EXPECT_FALSE(hasErrors(validateConfig(c))) << formatAll(validateConfig(c));
  EXPECT_NE(writeConfigToml(c).find("optimizer_type = \"AdamW8bit\""), std::string::npos);
}

TEST(KohyaImport, SdxlFineTuneMarksItsFamilyWithSdxlCheckbox) {
  KohyaImportResult r = importFixture("sdxl_finetune_gui.json");
  const Config& c = r.config;
  EXPECT_EQ(c.getString("model_family"), "sdxl");
  EXPECT_EQ(c.getString("training_type"), "finetune");
  EXPECT_EQ(textFor(r.carried, "sdxl_checkbox"), "sdxl_checkbox true -> model_family = \"sdxl\"");
  EXPECT_EQ(c.getString("in_json"), "/data/ft/work/meta_lat.json");  // train_dir + the latents' metadata
  EXPECT_EQ(c.getString("train_data_dir"), "/data/ft/images");
  EXPECT_EQ(c.getString("output_dir"), "/data/ft/out");
  EXPECT_DOUBLE_EQ(c.getDouble("learning_rate_te1"), 2e-6);
  EXPECT_DOUBLE_EQ(c.getDouble("learning_rate_te2"), 1e-6);
  EXPECT_TRUE(c.getBool("train_text_encoder"));
  EXPECT_EQ(c.getInt("lr_warmup_steps"), 50);  // the step count overrides the percentage
  EXPECT_EQ(c.getInt("max_train_epochs"), 20);
  EXPECT_DOUBLE_EQ(c.getDouble("noise_offset"), 0.0357);
  EXPECT_FALSE(c.has("seed"));
  EXPECT_FALSE(c.has("compile"));
  EXPECT_FALSE(c.has("vae_batch_size"));
  EXPECT_EQ(c.getList("optimizer_args"), (StringList{"scale_parameter=False", "relative_step=False", "warmup_init=False"}));

  EXPECT_TRUE(r.notCarried.empty()) << r.notCarried.front().text;
  for (const char* key : {"learning_rate_te", "lr_warmup", "dataset_repeats", "vae_batch_size", "seed", "dynamo_backend",
                          "dynamo_mode", "multires_noise_iterations", "batch_size", "caption_metadata_filename",
                          "flux1_checkbox", "sd3_checkbox", "v2", "clip_skip", "block_lr"})
    EXPECT_NE(itemFor(r.atDefaults, key), nullptr) << key;
  EXPECT_TRUE(c.getBool("no_half_vae"));
  for (const char* key : {"adaptive_noise_scale"})
    EXPECT_NE(itemFor(r.atDefaults, key), nullptr) << key;
  EXPECT_EQ(textFor(r.atDefaults, "lr_warmup"), "lr_warmup 10: lr_warmup_steps overrides it");
  EXPECT_FALSE(hasErrors(validateConfig(c))) << formatAll(validateConfig(c));
}

TEST(KohyaImport, FluxLoraCarriesTrainBlocksNetworkArgsAndDynamo) {
  KohyaImportResult r = importFixture("flux_lora_compile_gui.json");
  const Config& c = r.config;
  EXPECT_EQ(c.getString("model_family"), "flux");
  EXPECT_EQ(c.getString("network_module"), "networks.lora_flux");
  // kohya_ss's order: the Flux1 fields, then loraplus_*.
  EXPECT_EQ(c.getList("network_args"), (StringList{"train_blocks=single", "split_qkv=True", "loraplus_lr_ratio=4"}));
  EXPECT_EQ(r.processes, 2);
  EXPECT_TRUE(c.getBool("network_train_unet_only"));  // text_encoder_lr 0
  EXPECT_TRUE(c.getBool("cache_text_encoder_outputs"));
  EXPECT_FALSE(c.has("weighting_scheme"));  // kohya_ss passes it for SD3 only
  EXPECT_FALSE(c.has("sigmoid_scale"));
  // accelerate's dynamo settings -> Sinter's compile settings.
  EXPECT_TRUE(c.getBool("compile"));
  EXPECT_EQ(c.getString("compile_backend"), "inductor");
  EXPECT_EQ(c.getString("compile_mode"), "max-autotune");
  EXPECT_TRUE(c.getBool("compile_fullgraph"));
  EXPECT_EQ(c.getString("compile_dynamic"), "false");

  EXPECT_EQ(textFor(r.carried, "dynamo_backend"), "dynamo_backend \"inductor\" -> compile = true, compile_backend = \"inductor\"");
  EXPECT_EQ(textFor(r.carried, "dynamo_mode"), "dynamo_mode \"max-autotune\" -> compile_mode = \"max-autotune\"");
  EXPECT_EQ(textFor(r.carried, "dynamo_use_fullgraph"), "dynamo_use_fullgraph true -> compile_fullgraph = true");
  EXPECT_EQ(textFor(r.carried, "dynamo_use_dynamic"), "dynamo_use_dynamic false -> compile_dynamic = \"false\"");
  EXPECT_EQ(textFor(r.carried, "loraplus_lr_ratio"), "loraplus_lr_ratio 4 -> network_args loraplus_lr_ratio=4");
  EXPECT_NE(textFor(r.carried, "train_blocks").find("train_blocks \"single\" -> network_args train_blocks=single"),
            std::string::npos);
  EXPECT_NE(textFor(r.carried, "train_blocks").find("only with split_mode"), std::string::npos);
  EXPECT_EQ(textFor(r.carried, "flux1_cache_text_encoder_outputs"),
            "flux1_cache_text_encoder_outputs -> cache_text_encoder_outputs = true");
  EXPECT_EQ(textFor(r.carried, "num_processes"), "num_processes 2 -> GPUs 2");

  // The runner does not train split_qkv: it stays in network_args (the run is refused), and says so.
  ASSERT_EQ(r.notCarried.size(), 1u) << r.notCarried.front().text;
  EXPECT_NE(textFor(r.notCarried, "split_qkv").find("split_qkv true -> network_args split_qkv=True: "), std::string::npos);
  EXPECT_NE(textFor(r.notCarried, "split_qkv").find("refuses the run"), std::string::npos);

  for (const char* key : {"train_double_block_indices", "train_single_block_indices", "img_attn_dim", "rank_dropout",
                          "split_mode", "conv_dim", "unit", "factor", "weighting_scheme", "sigmoid_scale",
                          "sdxl_cache_text_encoder_outputs", "t5xxl_lr", "multi_gpu", "gpu_ids"})
    EXPECT_NE(itemFor(r.atDefaults, key), nullptr) << key;
  EXPECT_EQ(textFor(r.carried, "vae_batch_size"), "vae_batch_size = 4");
  EXPECT_EQ(textFor(r.atDefaults, "weighting_scheme"), "weighting_scheme \"logit_normal\": kohya_ss passes it on only for SD 3.x");
}

TEST(KohyaImport, LyCorisLoConIsCarriedAsLycorisKohya) {
  KohyaImportResult r = importFixture("sdxl_locon_gui.json");
  const Config& c = r.config;
  EXPECT_EQ(c.getString("training_type"), "lora");
  EXPECT_EQ(c.getString("network_module"), "lycoris.kohya");
  EXPECT_EQ(c.getList("network_args"),
            (StringList{"preset=attn-mlp", "conv_dim=8", "conv_alpha=4", "use_tucker=False", "rank_dropout=0.1",
                        "bypass_mode=False", "dora_wd=True", "module_dropout=0", "use_tucker=False", "use_scalar=False",
                        "rank_dropout_scale=False", "algo=locon", "train_norm=False"}));
  EXPECT_TRUE(r.notCarried.empty()) << r.notCarried.front().text;
  EXPECT_EQ(textFor(r.carried, "LoRA_type").rfind("LoRA_type \"LyCORIS/LoCon\" -> network_module = \"lycoris.kohya\"", 0), 0u);
  for (const char* key : {"LyCORIS_preset", "conv_dim", "conv_alpha", "rank_dropout", "dora_wd", "train_norm"})
    EXPECT_NE(itemFor(r.carried, key), nullptr) << key;
  EXPECT_NE(textFor(r.carried, "rank_dropout_scale").find("does not read it"), std::string::npos);
  for (const char* key : {"factor", "use_cp", "decompose_both", "unit", "train_on_input"})
    EXPECT_NE(itemFor(r.atDefaults, key), nullptr) << key;
}

// kohya_ss's full-rank LoKr idiom (its "SDXL - 1 image LoRA" preset): network_dim = conv_dim =
// 100000, which LyCORIS reads as "w2 whole" for every layer. sd-scripts takes any dim, so does this.
TEST(KohyaImport, LokrFullRankDimIsCarried) {
  KohyaImportResult r = importKohyaJson(
      R"({"sdxl": true, "LoRA_type": "LyCORIS/LoKr", "network_dim": 100000, "conv_dim": 100000, "network_alpha": 1, "factor": 6})", "k.json");
  EXPECT_EQ(r.config.getInt("network_dim"), 100000);
  EXPECT_EQ(itemFor(r.notCarried, "network_dim"), nullptr) << textFor(r.notCarried, "network_dim");
}

// The LyCORIS algorithms the runner does not train, and train_norm, are carried but named as refused.
TEST(KohyaImport, LycorisValuesTheRunnerRefusesAreSaid) {
  KohyaImportResult r = importKohyaJson(R"({"sdxl": true, "LoRA_type": "LyCORIS/GLoRA", "train_norm": true})", "g.json");
  EXPECT_EQ(r.config.getString("network_module"), "lycoris.kohya");
  EXPECT_NE(textFor(r.notCarried, "train_norm").find("refuses the run"), std::string::npos);
  EXPECT_NE(textFor(r.notCarried, "LoRA_type").find("algo=glora"), std::string::npos);
  KohyaImportResult lokr = importKohyaJson(R"({"sdxl": true, "LoRA_type": "LyCORIS/LoKr", "factor": 8, "decompose_both": false})", "k.json");
  EXPECT_TRUE(lokr.notCarried.empty()) << lokr.notCarried.front().text;
  EXPECT_NE(textFor(lokr.carried, "decompose_both").find("LyCORIS tests the value as a string"), std::string::npos);
}

TEST(KohyaImport, KohyaLoConPassesConvArgumentsTheRunnerTrains) {
  KohyaImportResult r = importKohyaJson(
      R"({"LoRA_type": "Kohya LoCon", "sdxl": true, "conv_dim": 8, "conv_alpha": 4, "rank_dropout": 0.1,
          "down_lr_weight": "1,1,1,1,1,1,1,1,1,1,1,1", "loraplus_unet_lr_ratio": 16})",
      "locon.json");
  EXPECT_EQ(r.config.getString("network_module"), "networks.lora");
  EXPECT_EQ(r.config.getList("network_args"),
            (StringList{"conv_dim=8", "conv_alpha=4", "down_lr_weight=1,1,1,1,1,1,1,1,1,1,1,1", "rank_dropout=0.1",
                        "loraplus_unet_lr_ratio=16"}));
  for (const char* key : {"conv_dim", "conv_alpha", "down_lr_weight", "rank_dropout"})
    EXPECT_NE(itemFor(r.carried, key), nullptr) << key;
  EXPECT_TRUE(r.notCarried.empty()) << r.notCarried.front().text;
  EXPECT_NE(itemFor(r.carried, "loraplus_unet_lr_ratio"), nullptr);
}

TEST(KohyaImport, SplitModeTrainsSingleBlocks) {
  KohyaImportResult r = importKohyaJson(
      R"({"LoRA_type": "Flux1", "flux1_checkbox": true, "split_mode": true, "train_blocks": "all"})", "split.json");
  EXPECT_EQ(r.config.getList("network_args"), (StringList{"train_blocks=single"}));
  EXPECT_NE(itemFor(r.carried, "split_mode"), nullptr);
  EXPECT_NE(itemFor(r.atDefaults, "train_blocks"), nullptr);
}

TEST(KohyaImport, OtherNetworkTypesAreNotCarried) {
  for (const auto& [type, module] : std::vector<std::pair<std::string, std::string>>{
           {"Kohya LoKr", "networks.lokr"}, {"LoRA-FA", "networks.lora_fa"}, {"Kohya DyLoRA", "networks.dylora"}}) {
    KohyaImportResult r = importKohyaJson(R"({"sdxl": true, "LoRA_type": ")" + type + R"("})", "t.json");
    EXPECT_NE(textFor(r.notCarried, "LoRA_type").find("network_module \"" + module + "\""), std::string::npos) << type;
    EXPECT_FALSE(r.config.has("network_module")) << type;
  }
}

TEST(KohyaImport, FamilyMarkersOfEachTab) {
  auto family = [](const std::string& json) { return importKohyaJson(json, "f.json").config.getString("model_family"); };
  EXPECT_EQ(family(R"({"LoRA_type": "Standard", "sdxl": true})"), "sdxl");
  EXPECT_EQ(family(R"({"sdxl_checkbox": true, "train_dir": "/w"})"), "sdxl");
  EXPECT_EQ(family(R"({"sdxl": false, "flux1_checkbox": true, "LoRA_type": "Flux1"})"), "flux");
  EXPECT_EQ(family(R"({"sdxl": false, "v2": true, "v_parameterization": true})"), "sd2");
  EXPECT_EQ(family(R"({"sdxl": false, "v2": false})"), "sd15");
  EXPECT_EQ(family(R"({"model_list": "stabilityai/stable-diffusion-xl-base-1.0"})"), "sdxl");
  EXPECT_EQ(family(R"({"learning_rate": 1e-5})"), "auto");  // nothing says
  EXPECT_EQ(importKohyaJson(R"({"sdxl_checkbox": true})", "f.json").config.getString("training_type"), "finetune");

  KohyaImportResult sd3 = importKohyaJson(R"({"sdxl": false, "sd3_checkbox": true, "LoRA_type": "Standard",
                                              "sd3_t5xxl": "/m/t5.safetensors"})", "sd3.json");
  EXPECT_EQ(sd3.config.getString("model_family"), "sd3");
  EXPECT_EQ(textFor(sd3.carried, "sd3_checkbox"), "sd3_checkbox true -> model_family = \"sd3\"");
  EXPECT_EQ(textFor(sd3.carried, "LoRA_type"), "LoRA_type \"Standard\" -> network_module = \"networks.lora_sd3\"");
  EXPECT_EQ(sd3.config.getString("t5xxl"), "/m/t5.safetensors");
  // kohya_ss's DreamBooth and fine-tune tabs run sd3_train.py.
  EXPECT_EQ(family(R"({"sdxl": false, "sd3_checkbox": true, "flux1_checkbox": false})"), "sd3");
  EXPECT_EQ(family(R"({"sdxl_checkbox": false, "sd3_checkbox": true, "train_dir": "/w"})"), "sd3");

  // A family Sinter does not train is said, and the family stays auto.
  KohyaImportResult lumina = importKohyaJson(R"({"sdxl": false, "lumina_checkbox": true, "LoRA_type": "Standard"})", "lumina.json");
  EXPECT_EQ(lumina.config.getString("model_family"), "auto");
  EXPECT_NE(textFor(lumina.notCarried, "lumina_checkbox").find("Sinter does not train Lumina"), std::string::npos);
}

TEST(KohyaImport, DynamoBackendsWithoutSinterEquivalents) {
  KohyaImportResult trt = importKohyaJson(
      R"({"sdxl": true, "LoRA_type": "Standard", "dynamo_backend": "tensorrt", "dynamo_mode": "reduce-overhead",
          "dynamo_use_dynamic": true})", "trt.json");
  EXPECT_TRUE(trt.config.getBool("compile"));
  EXPECT_EQ(trt.config.getString("compile_backend"), "inductor");
  EXPECT_EQ(trt.config.getString("compile_mode"), "reduce-overhead");
  EXPECT_EQ(trt.config.getString("compile_dynamic"), "true");
  EXPECT_NE(textFor(trt.notCarried, "dynamo_backend").find("Sinter has no such backend"), std::string::npos);

  KohyaImportResult sd15 = importKohyaJson(R"({"sdxl": false, "dynamo_backend": "inductor"})", "sd15.json");
  EXPECT_FALSE(sd15.config.has("compile"));
  EXPECT_NE(textFor(sd15.notCarried, "dynamo_backend").find("SDXL and FLUX.1 training only"), std::string::npos);

  KohyaImportResult unsaid = importKohyaJson(R"({"dynamo_backend": "cudagraphs"})", "auto.json");
  EXPECT_EQ(unsaid.config.getString("compile_backend"), "cudagraphs");  // applies once auto detects SDXL or FLUX.1

  KohyaImportResult off = importKohyaJson(R"({"sdxl": true, "dynamo_backend": "no", "dynamo_mode": "max-autotune"})", "off.json");
  EXPECT_FALSE(off.config.has("compile"));
  EXPECT_NE(itemFor(off.atDefaults, "dynamo_backend"), nullptr);
  EXPECT_NE(itemFor(off.atDefaults, "dynamo_mode"), nullptr);
}

TEST(KohyaImport, LengthAndLearningRateRules) {
  // max_train_steps set: epoch only fed kohya_ss's step computation.
  KohyaImportResult steps = importKohyaJson(R"({"sdxl": true, "epoch": 3, "max_train_steps": 500})", "s.json");
  EXPECT_EQ(steps.config.getInt("max_train_steps"), 500);
  EXPECT_FALSE(steps.config.has("max_train_epochs"));
  EXPECT_NE(itemFor(steps.atDefaults, "epoch"), nullptr);
  KohyaImportResult zero = importKohyaJson(R"({"sdxl": true, "epoch": 0, "max_train_steps": 0})", "z.json");
  EXPECT_FALSE(zero.config.has("max_train_epochs"));
  EXPECT_FALSE(zero.config.has("max_train_steps"));  // sd-scripts' 1600, as in kohya_ss
  EXPECT_TRUE(zero.notCarried.empty()) << zero.notCarried.front().text;
  // A U-Net rate with a text encoder rate of 0: kohya_ss trains the U-Net's LoRA only.
  KohyaImportResult te = importKohyaJson(
      R"({"LoRA_type": "Standard", "sdxl": true, "text_encoder_lr": 0, "unet_lr": 1e-4, "learning_rate": 1e-4})", "te.json");
  EXPECT_TRUE(te.config.getBool("network_train_unet_only"));
  EXPECT_FALSE(te.config.has("text_encoder_lr"));
  KohyaImportResult unet = importKohyaJson(
      R"({"LoRA_type": "Standard", "sdxl": true, "text_encoder_lr": 5e-5, "unet_lr": 0})", "unet.json");
  EXPECT_TRUE(unet.config.getBool("network_train_text_encoder_only"));
  EXPECT_DOUBLE_EQ(unet.config.getDouble("text_encoder_lr"), 5e-5);
  // FLUX: kohya_ss passes [text_encoder_lr, t5xxl_lr], which networks.lora_flux reads as T5-XXL's
  // rate with train_t5xxl; for SDXL networks.lora reads the first only.
  KohyaImportResult flux = importKohyaJson(R"({"LoRA_type": "Flux1", "flux1_checkbox": true, "train_t5xxl": true,
      "text_encoder_lr": 5e-5, "t5xxl_lr": 1e-5, "unet_lr": 1e-4})", "flux.json");
  EXPECT_DOUBLE_EQ(flux.config.getDouble("t5xxl_lr"), 1e-5);
  EXPECT_EQ(textFor(flux.carried, "t5xxl_lr"), "t5xxl_lr 1e-05 -> t5xxl_lr (text_encoder_lr's second value in sd-scripts)");
  EXPECT_EQ(flux.config.getList("network_args"), std::vector<std::string>{"train_t5xxl=True"});
  EXPECT_TRUE(flux.notCarried.empty()) << flux.notCarried.front().text;
  KohyaImportResult sdxl = importKohyaJson(R"({"LoRA_type": "Standard", "sdxl": true, "text_encoder_lr": 5e-5, "t5xxl_lr": 1e-5})", "x.json");
  EXPECT_FALSE(sdxl.config.has("t5xxl_lr"));
  EXPECT_NE(itemFor(sdxl.atDefaults, "t5xxl_lr"), nullptr);
}

TEST(KohyaImport, BadFilesAndWrongValueTypes) {
  EXPECT_THROW(importKohyaJson("{not json", "x.json"), ConfigError);
  EXPECT_THROW(importKohyaJson("[1,2]", "x.json"), ConfigError);
  try {
    importKohyaJson("{\"a\": ", "cut.json");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.diagnostics()[0].where.file, "cut.json");
  }
  KohyaImportResult r = importKohyaJson(R"({"sdxl": true, "train_batch_size": "two", "learning_rate": 1e-5})", "db.json");
  EXPECT_EQ(r.config.getString("training_type"), "dreambooth");
  EXPECT_NE(textFor(r.notCarried, "train_batch_size").find("not a number"), std::string::npos);
  EXPECT_DOUBLE_EQ(r.config.getDouble("learning_rate"), 1e-5);
}

TEST(KohyaImport, AcceleratesProcessCountIsTheGpusSetting) {
  auto import = [](const std::string& extra) {
    return importKohyaJson("{\"LoRA_type\": \"Standard\", \"sdxl\": true" + extra + "}", "gpus.json");
  };
  EXPECT_EQ(import("").processes, 0);
  KohyaImportResult two = import(", \"num_processes\": 2, \"multi_gpu\": true, \"num_machines\": 1");
  EXPECT_EQ(two.processes, 2);
  EXPECT_EQ(textFor(two.carried, "num_processes"), "num_processes 2 -> GPUs 2");
  EXPECT_TRUE(two.notCarried.empty()) << two.notCarried.front().text;
  EXPECT_FALSE(two.config.has("num_processes"));
  EXPECT_EQ(import(", \"num_processes\": \"4\"").processes, 4);  // the GUI stores numbers as strings too
  EXPECT_EQ(import(", \"num_processes\": 1").processes, 1);
  KohyaImportResult bad = import(", \"num_processes\": \"many\"");
  EXPECT_EQ(bad.processes, 0);
  EXPECT_TRUE(mentions(bad.notCarried, "num_processes \"many\" is not a number of GPUs"));
  KohyaImportResult hosts = import(", \"num_processes\": 2, \"num_machines\": 2");
  EXPECT_TRUE(mentions(hosts.notCarried, "num_machines 2: machines: start sinter-runner on each with torchrun's environment"));
}

// The import's list of network_args the runner trains is the runner's own list.
TEST(KohyaImport, RunnerNetworkArgsMatchTheRunnersSource) {
  std::ifstream in(std::string(SINTER_SOURCE_DIR) + "/runner/network/lora_network.cpp");
  ASSERT_TRUE(in) << "runner/network/lora_network.cpp";
  std::stringstream text;
  text << in.rdbuf();
  const std::string source = text.str();
  const std::size_t start = source.find("supportedNetworkArgs() {");
  ASSERT_NE(start, std::string::npos);
  const std::string body = source.substr(start, source.find("};", start) - start);
  std::set<std::string> runner;
  const std::regex quoted("\"([a-z0-9_]+)\"");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), quoted); it != std::sregex_iterator(); ++it)
    runner.insert((*it)[1].str());
  EXPECT_EQ(runner, std::set<std::string>(sinterRunnerNetworkArgs().begin(), sinterRunnerNetworkArgs().end()));
}

// log_with "wandb": no W&B client here; with a logging folder the log goes to TensorBoard, without
// one nothing is logged, and training is the same either way (the runner refuses "wandb" itself).
TEST(KohyaImport, WandbLoggingBecomesTensorBoardOrIsNotCarried) {
  KohyaImportResult none = importKohyaJson(R"({"LoRA_type": "Standard", "sdxl": true, "log_with": "wandb"})", "w.json");
  EXPECT_FALSE(none.config.has("log_with"));
  ASSERT_NE(itemFor(none.notCarried, "log_with"), nullptr);
  EXPECT_TRUE(mentions(none.notCarried, "no W&B client"));
  KohyaImportResult folder =
      importKohyaJson(R"({"LoRA_type": "Standard", "sdxl": true, "log_with": "wandb", "logging_dir": "/tmp/logs"})", "w.json");
  EXPECT_EQ(folder.config.getString("log_with"), "tensorboard");
  EXPECT_NE(itemFor(folder.carried, "log_with"), nullptr);
}

// A kohya_ss key that is an sd-scripts option Sinter ignores (core/foreign_options.cpp) is at its
// defaults with the foreign option's reason, not "no such setting".
TEST(KohyaImport, IgnoredSdScriptsOptionsCarryTheirReason) {
  KohyaImportResult r = importKohyaJson(R"({"LoRA_type": "Standard", "sdxl": true, "wandb_run_name": "my run"})", "w.json");
  const KohyaImportItem* item = itemFor(r.atDefaults, "wandb_run_name");
  ASSERT_NE(item, nullptr);
  EXPECT_NE(item->text.find("no W&B client"), std::string::npos) << item->text;
  EXPECT_EQ(itemFor(r.notCarried, "wandb_run_name"), nullptr);
}

TEST(KohyaImport, RunnerLycorisArgsMatchTheRunnersSource) {
  std::ifstream in(std::string(SINTER_SOURCE_DIR) + "/runner/network/lycoris_args.cpp");
  ASSERT_TRUE(in) << "runner/network/lycoris_args.cpp";
  std::stringstream text;
  text << in.rdbuf();
  const std::string source = text.str();
  const std::size_t start = source.find("supportedLycorisArgs() {");
  ASSERT_NE(start, std::string::npos);
  const std::string body = source.substr(start, source.find("};", start) - start);
  std::set<std::string> runner;
  const std::regex quoted("\"([a-z0-9_]+)\"");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), quoted); it != std::sregex_iterator(); ++it)
    runner.insert((*it)[1].str());
  EXPECT_EQ(runner, std::set<std::string>(sinterRunnerLycorisArgs().begin(), sinterRunnerLycorisArgs().end()));
}

// SD 1.x/2.x files: v2 gives model_family sd2 and sd-scripts' own v2 flag; a preset without
// max_resolution takes the GUI's default, as kohya_ss does when it loads one.
TEST(KohyaImport, Sd2MarksV2AndAPartialPresetTakesTheGuiResolution) {
  KohyaImportResult v2 = importKohyaJson(R"({"LoRA_type": "Standard", "v2": true, "v_parameterization": true, "clip_skip": 2})", "v2.json");
  EXPECT_EQ(v2.config.getString("model_family"), "sd2");
  EXPECT_TRUE(v2.config.getBool("v2"));
  EXPECT_TRUE(v2.config.getBool("v_parameterization"));
  EXPECT_EQ(v2.config.getInt("clip_skip"), 2);
  EXPECT_EQ(v2.config.getString("resolution"), "512,512");
  bool said = false;
  for (const KohyaImportItem& item : v2.carried) said |= item.text.find("max_resolution absent") != std::string::npos;
  EXPECT_TRUE(said);
  KohyaImportResult given = importKohyaJson(R"({"LoRA_type": "Standard", "max_resolution": "768,768"})", "r.json");
  EXPECT_EQ(given.config.getString("resolution"), "768,768");
}

// kohya_ss's Flux1 panel with model_type "chroma" (its Chroma choice) and no CLIP-L: a Chroma run.
TEST(KohyaImport, FluxPanelsChromaModelType) {
  std::string text = readWholeFile(dataFile("flux_lora_compile_gui.json"));
  const std::string clip = "\"clip_l\": \"/models/flux/clip_l.safetensors\",";
  ASSERT_NE(text.find(clip), std::string::npos);
  text.replace(text.find(clip), clip.size(), "\"clip_l\": \"\", \"model_type\": \"chroma\",");
  const KohyaImportResult r = importKohyaJson(text, "chroma_gui.json");
  expectEveryKeyReportedOnce(text, r);
  EXPECT_EQ(r.config.getString("model_family"), "flux");
  EXPECT_EQ(r.config.getString("model_type"), "chroma");
  EXPECT_FALSE(r.config.has("clip_l"));
  EXPECT_TRUE(r.config.getBool("apply_t5_attn_mask"));
}

// kohya_ss's LoRA tab with its SD3 checkbox (lora_gui.py): sd3_train_network.py with networks.lora_sd3,
// the SD3 panel's fields under sd-scripts' names, the Flux1 panel's (clip_l, t5xxl,
// t5xxl_max_token_length, apply_t5_attn_mask) not passed on.
TEST(KohyaImport, Sd3LoraCarriesItsPanel) {
  KohyaImportResult r = importFixture("sd3_lora_gui.json");
  const Config& c = r.config;
  EXPECT_EQ(c.getString("model_family"), "sd3");
  EXPECT_EQ(c.getString("training_type"), "lora");
  EXPECT_EQ(c.getString("network_module"), "networks.lora_sd3");
  EXPECT_EQ(c.getString("clip_l"), "/models/sd3/clip_l.safetensors");   // sd3_clip_l
  EXPECT_EQ(c.getString("clip_g"), "/models/sd3/clip_g.safetensors");
  EXPECT_EQ(c.getString("t5xxl"), "/models/sd3/t5xxl_fp16.safetensors");  // sd3_t5xxl, not the Flux1 panel's t5xxl
  EXPECT_TRUE(c.getBool("cache_text_encoder_outputs"));
  EXPECT_TRUE(c.getBool("cache_text_encoder_outputs_to_disk"));
  EXPECT_DOUBLE_EQ(c.getDouble("clip_l_dropout_rate"), 0.1);
  EXPECT_DOUBLE_EQ(c.getDouble("clip_g_dropout_rate"), 0.1);
  EXPECT_DOUBLE_EQ(c.getDouble("t5_dropout_rate"), 0.2);
  EXPECT_TRUE(c.getBool("enable_scaled_pos_embed"));
  EXPECT_DOUBLE_EQ(c.getDouble("pos_emb_random_crop_rate"), 0.2);
  EXPECT_EQ(c.getString("weighting_scheme"), "logit_normal");
  EXPECT_DOUBLE_EQ(c.getDouble("mode_scale"), 1.29);
  EXPECT_EQ(c.getInt("max_timestep"), 1000);
  EXPECT_TRUE(c.getBool("network_train_unet_only"));  // text_encoder_lr 0
  EXPECT_FALSE(c.has("t5xxl_max_token_length"));      // the Flux1 panel's: SD 3's 256 applies
  EXPECT_FALSE(c.has("max_token_length"));            // sd3_train_network.py does not use it
  EXPECT_FALSE(c.has("fused_backward_pass"));

  EXPECT_EQ(textFor(r.carried, "sd3_checkbox"), "sd3_checkbox true -> model_family = \"sd3\"");
  EXPECT_EQ(textFor(r.carried, "sd3_clip_l"), "sd3_clip_l -> clip_l = \"/models/sd3/clip_l.safetensors\"");
  EXPECT_EQ(textFor(r.carried, "sd3_t5xxl"), "sd3_t5xxl -> t5xxl = \"/models/sd3/t5xxl_fp16.safetensors\"");
  EXPECT_EQ(textFor(r.carried, "sd3_clip_l_dropout_rate"), "sd3_clip_l_dropout_rate -> clip_l_dropout_rate = 0.1");
  EXPECT_EQ(textFor(r.carried, "sd3_t5_dropout_rate"), "sd3_t5_dropout_rate -> t5_dropout_rate = 0.2");
  EXPECT_EQ(textFor(r.carried, "sd3_enable_scaled_pos_embed"), "sd3_enable_scaled_pos_embed -> enable_scaled_pos_embed = true");
  EXPECT_EQ(textFor(r.carried, "sd3_cache_text_encoder_outputs"),
            "sd3_cache_text_encoder_outputs -> cache_text_encoder_outputs = true");
  EXPECT_EQ(textFor(r.carried, "clip_g_dropout_rate"), "clip_g_dropout_rate = 0.1");
  EXPECT_EQ(textFor(r.atDefaults, "t5xxl"),
            "t5xxl \"/models/flux/t5xxl_fp16.safetensors\": kohya_ss's lora tab passes it on only for FLUX.1");
  EXPECT_EQ(textFor(r.atDefaults, "t5xxl_max_token_length"), "t5xxl_max_token_length 512: kohya_ss passes it on only for FLUX.1");
  EXPECT_NE(textFor(r.atDefaults, "sd3_text_encoder_batch_size").find("changes only speed"), std::string::npos);
  EXPECT_NE(textFor(r.atDefaults, "max_token_length").find("not used in SD 3.x training"), std::string::npos);
  for (const char* key : {"clip_l", "apply_t5_attn_mask", "save_clip", "save_t5xxl", "t5xxl_device", "t5xxl_dtype",
                          "sd3_disable_mmap_load_safetensors", "sd3_fused_backward_pass", "flux1_checkbox",
                          "flux1_cache_text_encoder_outputs", "logit_mean", "blocks_to_swap", "fp8_base", "clip_skip"})
    EXPECT_NE(itemFor(r.atDefaults, key), nullptr) << key;
  EXPECT_TRUE(r.notCarried.empty()) << r.notCarried.front().text;
  EXPECT_FALSE(hasErrors(validateConfig(c))) << formatAll(validateConfig(c));
  const std::string toml = writeConfigToml(c);
  EXPECT_NE(toml.find("clip_g = \"/models/sd3/clip_g.safetensors\""), std::string::npos);
  EXPECT_NE(toml.find("network_module = \"networks.lora_sd3\""), std::string::npos);
}

// What kohya_ss passes for SD3 is carried: block swap (as sd3_train_network's blocks_to_swap),
// fp8_base, and its T5-XXL rate, the second of text_encoder_lr's values, which networks.lora_sd3 gives
// CLIP-G and T5-XXL, as t5xxl_lr.
TEST(KohyaImport, Sd3SettingsAreCarried) {
  const std::string text = R"({"LoRA_type": "Standard", "sdxl": false, "sd3_checkbox": true, "blocks_to_swap": 8,
                               "fp8_base": true, "text_encoder_lr": 1e-5, "t5xxl_lr": 5e-6, "unet_lr": 1e-4,
                               "sd3_fused_backward_pass": true, "save_clip": true})";
  const KohyaImportResult r = importKohyaJson(text, "sd3.json");
  expectEveryKeyReportedOnce(text, r);
  EXPECT_EQ(r.config.getInt("blocks_to_swap"), 8);
  EXPECT_EQ(textFor(r.notCarried, "blocks_to_swap"), "(no item for blocks_to_swap)");
  EXPECT_TRUE(r.config.getBool("fp8_base"));
  EXPECT_DOUBLE_EQ(r.config.getDouble("t5xxl_lr"), 5e-6);
  EXPECT_EQ(textFor(r.carried, "t5xxl_lr"), "t5xxl_lr 5e-06 -> t5xxl_lr (text_encoder_lr's second value in sd-scripts)");
  EXPECT_DOUBLE_EQ(r.config.getDouble("text_encoder_lr"), 1e-5);
  // fused_backward_pass is for the full-weight tabs; save_clip does nothing in sd-scripts.
  EXPECT_NE(textFor(r.atDefaults, "sd3_fused_backward_pass").find("not used in lora training"), std::string::npos);
  EXPECT_NE(textFor(r.atDefaults, "save_clip").find("DOES NOT WORK"), std::string::npos);
}

// kohya_ss's own SD3 DreamBooth preset (bmaltais/kohya_ss presets/dreambooth/sd3_bdsqlsz_v2.json,
// commit ed55e819): the DreamBooth tab saves the SD3 panel's text encoders as clip_l/clip_g/t5xxl;
// sd3_train.py.
TEST(KohyaImport, Sd3DreamBoothPreset) {
  KohyaImportResult r = importFixture("sd3_bdsqlsz_v2_dreambooth.json");
  const Config& c = r.config;
  EXPECT_EQ(c.getString("model_family"), "sd3");
  EXPECT_EQ(c.getString("training_type"), "dreambooth");
  EXPECT_EQ(c.getString("clip_l"), "H:/ComfyUI2/models/clip/clip_l.safetensors");
  EXPECT_EQ(c.getString("clip_g"), "H:/ComfyUI2/models/clip/clip_g.safetensors");
  EXPECT_EQ(c.getString("t5xxl"), "H:/ComfyUI2/models/clip/t5xxl_fp8_e4m3fn.safetensors");
  EXPECT_TRUE(c.getBool("cache_text_encoder_outputs"));
  EXPECT_TRUE(c.getBool("cache_text_encoder_outputs_to_disk"));
  EXPECT_EQ(c.getString("weighting_scheme"), "logit_normal");
  EXPECT_EQ(c.getString("optimizer_type"), "PagedAdamW8bit");
  EXPECT_TRUE(c.getBool("gradient_checkpointing"));
  EXPECT_FALSE(c.has("max_token_length"));
  EXPECT_FALSE(c.has("clip_skip"));
  EXPECT_FALSE(c.has("learning_rate_te1"));  // kohya_ss passes it for SDXL only
  EXPECT_EQ(textFor(r.carried, "clip_l"), "clip_l = \"H:/ComfyUI2/models/clip/clip_l.safetensors\"");
  EXPECT_EQ(textFor(r.atDefaults, "fused_backward_pass"),
            "fused_backward_pass false: kohya_ss's dreambooth tab passes it on for other families than SD 3.x and FLUX.1");
  EXPECT_TRUE(r.notCarried.empty()) << r.notCarried.front().text;
  EXPECT_FALSE(hasErrors(validateConfig(c))) << formatAll(validateConfig(c));

  // The fine-tune tab passes train_text_encoder for every family; sd3_train.py trains CLIP-L and G with it.
  const KohyaImportResult ft = importKohyaJson(R"({"sdxl_checkbox": false, "sd3_checkbox": true, "train_dir": "",
                                                   "train_text_encoder": true, "learning_rate_te1": 1e-6})", "sd3_ft.json");
  EXPECT_EQ(ft.config.getString("training_type"), "finetune");
  EXPECT_TRUE(ft.config.getBool("train_text_encoder"));
  EXPECT_FALSE(ft.config.has("learning_rate_te1"));
  EXPECT_NE(textFor(ft.atDefaults, "learning_rate_te1").find("kohya_ss passes it for SDXL only"), std::string::npos);
}

// The full-weight tabs: the Flux1 panel's text encoders are flux1_clip_l/flux1_t5xxl, and
// clip_l/t5xxl are the SD3 panel's, passed on only with sd3_checkbox.
TEST(KohyaImport, FullWeightTabsNameEachPanelsTextEncoders) {
  const std::string text = R"({"sdxl": false, "flux1_checkbox": true, "flux1_clip_l": "/m/flux_clip_l.safetensors",
                               "flux1_t5xxl": "/m/flux_t5.safetensors", "clip_l": "/m/sd3_clip_l.safetensors",
                               "t5xxl": "", "flux_fused_backward_pass": true, "fused_backward_pass": false})";
  const KohyaImportResult r = importKohyaJson(text, "flux_db.json");
  expectEveryKeyReportedOnce(text, r);
  EXPECT_EQ(r.config.getString("training_type"), "dreambooth");
  EXPECT_EQ(r.config.getString("clip_l"), "/m/flux_clip_l.safetensors");
  EXPECT_EQ(r.config.getString("t5xxl"), "/m/flux_t5.safetensors");
  EXPECT_TRUE(r.config.getBool("fused_backward_pass"));
  EXPECT_EQ(textFor(r.carried, "flux1_clip_l"), "flux1_clip_l -> clip_l = \"/m/flux_clip_l.safetensors\"");
  EXPECT_EQ(textFor(r.atDefaults, "clip_l"),
            "clip_l \"/m/sd3_clip_l.safetensors\": kohya_ss's dreambooth tab passes it on only for SD 3.x");
  EXPECT_TRUE(r.notCarried.empty()) << r.notCarried.front().text;
}

// kohya_ss's Textual Inversion tab (textual_inversion_gui.py): its token_string marks the tab, its
// template menu becomes sd-scripts' template switches, and its embedding settings carry as they are.
TEST(KohyaImport, TextualInversionTabCarriesTheEmbeddingSettings) {
  KohyaImportResult r = importFixture("sd15_textual_inversion_gui.json");
  const Config& c = r.config;
  EXPECT_EQ(c.getString("training_type"), "textual_inversion");
  EXPECT_EQ(c.tab(), Tab::TextualInversion);
  EXPECT_EQ(c.getString("model_family"), "sd15");  // neither sdxl nor v2 ticked
  EXPECT_EQ(c.getString("token_string"), "mychar");
  EXPECT_EQ(c.getString("init_word"), "girl");
  EXPECT_EQ(c.getInt("num_vectors_per_token"), 4);
  EXPECT_TRUE(c.getBool("use_object_template"));
  EXPECT_FALSE(c.getBool("use_style_template"));
  EXPECT_FALSE(c.has("weights"));
  EXPECT_EQ(c.getInt("max_train_steps"), 1600);
  EXPECT_DOUBLE_EQ(c.getDouble("learning_rate"), 5e-4);
  EXPECT_EQ(c.getString("lr_scheduler"), "cosine");
  EXPECT_EQ(textFor(r.carried, "template"), "template \"object template\" -> use_object_template = true");
  EXPECT_EQ(textFor(r.carried, "token_string"), "token_string = \"mychar\"");
  EXPECT_NE(itemFor(r.atDefaults, "weights"), nullptr);
  EXPECT_NE(itemFor(r.notCarried, "sample_prompts"), nullptr);
  EXPECT_FALSE(hasErrors(validateConfig(c))) << formatAll(validateConfig(c));

  // The other template choices, and one kohya_ss does not offer.
  nlohmann::json root = nlohmann::json::parse(readWholeFile(dataFile("sd15_textual_inversion_gui.json")));
  root["template"] = "style template";
  root["sdxl"] = true;
  KohyaImportResult style = importKohyaJson(root.dump(), "style.json");
  EXPECT_TRUE(style.config.getBool("use_style_template"));
  EXPECT_FALSE(style.config.getBool("use_object_template"));
  EXPECT_EQ(style.config.getString("model_family"), "sdxl");
  root["template"] = "caption";
  KohyaImportResult caption = importKohyaJson(root.dump(), "caption.json");
  EXPECT_FALSE(caption.config.has("use_style_template") || caption.config.has("use_object_template"));
  EXPECT_EQ(textFor(caption.atDefaults, "template"), "template \"caption\": the captions are used, as in Sinter");
  root["template"] = "sentence";
  EXPECT_NE(textFor(importKohyaJson(root.dump(), "bad.json").notCarried, "template").find("kohya_ss offers"), std::string::npos);
}
