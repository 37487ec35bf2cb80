#include <gtest/gtest.h>

#include <algorithm>

#include "core/kohya_import.h"
#include "core/toml_config.h"
#include "core/validation.h"

using namespace sinter;

namespace {
bool mentions(const std::vector<std::string>& list, const std::string& what) {
  return std::any_of(list.begin(), list.end(), [&](const std::string& s) { return s.find(what) != std::string::npos; });
}
}  // namespace

TEST(KohyaImport, MapsAGuiLoraPreset) {
  KohyaImportResult r = importKohyaJsonFile(std::string(SINTER_TEST_DATA_DIR) + "/kohya/sdxl_lora_gui.json");
  const Config& c = r.config;
  EXPECT_EQ(c.getString("model_family"), "sdxl");
  EXPECT_EQ(c.getString("training_type"), "lora");
  EXPECT_EQ(c.getString("network_module"), "networks.lora");
  EXPECT_EQ(c.getString("optimizer_type"), "AdamW8bit");               // optimizer -> optimizer_type
  EXPECT_EQ(c.getString("resolution"), "1024,1024");                   // max_resolution -> resolution
  EXPECT_EQ(c.getInt("max_train_epochs"), 10);                         // epoch -> max_train_epochs
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
  EXPECT_EQ(c.getInt("max_data_loader_n_workers"), 0);

  EXPECT_TRUE(mentions(r.unmapped, "scale_weight_norms"));
  EXPECT_TRUE(mentions(r.unmapped, "num_cpu_threads_per_process"));
  EXPECT_TRUE(mentions(r.unmapped, "no_such_flag"));
  EXPECT_FALSE(mentions(r.unmapped, "conv_dim"));  // only meaningful for LyCORIS types
  EXPECT_FALSE(mentions(r.unmapped, "use_wandb"));  // false: nothing lost
  EXPECT_TRUE(mentions(r.notes, "optimizer -> optimizer_type"));

  // What was imported is a valid config that saves.
  EXPECT_FALSE(hasErrors(validateConfig(c))) << formatAll(validateConfig(c));
  EXPECT_NE(writeConfigToml(c).find("optimizer_type = \"AdamW8bit\""), std::string::npos);
}

TEST(KohyaImport, UnsupportedLoraTypeAndBadFiles) {
  KohyaImportResult r = importKohyaJson(R"({"LoRA_type": "LyCORIS/LoCon", "sdxl": true})", "locon.json");
  EXPECT_TRUE(mentions(r.unmapped, "LyCORIS/LoCon"));
  EXPECT_THROW(importKohyaJson("{not json", "x.json"), ConfigError);
  EXPECT_THROW(importKohyaJson("[1,2]", "x.json"), ConfigError);
  try {
    importKohyaJson("{\"a\": ", "cut.json");
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.diagnostics()[0].where.file, "cut.json");
  }
}

TEST(KohyaImport, DreamBoothAndWrongValueTypes) {
  KohyaImportResult r = importKohyaJson(R"({"sdxl": true, "train_batch_size": "two", "learning_rate": 1e-5})", "db.json");
  EXPECT_EQ(r.config.getString("training_type"), "dreambooth");
  EXPECT_TRUE(mentions(r.unmapped, "train_batch_size"));
  EXPECT_DOUBLE_EQ(r.config.getDouble("learning_rate"), 1e-5);
}

TEST(KohyaImport, AcceleratesProcessCountIsTheGpusSetting) {
  auto import = [](const std::string& extra) {
    return importKohyaJson("{\"LoRA_type\": \"Standard\", \"sdxl\": true" + extra + "}", "gpus.json");
  };
  EXPECT_EQ(import("").processes, 0);
  KohyaImportResult two = import(", \"num_processes\": 2, \"multi_gpu\": true, \"num_machines\": 1");
  EXPECT_EQ(two.processes, 2);
  EXPECT_TRUE(mentions(two.notes, "num_processes 2 -> GPUs 2"));
  EXPECT_TRUE(two.unmapped.empty()) << two.unmapped.front();
  EXPECT_FALSE(two.config.has("num_processes"));
  EXPECT_EQ(import(", \"num_processes\": \"4\"").processes, 4);  // the GUI stores numbers as strings too
  EXPECT_EQ(import(", \"num_processes\": 1").processes, 1);
  KohyaImportResult bad = import(", \"num_processes\": \"many\"");
  EXPECT_EQ(bad.processes, 0);
  EXPECT_TRUE(mentions(bad.unmapped, "num_processes: \"many\" is not a number of GPUs"));
  KohyaImportResult hosts = import(", \"num_processes\": 2, \"num_machines\": 2");
  EXPECT_TRUE(mentions(hosts.unmapped, "num_machines: 2 machines: start sinter-runner on each with torchrun's environment"));
}
