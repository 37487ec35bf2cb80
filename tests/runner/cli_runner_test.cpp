// sinter-runner's command line, run as a process: exit codes and messages (DESIGN.md §3).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

namespace fs = std::filesystem;

namespace {

struct Result {
  int code = -1;
  std::string output;  // stdout and stderr together
};

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

Result run(const std::vector<std::string>& args) {
  std::string cmd = quote(SINTER_RUNNER_BINARY);
  for (const auto& a : args) cmd += " " + quote(a);
  cmd += " 2>&1";
  Result r;
  FILE* p = ::popen(cmd.c_str(), "r");
  std::array<char, 4096> buf{};
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), p)) r.output.append(buf.data(), n);
  int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class RunnerCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("sinter_cli_" + std::to_string(::getpid()) + "_" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& bytes) {
    std::string p = (dir / name).string();
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  fs::path dir;
};

}  // namespace

TEST_F(RunnerCli, HelpIsGeneratedFromTheRegistry) {
  Result r = run({"--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* s : {"--config_file", "--dry_run", "--output_config", "--events", "--compile_backend {inductor,cudagraphs,eager,aot_eager}",
                        "--no-cache_latents", "--learning_rate X", "compile options:"})
    EXPECT_NE(r.output.find(s), std::string::npos) << s;
}

// --version names the libtorch the runner runs on and whether it has CUDA (with each GPU's compute
// capability), so a GPU build shows what it found (.ci/gpu-build checks that line).
TEST_F(RunnerCli, VersionNamesLibtorchAndItsCuda) {
  Result r = run({"--version"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.output.rfind(std::string("sinter-runner ") + SINTER_VERSION + "\nlibtorch ", 0), 0u) << r.output;
  const bool withCuda = r.output.find(" with CUDA ") != std::string::npos;
  const bool withoutCuda = r.output.find(", built without CUDA: training runs on the CPU") != std::string::npos;
  EXPECT_NE(withCuda, withoutCuda) << r.output;
  if (withCuda && r.output.find("no GPU visible") == std::string::npos)
    EXPECT_NE(r.output.find(", compute capability "), std::string::npos) << r.output;
}

TEST_F(RunnerCli, BadFilesExitTwoNamingFileAndLine) {
  struct Case {
    std::string name, text;
    int line;  // 0: no line to name
    std::string says;
  };
  std::string big(10 * 1024 * 1024, 'x');
  std::string junk(8192, '\0');
  std::mt19937 rng(3);
  for (auto& c : junk) c = static_cast<char>(rng());
  std::vector<Case> cases{
      {"unknown.toml", "[training]\nlearning_rat = 1e-4\n", 2, "did you mean 'learning_rate'"},
      {"type.toml", "seed = 1\nseed_x = 2\n", 2, "unknown key"},
      {"wrongtype.toml", "\nseed = \"42\"\n", 2, "seed must be an integer"},
      {"range.toml", "train_batch_size = -1\n", 1, "below the minimum"},
      {"enum.toml", "compile_backend = \"tensorrt\"\n", 1, "inductor, cudagraphs, eager, aot_eager"},
      {"dup.toml", "seed = 1\nseed = 2\n", 2, "duplicate key"},
      {"syntax.toml", "seed = = 1\n", 1, "syntax"},
      {"latin1.toml", "output_name = \"caf\xe9\"\n", 1, "UTF-8"},
      {"empty.toml", "", 0, "empty"},
      {"big.toml", big, 0, "too large"},
      {"random.toml", junk, 0, ""},
      {"rule.toml", "model_family = \"flux\"\nsplit_attn = true\ncompile_fullgraph = true\n", 3, "split_attn"},
  };
  for (const Case& c : cases) {
    std::string path = write(c.name, c.text);
    Result r = run({"--config_file", path, "--dry_run"});
    EXPECT_EQ(r.code, 2) << c.name << ": " << r.output;
    std::string where = path + (c.line ? ":" + std::to_string(c.line) + ":" : "");
    EXPECT_NE(r.output.find(where), std::string::npos) << c.name << " should name " << where << ":\n" << r.output.substr(0, 500);
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.name << ": " << r.output.substr(0, 500);
  }
  Result missing = run({"--config_file", (dir / "absent.toml").string(), "--dry_run"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.output.find("absent.toml"), std::string::npos);
}

// A config as kohya_ss saves it and sd-scripts reads it: keys that are no option warn and are
// ignored, a key in two sections takes the later value, resume = false is no resume, a list of
// text encoder learning rates gives the first; --strict refuses each (DESIGN.md §2).
TEST_F(RunnerCli, ConfigsAreReadAsSdScriptsReadsThemUnlessStrict) {
  std::string cfg = write("saved.toml",
                          "[model]\nmodel_family = \"sdxl\"\nsdxl = true\n[training]\nseed = 1\nepoch = 4\nresume = false\n"
                          "dynamo_backend = \"no\"\n[network]\ntext_encoder_lr = [1e-5, 2e-5]\n[extra]\nseed = 3\n");
  std::string out = (dir / "saved_out.toml").string();
  Result r = run({"--config_file", cfg, "--output_config", out});
  ASSERT_EQ(r.code, 0) << r.output;
  for (const std::string& said : std::vector<std::string>{cfg + ":3:", "sdxl is ignored", cfg + ":6:", "epoch is ignored", cfg + ":12:",
                                                         "seed is set twice, on line 5 and here", "dynamo_backend is ignored",
                                                         "text_encoder_lr's second value is t5xxl_lr, which sdxl's network does not read"})
    EXPECT_NE(r.output.find(said), std::string::npos) << said << "\n" << r.output;
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("seed = 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("text_encoder_lr = 0.00001\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("resume"), std::string::npos) << text;
  // The command line takes sd-scripts' list too.
  Result list = run({"--config_file", cfg, "--text_encoder_lr", "3e-5", "4e-5", "--output_config", (dir / "list_out.toml").string()});
  ASSERT_EQ(list.code, 0) << list.output;
  EXPECT_NE(list.output.find("text_encoder_lr's second value is t5xxl_lr, which sdxl's network does not read"), std::string::npos)
      << list.output;
  std::ifstream listIn(dir / "list_out.toml");
  const std::string listText((std::istreambuf_iterator<char>(listIn)), std::istreambuf_iterator<char>());
  EXPECT_EQ(listText.find("t5xxl_lr"), std::string::npos) << listText;

  Result strict = run({"--config_file", cfg, "--strict", "--output_config", (dir / "strict_out.toml").string()});
  EXPECT_EQ(strict.code, 2) << strict.output;
  for (const std::string& said : {"unknown key 'sdxl'", "unknown key 'epoch'", "duplicate key 'seed' (first set on line 5)",
                                  "resume must be a string"})
    EXPECT_NE(strict.output.find(said), std::string::npos) << said << "\n" << strict.output;
  EXPECT_FALSE(fs::exists(dir / "strict_out.toml"));
}

// The drop-in command line: `sinter-runner [accelerate's flags] SCRIPT.py ARGS` as `accelerate launch`
// runs sd-scripts' SCRIPT: the script's name sets the family and training type.
TEST_F(RunnerCli, ATrainingScriptsNameChoosesWhatTrainsAsSdScriptsDoes) {
  auto written = [&](const std::string& name) {
    std::ifstream in(dir / name);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  const std::string cfg = write("script.toml", "[training]\nseed = 5\n");
  Result lora = run({"--num_cpu_threads_per_process", "2", "--mixed_precision", "bf16", "sdxl_train_network.py", "--config_file", cfg,
                     "--output_config", (dir / "script_lora.toml").string()});
  ASSERT_EQ(lora.code, 0) << lora.output;
  EXPECT_NE(lora.output.find("accelerate's --num_cpu_threads_per_process 2 changes nothing here"), std::string::npos) << lora.output;
  EXPECT_NE(lora.output.find("accelerate's --mixed_precision bf16 changes nothing here"), std::string::npos) << lora.output;
  EXPECT_NE(written("script_lora.toml").find("model_family = \"sdxl\""), std::string::npos) << written("script_lora.toml");
  EXPECT_NE(written("script_lora.toml").find("training_type = \"lora\""), std::string::npos) << written("script_lora.toml");

  // A full-weight script with fine-tune metadata is a fine-tune; a path to the script is read by its name.
  const std::string meta = write("meta.toml", "in_json = \"meta_lat.json\"\n");
  ASSERT_EQ(run({"/opt/sd-scripts/flux_train.py", "--config_file", meta, "--output_config", (dir / "script_ft.toml").string()}).code, 0);
  EXPECT_NE(written("script_ft.toml").find("training_type = \"finetune\""), std::string::npos) << written("script_ft.toml");
  EXPECT_NE(written("script_ft.toml").find("model_family = \"flux\""), std::string::npos) << written("script_ft.toml");

  // The textual inversion scripts train textual_inversion, sdxl_train_textual_inversion.py SDXL's.
  ASSERT_EQ(run({"sdxl_train_textual_inversion.py", "--config_file", cfg, "--output_config", (dir / "script_ti.toml").string()}).code, 0);
  EXPECT_NE(written("script_ti.toml").find("training_type = \"textual_inversion\""), std::string::npos) << written("script_ti.toml");
  EXPECT_NE(written("script_ti.toml").find("model_family = \"sdxl\""), std::string::npos) << written("script_ti.toml");
  const std::string loraType = write("script_lora_type.toml", "training_type = \"lora\"\n");
  Result tiConflict = run({"train_textual_inversion.py", "--config_file", loraType, "--output_config", (dir / "never_ti.toml").string()});
  EXPECT_EQ(tiConflict.code, 2) << tiConflict.output;
  EXPECT_NE(tiConflict.output.find("training_type = lora, but train_textual_inversion.py trains textual_inversion"), std::string::npos)
      << tiConflict.output;
  const std::string ti = write("script_ti_type.toml", "training_type = \"textual_inversion\"\n");
  EXPECT_EQ(run({"sdxl_train.py", "--config_file", ti, "--output_config", (dir / "never_db.toml").string()}).code, 2);

  // What the config says against the script is refused, naming both.
  const std::string flux = write("script_flux.toml", "model_family = \"flux\"\n");
  Result conflict = run({"sdxl_train_network.py", "--config_file", flux, "--output_config", (dir / "never.toml").string()});
  EXPECT_EQ(conflict.code, 2) << conflict.output;
  EXPECT_NE(conflict.output.find("model_family = flux, but sdxl_train_network.py trains sdxl"), std::string::npos) << conflict.output;
  EXPECT_FALSE(fs::exists(dir / "never.toml"));
  // Several hosts are a launcher's job.
  Result hosts = run({"--num_machines", "2", "train_network.py", "--config_file", cfg, "--dry_run"});
  EXPECT_EQ(hosts.code, 2);
  EXPECT_NE(hosts.output.find("--num_machines 2: several hosts"), std::string::npos) << hosts.output;
}

// FLUX's deprecated split_mode: blocks_to_swap = 18 in its place, as sd-scripts sets it.
TEST_F(RunnerCli, SplitModeBecomesEighteenSwappedBlocks) {
  std::string cfg = write("split.toml", "model_family = \"flux\"\nsplit_mode = true\n");
  Result r = run({"--config_file", cfg, "--dry_run"});
  EXPECT_NE(r.output.find("blocks_to_swap = 18 is used in its place"), std::string::npos) << r.output;
  std::string both = write("split_both.toml", "model_family = \"flux\"\nsplit_mode = true\nblocks_to_swap = 4\n");
  EXPECT_NE(run({"--config_file", both, "--dry_run"}).output.find("ignored here, as there, because blocks_to_swap is set"), std::string::npos);
}

TEST_F(RunnerCli, CommandLineOverridesAndOutputConfig) {
  std::string cfg = write("run.toml", "[model]\nmodel_family = \"sdxl\"\n[training]\nseed = 1\nmax_train_steps = 10\n");
  std::string out = (dir / "out.toml").string();
  Result r = run({"--config_file", cfg, "--seed", "7", "--compile", "--compile_mode", "reduce-overhead", "--output_config", out});
  ASSERT_EQ(r.code, 0) << r.output;
  std::ifstream in(out);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("seed = 7\n"), std::string::npos) << text;
  EXPECT_NE(text.find("max_train_steps = 10\n"), std::string::npos);
  EXPECT_NE(text.find("compile_mode = \"reduce-overhead\"\n"), std::string::npos);
  EXPECT_EQ(text.find("compile_dynamic"), std::string::npos);
  // The written file reads back and writes the same bytes.
  std::string again = (dir / "again.toml").string();
  ASSERT_EQ(run({"--config_file", out, "--output_config", again}).code, 0);
  std::ifstream in2(again);
  std::string text2((std::istreambuf_iterator<char>(in2)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, text2);
  // Never overwrites.
  Result exists = run({"--config_file", cfg, "--output_config", out});
  EXPECT_EQ(exists.code, 2);
  EXPECT_NE(exists.output.find("already exists"), std::string::npos);
}

TEST_F(RunnerCli, BadArgumentsExitTwo) {
  Result r = run({"--learnin_rate", "1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("did you mean --learning_rate"), std::string::npos) << r.output;
  EXPECT_EQ(run({"--events", "xml"}).code, 2);
  EXPECT_EQ(run({"stray"}).code, 2);
}

TEST_F(RunnerCli, DryRunChecksWhatTheRunNeeds) {
  std::string cfg = write("run.toml", "model_family = \"sdxl\"\npretrained_model_name_or_path = \"/nonexistent/model.safetensors\"\n"
                                      "train_data_dir = \"/nonexistent/images\"\noutput_dir = \"/tmp\"\n");
  Result r = run({"--config_file", cfg, "--dry_run"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("/nonexistent/model.safetensors"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("/nonexistent/images"), std::string::npos) << r.output;
}

// --benchmark_networks: standard LoRA and each LyCORIS algorithm time the same step, eager and
// captured, and no row fails (the tiny model on the CPU, where a captured row may be refused).
TEST_F(RunnerCli, BenchmarkNetworksTimesEachLycorisAlgorithm) {
  Result r = run({"--benchmark_steps", "1", "--model_size", "tiny", "--benchmark_networks"});
  ASSERT_EQ(r.code, 0) << r.output;
  for (const char* label : {"bs1 256, LoRA, ", "LyCORIS locon, ", "LyCORIS locon dora_wd=True, ", "LyCORIS loha, ",
                            "LyCORIS lokr factor=2, ", "LyCORIS ia3, ", "LyCORIS full, ", "4 micro-batches, delta per forward",
                            "4 micro-batches, delta per step"})
    EXPECT_NE(r.output.find(label), std::string::npos) << label << "\n" << r.output;
  EXPECT_EQ(r.output.find("| failed"), std::string::npos) << r.output;
}

// profile_steps in a benchmark: each row's trace goes to output_dir, made if missing; a libtorch
// without Kineto says so instead of writing nothing silently.
TEST_F(RunnerCli, BenchmarkProfileTracesGoToOutputDirOrSayWhyNot) {
  const fs::path out = dir / "not" / "made" / "yet";
  Result r = run({"--benchmark_steps", "1", "--model_size", "tiny", "--profile_steps", "1", "--output_dir", out.string()});
  ASSERT_EQ(r.code, 0) << r.output;
  if (r.output.find("profile_steps: this libtorch was built without the Kineto profiler") != std::string::npos) {
    EXPECT_FALSE(fs::exists(out)) << r.output;
  } else {
    ASSERT_TRUE(fs::exists(out / "benchmark-eager__compile_off_.json")) << r.output;
    EXPECT_GT(fs::file_size(out / "benchmark-eager__compile_off_.json"), 0u);
  }
  Result unset = run({"--benchmark_steps", "1", "--model_size", "tiny", "--profile_steps", "1"});
  ASSERT_EQ(unset.code, 0) << unset.output;
  EXPECT_NE(unset.output.find("profile_steps: "), std::string::npos) << unset.output;
}
