// The checkpoint grid (`sinter-runner --sample_grid OUT.png FILE ...`, issue 57) through the real
// runner on tiny models on the CPU: a LoRA run's saved files and a DreamBooth run's checkpoints each
// make a row after the base model's, every cell being the sample the run itself rendered at that
// save (same prompt, same seed), with the layout in the PNG's text chunk; a textual inversion run's
// embedding files and a pivotal tuning run's LoRA files with their bundled embeddings likewise;
// files that are missing, of another kind or another model family, and a config without sample
// prompts, are refused by name before anything is written.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include "cli/sample_grid_command.h"
#include "data/image_decode.h"
#include "io/safetensors.h"
#include "runner_process.h"
#include "sample/png_file.h"

namespace fs = std::filesystem;
using sinter::test::eventsOfType;
using sinter::test::ProcessResult;
using sinter::test::runRunner;
using sinter::test::writeText;
namespace events = sinter::events;

namespace {

constexpr int kSide = 64;  // every prompt's size, so every cell's

fs::path g_root;  // the inputs, made once for the test program's process; each test writes under its own folder

class SampleGrid : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_sample_grid_" + std::to_string(::getpid()));
    fs::create_directories(g_root);
    auto input = [](const std::string& rel) { return (g_root / rel).string(); };
    ASSERT_EQ(runRunner({"--init_checkpoint", input("tiny_sdxl.safetensors"), "--model_family", "sdxl", "--model_size", "tiny", "--seed", "1"})
                  .exitCode,
              0);
    ASSERT_EQ(runRunner({"--init_dataset", input("images"), "--seed", "1"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_tokenizer", input("tokenizer")}).exitCode, 0);
    // Two prompts, each with its seed; the second guided by a negative prompt.
    writeText(input("prompts.txt"), "a red circle on white --w 64 --h 64 --d 11 --s 4\n"
                                    "a blue square on yellow --n red --w 64 --h 64 --d 12 --s 4 --l 5\n");
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
  void SetUp() override {
    root_ = g_root / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::create_directories(root_);
  }

  // A shared input (`g_root`), or this test's own file.
  static std::string input(const std::string& rel) { return (g_root / rel).string(); }
  std::string path(const std::string& rel) const { return (root_ / rel).string(); }

  // A run of 6 steps saving at step 3 and at its end, sampling `prompts` (the shared prompts.txt
  // where empty) before the first step and at each save.
  std::string writeConfig(const std::string& name, const std::string& extra, const std::string& prompts = "") const {
    writeText(path(name), "model_family = \"sdxl\"\n"
                          "pretrained_model_name_or_path = \"" + input("tiny_sdxl.safetensors") + "\"\n"
                          "clip_tokenizer = \"" + input("tokenizer") + "\"\n"
                          "train_data_dir = \"" + input("images") + "\"\n"
                          "output_dir = \"" + path("out") + "\"\n"
                          "output_name = \"t\"\n"
                          "resolution = \"64,64\"\n"
                          "caption_extension = \".txt\"\n"
                          "max_data_loader_n_workers = 0\n"
                          "seed = 7\n"
                          "train_batch_size = 4\n"
                          "max_train_steps = 6\n"
                          "save_every_n_steps = 3\n"
                          "mixed_precision = \"no\"\n"
                          "cache_latents = true\n"
                          "sample_prompts = \"" + (prompts.empty() ? input("prompts.txt") : prompts) + "\"\n"
                          "sample_at_first = true\n"
                          "sample_every_n_steps = 3\n" + extra);
    return path(name);
  }

  // A textual inversion run of the same schedule (two vectors from "red", the object templates),
  // sampling ti_prompts.txt.
  std::string writeTextualInversionConfig(const std::string& name) const {
    return writeConfig(name, "training_type = \"textual_inversion\"\ntoken_string = \"zz\"\ninit_word = \"red\"\n"
                             "num_vectors_per_token = 2\nuse_object_template = true\nlearning_rate = 0.01\n",
                       path("ti_prompts.txt"));
  }

  // The sample the run wrote at `step` for prompt `index`.
  sinter::data::RgbImage trainingSample(long long step, int index) const {
    char prefix[32];
    std::snprintf(prefix, sizeof prefix, "t_%06lld_%02d_", step, index);
    for (const auto& entry : fs::directory_iterator(path("out/sample")))
      if (entry.path().filename().string().rfind(prefix, 0) == 0) return sinter::data::loadImageFile(entry.path().string());
    ADD_FAILURE() << "no sample " << prefix << "* in " << path("out/sample");
    return {};
  }

  fs::path root_;
};

// The largest and the mean difference of a grid cell from an image of the cell's size.
struct Difference {
  int largest = 0;
  double mean = 0;
};
Difference cellDifference(const sinter::data::RgbImage& grid, int row, int column, const sinter::data::RgbImage& image) {
  Difference d;
  long long sum = 0;
  for (int y = 0; y < kSide; ++y)
    for (int x = 0; x < kSide; ++x)
      for (int k = 0; k < 3; ++k) {
        const int diff = std::abs(grid.pixel(column * kSide + x, row * kSide + y)[k] - image.pixel(x, y)[k]);
        d.largest = std::max(d.largest, diff);
        sum += diff;
      }
  d.mean = static_cast<double>(sum) / (kSide * kSide * 3);
  return d;
}

sinter::data::RgbImage cellOf(const sinter::data::RgbImage& grid, int row, int column) {
  sinter::data::RgbImage cell(kSide, kSide);
  for (int y = 0; y < kSide; ++y)
    for (int x = 0; x < kSide; ++x) std::copy_n(grid.pixel(column * kSide + x, row * kSide + y), 3, cell.pixel(x, y));
  return cell;
}

nlohmann::json layoutOf(const std::string& png) {
  for (const auto& [keyword, text] : sinter::sample::readPngText(png))
    if (keyword == "sinter_grid") return nlohmann::json::parse(text);
  ADD_FAILURE() << png << " has no sinter_grid text chunk";
  return {};
}

// Each cell against the run's own sample of that save and prompt (both rendered by the family's
// sampler from one seed: the same pixels, up to the CPU's rounding), the base row against the LoRA
// rows, and the layout the app labels the grid from.
void expectGridOfRunSamples(const std::string& grid, const std::vector<long long>& rowSteps,
                            const std::function<sinter::data::RgbImage(long long, int)>& sampleAt) {
  const sinter::data::RgbImage image = sinter::data::loadImageFile(grid);
  const int rows = static_cast<int>(rowSteps.size());
  ASSERT_EQ(image.width, 2 * kSide);
  ASSERT_EQ(image.height, rows * kSide);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < 2; ++c) {
      const Difference d = cellDifference(image, r, c, sampleAt(rowSteps[r], c));
      EXPECT_LE(d.largest, 4) << "row " << r << ", prompt " << c;
      EXPECT_LT(d.mean, 0.25) << "row " << r << ", prompt " << c;
    }
  // The trained rows are other pictures than the base model's.
  for (int c = 0; c < 2; ++c) EXPECT_GT(cellDifference(image, rows - 1, c, cellOf(image, 0, c)).mean, 1.0) << "prompt " << c;
}

}  // namespace

TEST_F(SampleGrid, TwoLoraFilesMakeARowEachOfTheirOwnSamples) {
  const std::string config = writeConfig("lora.toml", "network_dim = 4\nnetwork_alpha = 4.0\nlearning_rate = 0.02\n"
                                                      "network_train_unet_only = true\n");
  const ProcessResult trained = runRunner({"--config_file", config});
  ASSERT_EQ(trained.exitCode, 0) << trained.err;
  const std::string atStep3 = path("out/t-step00000003.safetensors"), last = path("out/t.safetensors");
  ASSERT_TRUE(fs::exists(atStep3) && fs::exists(last));

  const std::string grid = path("grids/grid.png");  // its folder is made
  const ProcessResult r = runRunner({"--config_file", config, "--sample_grid", grid, atStep3, last, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  expectGridOfRunSamples(grid, {0, 3, 6}, [this](long long step, int index) { return trainingSample(step, index); });

  const nlohmann::json layout = layoutOf(grid);
  EXPECT_EQ(layout["cell_width"], kSide);
  EXPECT_EQ(layout["cell_height"], kSide);
  EXPECT_EQ(layout["model"], "tiny_sdxl.safetensors");
  ASSERT_EQ(layout["rows"].size(), 3u);
  EXPECT_EQ(layout["rows"][0]["base"], true);
  EXPECT_EQ(layout["rows"][0]["step"], 0);
  EXPECT_EQ(layout["rows"][1]["file"], "t-step00000003.safetensors");
  EXPECT_EQ(layout["rows"][1]["path"], atStep3);
  EXPECT_EQ(layout["rows"][1]["step"], 3);  // ss_steps
  EXPECT_EQ(layout["rows"][2]["file"], "t.safetensors");
  EXPECT_EQ(layout["rows"][2]["step"], 6);
  ASSERT_EQ(layout["columns"].size(), 2u);
  EXPECT_EQ(layout["columns"][0]["prompt"], "a red circle on white");
  EXPECT_EQ(layout["columns"][0]["seed"], 11);
  EXPECT_EQ(layout["columns"][1]["negative_prompt"], "red");
  EXPECT_EQ(layout["columns"][1]["scale"], 5.0);

  // A grid_cell event for each image, in row order, then the file.
  const auto cells = eventsOfType<events::GridCell>(r);
  ASSERT_EQ(cells.size(), 6u);
  EXPECT_EQ(cells[0].file, "");
  EXPECT_EQ(cells[2].row, 1);
  EXPECT_EQ(cells[2].file, atStep3);
  EXPECT_EQ(cells[5].rows, 3);
  EXPECT_EQ(cells[5].columns, 2);
  const auto saved = eventsOfType<events::Saved>(r);
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(saved[0].kind, "grid");
  EXPECT_EQ(saved[0].path, grid);
  EXPECT_EQ(sinter::test::doneStatus(r), "completed");
}

// Under mixed precision the models read bf16 copies of the LoRA's float32 weights: the run's samples
// after a step show that step's weights (the copies follow the weights first), as the grid of the
// files saved at the same steps does.
TEST_F(SampleGrid, UnderMixedPrecisionTheRunsSamplesShowTheStepsWeights) {
  const std::string config = writeConfig("bf16.toml", "network_dim = 4\nnetwork_alpha = 4.0\nlearning_rate = 0.02\n"
                                                      "network_train_unet_only = true\nsave_precision = \"float\"\n");
  std::string text;
  {
    std::ifstream in(config);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  text.replace(text.find("mixed_precision = \"no\""), 22, "mixed_precision = \"bf16\"");
  writeText(config, text);
  const ProcessResult trained = runRunner({"--config_file", config});
  ASSERT_EQ(trained.exitCode, 0) << trained.err;
  const std::string grid = path("grid.png");
  const ProcessResult r = runRunner({"--config_file", config, "--sample_grid", grid, path("out/t-step00000003.safetensors"),
                                     path("out/t.safetensors")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  // The trained rows (the base row is left out: the run renders it with its LoRA's zero up-factors in
  // the forward pass, which bf16 rounds otherwise than the base model alone).
  const sinter::data::RgbImage image = sinter::data::loadImageFile(grid);
  for (int row = 1; row <= 2; ++row)
    for (int c = 0; c < 2; ++c) {
      const Difference d = cellDifference(image, row, c, trainingSample(3 * row, c));
      EXPECT_LE(d.largest, 4) << "row " << row << ", prompt " << c;
      EXPECT_LT(d.mean, 0.25) << "row " << row << ", prompt " << c;
    }
}

// DreamBooth's saves are whole checkpoints: each row loads one as the run's model.
TEST_F(SampleGrid, DreamBoothCheckpointsAreRowsToo) {
  const std::string config = writeConfig("db.toml", "training_type = \"dreambooth\"\nlearning_rate = 0.002\n");
  const ProcessResult trained = runRunner({"--config_file", config});
  ASSERT_EQ(trained.exitCode, 0) << trained.err;
  const std::string grid = path("out/grid.png");
  const ProcessResult r =
      runRunner({"--config_file", config, "--sample_grid", grid, path("out/t-step00000003.safetensors"), path("out/t.safetensors")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  expectGridOfRunSamples(grid, {0, 3, 6}, [this](long long step, int index) { return trainingSample(step, index); });
  const nlohmann::json layout = layoutOf(grid);
  EXPECT_EQ(layout["rows"][1]["step"], 3);  // from the file's name: a checkpoint carries no step
  EXPECT_TRUE(layout["rows"][2]["step"].is_null());
}

// Textual inversion: each embedding file the run saved is a row, its rows the text encoders' rows of
// the run's tokens; the first row is the run's start (init_word's rows, its step-0 sample). The
// prompts hold the token, replaced by the run's two tokens as its own samples replace it.
TEST_F(SampleGrid, TextualInversionEmbeddingFilesMakeARowEachOfTheirOwnSamples) {
  writeText(path("ti_prompts.txt"), "a photo of zz on white --w 64 --h 64 --d 11 --s 4\n"
                                    "zz on yellow --n red --w 64 --h 64 --d 12 --s 4 --l 5\n");
  const std::string config = writeTextualInversionConfig("ti.toml");
  const ProcessResult trained = runRunner({"--config_file", config});
  ASSERT_EQ(trained.exitCode, 0) << trained.err;
  const std::string atStep3 = path("out/t-step00000003.safetensors"), last = path("out/t.safetensors");
  ASSERT_TRUE(fs::exists(atStep3) && fs::exists(last));

  const std::string grid = path("ti_grid.png");
  const ProcessResult r = runRunner({"--config_file", config, "--sample_grid", grid, atStep3, last, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  expectGridOfRunSamples(grid, {0, 3, 6}, [this](long long step, int index) { return trainingSample(step, index); });
  const nlohmann::json layout = layoutOf(grid);
  ASSERT_EQ(layout["rows"].size(), 3u);
  EXPECT_EQ(layout["rows"][1]["step"], 3);  // from the file's name
  EXPECT_EQ(layout["columns"][0]["prompt"], "a photo of zz zz1 on white");
  EXPECT_EQ(layout["columns"][1]["negative_prompt"], "red");
  EXPECT_EQ(sinter::test::doneStatus(r), "completed");
}

// A file that is no embedding of this run (another family's keys, other widths or vector counts, a
// LoRA, a checkpoint) is refused naming the file and the key, before the first image.
TEST_F(SampleGrid, EmbeddingFilesOfAnotherRunOrModelAreRefusedByName) {
  writeText(path("ti_prompts.txt"), "a photo of zz --w 64 --h 64 --d 11 --s 4\n");
  const std::string config = writeTextualInversionConfig("ti.toml");
  const std::string grid = path("grid.png");
  const std::string sd15 = path("sd15_embedding.safetensors"), wide = path("wide.safetensors"), three = path("three.safetensors");
  sinter::io::writeSafetensors(sd15, {{"emb_params", torch::zeros({2, 32})}});
  sinter::io::writeSafetensors(wide, {{"clip_l", torch::zeros({2, 32})}, {"clip_g", torch::zeros({2, 48})}});
  sinter::io::writeSafetensors(three, {{"clip_l", torch::zeros({3, 32})}, {"clip_g", torch::zeros({3, 32})}});
  const std::vector<std::pair<std::string, std::string>> cases = {
      {sd15, "--sample_grid: '" + sd15 + "' has no clip_l tensor (it holds emb_params)"},
      {wide, "--sample_grid: clip_g in '" + wide + "' is [2, 48], this run's clip_g rows are [2, 32]"},
      {three, "--sample_grid: clip_l in '" + three + "' is [3, 32], this run's clip_l rows are [2, 32]"},
      {input("tiny_sdxl.safetensors"), "is a sdxl checkpoint: a textual inversion run's grid takes the embedding files it saved"}};
  for (const auto& [file, message] : cases) {
    const ProcessResult r = runRunner({"--config_file", config, "--sample_grid", grid, file});
    EXPECT_EQ(r.exitCode, 2) << file;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("grid row"), std::string::npos) << "refused before the first image:\n" << r.err;
  }
  EXPECT_FALSE(fs::exists(grid));
}

// Pivotal tuning: a LoRA run whose `embeddings` train rows for new tokens beside the network (text
// encoders' LoRA included). Each LoRA file's row has the rows it bundles (bundle_emb.*) on the text
// encoders beside its modules, the first row the run's start (init_word's rows), and the prompts the
// run's tokens: every cell the run's own sample. A LoRA file of the run without an embedding's rows
// or with rows of another shape, and an embedding written apart beside its LoRA file, are refused by
// name before the first image.
TEST_F(SampleGrid, PivotalTuningLoraFilesBringTheirBundledEmbeddings) {
  writeText(path("piv_prompts.txt"), "a photo of zz on white --w 64 --h 64 --d 11 --s 4\n"
                                     "zz on yellow --n red --w 64 --h 64 --d 12 --s 4 --l 5\n");
  const std::string config =
      writeConfig("piv.toml", "network_dim = 4\nnetwork_alpha = 4.0\nlearning_rate = 0.02\ncaption_prefix = \"zz, \"\n"
                              "embeddings = [\"token_string=zz init_word=red num_vectors_per_token=2 learning_rate=0.05\"]\n",
                  path("piv_prompts.txt"));
  const ProcessResult trained = runRunner({"--config_file", config});
  ASSERT_EQ(trained.exitCode, 0) << trained.err;
  const std::string atStep3 = path("out/t-step00000003.safetensors"), last = path("out/t.safetensors");
  ASSERT_TRUE(fs::exists(atStep3) && fs::exists(last) && fs::exists(path("out/t_zz.safetensors")));

  const std::string grid = path("piv_grid.png");
  const ProcessResult r = runRunner({"--config_file", config, "--sample_grid", grid, atStep3, last, "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  expectGridOfRunSamples(grid, {0, 3, 6}, [this](long long step, int index) { return trainingSample(step, index); });
  EXPECT_EQ(r.err.find("not loaded"), std::string::npos) << "the bundled rows are no unloaded LoRA keys:\n" << r.err;
  const nlohmann::json layout = layoutOf(grid);
  EXPECT_EQ(layout["columns"][0]["prompt"], "a photo of zz zz1 on white");
  EXPECT_EQ(layout["rows"][2]["step"], 6);

  // The last file's modules with its bundled rows negated: its row is another picture than the last
  // file's (the rows come from the file, not from the run or the modules alone).
  const sinter::io::SafetensorsFile lastFile(last);
  const auto copyOf = [&](const std::string& name, const std::function<void(std::map<std::string, torch::Tensor>&)>& change) {
    std::map<std::string, torch::Tensor> tensors;
    for (const std::string& key : lastFile.keys()) tensors[key] = lastFile.tensor(key).clone();
    change(tensors);
    sinter::io::writeSafetensors(path(name), std::vector<std::pair<std::string, torch::Tensor>>(tensors.begin(), tensors.end()),
                                 lastFile.metadata());
    return path(name);
  };
  const std::string otherRows = copyOf("other_rows.safetensors", [](std::map<std::string, torch::Tensor>& t) {
    for (const char* key : {"bundle_emb.zz.clip_l", "bundle_emb.zz.clip_g"}) t[key] = -t[key];
  });
  const std::string otherGrid = path("other_rows_grid.png");
  const ProcessResult other = runRunner({"--config_file", config, "--sample_grid", otherGrid, otherRows});
  ASSERT_EQ(other.exitCode, 0) << other.err;
  const sinter::data::RgbImage image = sinter::data::loadImageFile(grid), otherImage = sinter::data::loadImageFile(otherGrid);
  EXPECT_GT(cellDifference(otherImage, 1, 0, cellOf(image, 2, 0)).mean, 1.0);

  const std::string noClipG = copyOf("no_clip_g.safetensors", [](std::map<std::string, torch::Tensor>& t) { t.erase("bundle_emb.zz.clip_g"); });
  const std::string threeRows = copyOf("three_rows.safetensors", [](std::map<std::string, torch::Tensor>& t) {
    t["bundle_emb.zz.clip_l"] = torch::zeros({3, 32});
  });
  const std::vector<std::pair<std::string, std::string>> cases = {
      {noClipG, "--sample_grid: '" + noClipG + "' has no bundle_emb.zz.clip_g tensor"},
      {threeRows, "--sample_grid: bundle_emb.zz.clip_l in '" + threeRows + "' is [3, 32], this run's bundle_emb.zz.clip_l rows are [2, 32]"},
      {path("out/t_zz.safetensors"), "holds no LoRA modules"}};
  for (const auto& [file, message] : cases) {
    const ProcessResult refused = runRunner({"--config_file", config, "--sample_grid", path("refused.png"), file});
    EXPECT_EQ(refused.exitCode, 2) << file;
    EXPECT_NE(refused.err.find(message), std::string::npos) << refused.err;
    EXPECT_EQ(refused.err.find("grid row"), std::string::npos) << "refused before the first image:\n" << refused.err;
  }
  EXPECT_FALSE(fs::exists(path("refused.png")));
}

TEST_F(SampleGrid, MissingFileIsRefusedBeforeAnyModelLoads) {
  const std::string config = writeConfig("lora.toml", "");
  const std::string grid = path("grid.png"), missing = path("out/t-000001.safetensors");
  const ProcessResult r = runRunner({"--config_file", config, "--sample_grid", grid, missing, "--events", "jsonl"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("'" + missing + "' does not exist"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("loading "), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(grid));
  const auto errors = eventsOfType<events::Error>(r);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find(missing), std::string::npos);
  EXPECT_EQ(sinter::test::doneStatus(r), "failed");
}

TEST_F(SampleGrid, FilesOfAnotherKindOrModelAreRefusedByName) {
  const std::string config = writeConfig("lora.toml", "");
  const std::string grid = path("grid.png");
  {  // a checkpoint given to a LoRA run's grid
    const ProcessResult r = runRunner({"--config_file", config, "--sample_grid", grid, input("tiny_sdxl.safetensors")});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("holds no LoRA modules"), std::string::npos) << r.err;
  }
  {  // an SD 1.x LoRA (networks.lora's names for SD 1.x's U-Net) on this SDXL run
    const std::string foreign = path("sd15_lora.safetensors");
    sinter::io::writeSafetensors(foreign,
                                 {{"lora_unet_down_blocks_0_attentions_0_proj_in.lora_down.weight", torch::zeros({4, 32})},
                                  {"lora_unet_down_blocks_0_attentions_0_proj_in.lora_up.weight", torch::zeros({32, 4})},
                                  {"lora_unet_down_blocks_0_attentions_0_proj_in.alpha", torch::tensor(4.0)}},
                                 {{"ss_base_model_version", "sd_v1"}});
    const ProcessResult r = runRunner({"--config_file", config, "--sample_grid", grid, foreign});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find(foreign), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("it is a LoRA of another model family or base model"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("grid row"), std::string::npos) << "refused before the first image:\n" << r.err;
    EXPECT_NE(r.err.find("ss_base_model_version = sd_v1; this run's model is sdxl_base_v1-0"), std::string::npos) << r.err;
  }
  {  // an SD 1.x checkpoint given to a DreamBooth SDXL run's grid
    ASSERT_EQ(runRunner({"--init_checkpoint", path("tiny_sd15.safetensors"), "--model_family", "sd15", "--model_size", "tiny"}).exitCode, 0);
    const std::string db = writeConfig("db.toml", "training_type = \"dreambooth\"\n");
    const ProcessResult r = runRunner({"--config_file", db, "--sample_grid", grid, path("tiny_sd15.safetensors")});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("is a sd15 checkpoint; this run's model is sdxl"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(grid));
}

TEST_F(SampleGrid, ConfigWithoutSamplePromptsIsRefused) {
  writeText(path("bare.toml"), "model_family = \"sdxl\"\npretrained_model_name_or_path = \"" + input("tiny_sdxl.safetensors") +
                                   "\"\nclip_tokenizer = \"" + input("tokenizer") + "\"\ntrain_data_dir = \"" + input("images") +
                                   "\"\noutput_dir = \"" + path("out") + "\"\nresolution = \"64,64\"\ncaption_extension = \".txt\"\n");
  const ProcessResult r = runRunner({"--config_file", path("bare.toml"), "--sample_grid", path("grid.png")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("the config sets none: set sample_prompts"), std::string::npos) << r.err;
}

// Any other runner mode beside it is refused by name (a benchmark, a tool, several processes).
TEST_F(SampleGrid, AnotherModeBesideItIsRefusedByName) {
  const std::string config = writeConfig("modes.toml", "");
  for (const std::vector<std::string>& mode : std::vector<std::vector<std::string>>{{"--benchmark_scaling"}, {"--nproc_per_node", "2"}, {"--dry_run"}}) {
    std::vector<std::string> args{"--config_file", config, "--sample_grid", path("grid.png")};
    args.insert(args.end(), mode.begin(), mode.end());
    const ProcessResult r = runRunner(args);
    EXPECT_EQ(r.exitCode, 2) << mode[0];
    EXPECT_NE(r.err.find("does not go with " + mode[0]), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(path("grid.png")));
  }
}

// The flag's PNG and files up to the next option, in both spellings; refused without its PNG or twice.
TEST(SampleGridArguments, ThePngThenTheFilesUpToTheNextOption) {
  using sinter::runner::takeSampleGridArguments;
  std::vector<std::string> args{"--config_file", "r.toml", "--sample_grid", "g.png", "a.safetensors", "b.safetensors", "--events", "jsonl"};
  auto request = takeSampleGridArguments(args);
  ASSERT_TRUE(request);
  EXPECT_EQ(request->output, "g.png");
  EXPECT_EQ(request->files, (std::vector<std::string>{"a.safetensors", "b.safetensors"}));
  EXPECT_EQ(args, (std::vector<std::string>{"--config_file", "r.toml", "--events", "jsonl"}));

  args = {"--sample_grid=g.png", "--config_file", "r.toml"};
  request = takeSampleGridArguments(args);
  ASSERT_TRUE(request);
  EXPECT_EQ(request->output, "g.png");
  EXPECT_TRUE(request->files.empty());
  EXPECT_EQ(args, (std::vector<std::string>{"--config_file", "r.toml"}));

  args = {"--config_file", "r.toml"};
  EXPECT_FALSE(takeSampleGridArguments(args));
  args = {"--sample_grid", "--config_file", "r.toml"};
  EXPECT_THROW(takeSampleGridArguments(args), std::invalid_argument);
  args = {"--sample_grid", "a.png", "--sample_grid", "b.png"};
  EXPECT_THROW(takeSampleGridArguments(args), std::invalid_argument);
}
