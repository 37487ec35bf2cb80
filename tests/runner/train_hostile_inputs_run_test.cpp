// Inputs a hostile (or unlucky) user gives the real sinter-runner, on the tiny SDXL model on the
// CPU: tampered resume states, a checkpoint with a relabelled dtype, network_weights that fit no
// module, absurd repeats, files in the dataset that are no images, the app going away, a stop at
// any moment, and libtorch's errors. Each ends in a clear one-line message (exit 2 before anything
// is written), or the run goes on and saves.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <ATen/CPUGeneratorImpl.h>
#include <c10/util/Exception.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/events.h"
#include "io/safetensors.h"
#include "runner_process.h"
#include "train/base/run_errors.h"

namespace fs = std::filesystem;
using sinter::test::doneStatus;
using sinter::test::eventsOfType;
using sinter::test::ProcessResult;
using sinter::test::runRunner;
using sinter::test::writeText;

namespace {

fs::path g_root;

std::string path(const std::string& rel) { return (g_root / rel).string(); }

std::string writeConfig(const std::string& name, const std::string& outputDir, const std::string& extra, const std::string& dataDir = "") {
  const std::string text = "model_family = \"sdxl\"\n"
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

std::string readText(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The files a run wrote into `dir` (the lock file aside, which every orderly exit removes).
std::vector<std::string> filesIn(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) out.push_back(e.path().string());
  return out;
}

// No line of the log is part of a C++ backtrace.
void expectNoBacktrace(const std::string& log) {
  EXPECT_EQ(log.find("Exception raised from"), std::string::npos) << log;
  EXPECT_EQ(log.find("frame #"), std::string::npos) << log;
}

// A child runner process started by hand, for what runRunner does not do: close its stdout early,
// start it with a stop already pending, time a signal, measure its memory.
struct Child {
  pid_t pid = -1;
  int out = -1;         // its stdout's read end
  std::string errFile;  // its stderr
};

Child startRunner(const std::vector<std::string>& args, bool stopPendingAtStart = false) {
  int pipeFds[2];
  if (::pipe(pipeFds) != 0) return {};
  Child c;
  c.errFile = path("err_" + std::to_string(::getpid()) + "_" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipeFds[1], 1);
    const int err = ::open(c.errFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(err, 2);
    ::close(pipeFds[0]);
    if (stopPendingAtStart) {
      // A stop that is there before the runner's first instruction: blocked and pending across exec.
      sigset_t term;
      sigemptyset(&term);
      sigaddset(&term, SIGTERM);
      sigprocmask(SIG_BLOCK, &term, nullptr);
      ::raise(SIGTERM);
    }
    std::vector<std::string> copy = args;
    std::vector<char*> argv;
    std::string bin = SINTER_RUNNER_BINARY;
    argv.push_back(bin.data());
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(bin.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(pipeFds[1]);
  c.pid = pid;
  c.out = pipeFds[0];
  return c;
}

struct Ended {
  int exitCode = -1;  // -1 when a signal ended it
  int signal = 0;
  long maxRssKb = 0;
  std::string out, err;
};

// Reads what is left of its stdout (unless closed), waits for it.
Ended finish(Child& c) {
  Ended e;
  if (c.out >= 0) {
    char buffer[4096];
    for (ssize_t n; (n = ::read(c.out, buffer, sizeof buffer)) > 0;) e.out.append(buffer, static_cast<size_t>(n));
    ::close(c.out);
  }
  int status = 0;
  rusage usage{};
  ::wait4(c.pid, &status, 0, &usage);
  e.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  e.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  e.maxRssKb = usage.ru_maxrss;
  e.err = readText(c.errFile);
  fs::remove(c.errFile);
  return e;
}

// Whether the process catches SIGTERM yet (its handler is installed).
bool catchesSigterm(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("SigCgt:", 0) == 0) return (std::stoull(line.substr(7), nullptr, 16) >> (SIGTERM - 1)) & 1;
  return false;
}

class HostileInputs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_hostile_" + std::to_string(::getpid()));
    fs::create_directories(g_root);
    ASSERT_EQ(runRunner({"--init_checkpoint", path("tiny_sdxl.safetensors"), "--model_family", "sdxl", "--model_size", "tiny", "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_dataset", path("images"), "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_tokenizer", path("tokenizer")}).exitCode, 0);
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
};

// The demo dataset's one subset folder.
fs::path demoFolder() {
  for (const auto& e : fs::directory_iterator(path("images")))
    if (e.is_directory()) return e.path();
  return {};
}

}  // namespace

// Every field of a state is checked against the run it resumes; a bad one is exit 2 naming the
// file and the field, before anything is written (the dry run refuses train_state.json's too).
TEST_F(HostileInputs, ATamperedResumeStateIsRefusedNamingTheFileAndField) {
  const std::string extra = "max_train_steps = 4\nnetwork_train_unet_only = true\nsave_every_n_steps = 2\nsave_state = true\n";
  const ProcessResult saved = runRunner({"--config_file", writeConfig("state.toml", path("out_state"), extra)});
  ASSERT_EQ(saved.exitCode, 0) << saved.err;
  const std::string good = path("out_state/t-step00000002-state");
  ASSERT_TRUE(fs::exists(good + "/train_state.json")) << ::testing::PrintToString(filesIn(path("out_state"))) << "\n" << saved.err;
  const nlohmann::json progress = nlohmann::json::parse(readText(good + "/train_state.json"));

  struct Case {
    std::string name;
    std::function<void(nlohmann::json&)> json;                        // changes train_state.json
    std::function<void(const std::string& folder)> files;             // or a tensor file
    std::string file, says;
  };
  auto retensor = [](const std::string& file, const std::string& key, const torch::Tensor& value) {
    sinter::io::SafetensorsFile f(file);
    std::vector<std::pair<std::string, torch::Tensor>> all;
    for (const auto& k : f.keys()) all.emplace_back(k, k == key ? value : f.tensor(k).clone());
    sinter::io::writeSafetensors(file + ".new", all);
    fs::rename(file + ".new", file);
  };
  std::vector<Case> cases{
      {"huge_step", [](nlohmann::json& j) { j["global_step"] = 1e21; }, nullptr, "train_state.json", "global_step"},
      {"negative_step", [](nlohmann::json& j) { j["global_step"] = -5; }, nullptr, "train_state.json", "global_step"},
      {"step_past_max", [](nlohmann::json& j) { j["global_step"] = 5; }, nullptr, "train_state.json", "global_step"},
      {"negative_index", [](nlohmann::json& j) { j["data"]["index"] = -7; }, nullptr, "train_state.json", "data.index"},
      {"index_past_epoch", [](nlohmann::json& j) { j["data"]["index"] = 99999999; }, nullptr, "train_state.json", "data.index"},
      {"negative_epoch", [](nlohmann::json& j) { j["data"]["epoch"] = -1; }, nullptr, "train_state.json", "data.epoch"},
      {"epoch_past_step", [](nlohmann::json& j) { j["data"]["epoch"] = 3; }, nullptr, "train_state.json", "data.epoch"},
      {"text_seed", [](nlohmann::json& j) { j["data"]["seed"] = "seven"; }, nullptr, "train_state.json", "data.seed"},
      {"no_ranks", [](nlohmann::json& j) { j["data"]["ranks"] = 0; }, nullptr, "train_state.json", "data.ranks"},
      {"short_rng", nullptr,
       [&](const std::string& folder) { retensor(folder + "/rng.safetensors", "device", torch::zeros({16}, torch::kUInt8)); },
       "rng.safetensors", "device"},
      // The right size, but no generator's state: libtorch's own check ("Invalid mt19937 state"),
      // which reached the user with its C++ backtrace.
      {"zero_rng", nullptr,
       [&](const std::string& folder) {
         const int64_t size = sinter::io::SafetensorsFile(folder + "/rng.safetensors").info("device").numel();
         retensor(folder + "/rng.safetensors", "device", torch::zeros({size}, torch::kUInt8));
       },
       "rng.safetensors", "device"},
      {"optimizer_shape", nullptr,
       [&](const std::string& folder) {
         sinter::io::SafetensorsFile f(folder + "/optimizer.safetensors");
         std::string key;
         for (const auto& k : f.keys())
           if (f.info(k).shape.size() == 2) key = k;
         ASSERT_FALSE(key.empty());
         retensor(folder + "/optimizer.safetensors", key, torch::zeros({3, 5}));
       },
       "optimizer.safetensors", "shape"},
      {"optimizer_step", nullptr,
       [&](const std::string& folder) { retensor(folder + "/optimizer.safetensors", "step", torch::full({}, -5.0)); },
       "optimizer.safetensors", "step"},
  };
  for (const Case& c : cases) {
    const std::string folder = path("bad_" + c.name + "-state");
    fs::remove_all(folder);
    fs::copy(good, folder, fs::copy_options::recursive);
    if (c.json) {
      nlohmann::json j = progress;
      c.json(j);
      writeText(folder + "/train_state.json", j.dump(2));
    }
    if (c.files) c.files(folder);
    const std::string out = path("out_" + c.name);
    const std::string cfg = writeConfig(c.name + ".toml", out, extra);
    const ProcessResult r = runRunner({"--config_file", cfg, "--resume", folder, "--events", "jsonl"});
    EXPECT_EQ(r.exitCode, 2) << c.name << ":\n" << r.err;
    EXPECT_NE(r.err.find(folder + "/" + c.file), std::string::npos) << c.name << " names the file:\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.name << " names the field:\n" << r.err;
    expectNoBacktrace(r.err);
    EXPECT_EQ(doneStatus(r), "failed") << c.name;
    for (const std::string& f : filesIn(out))
      EXPECT_TRUE(fs::is_directory(f)) << c.name << ": nothing is written, yet there is " << f;
    if (c.json) {
      const ProcessResult dry = runRunner({"--config_file", cfg, "--resume", folder, "--dry_run"});
      EXPECT_EQ(dry.exitCode, 2) << c.name << " (dry run):\n" << dry.err;
      EXPECT_NE(dry.err.find(c.says), std::string::npos) << c.name << " (dry run):\n" << dry.err;
    }
  }
  // The untouched state resumes.
  const ProcessResult ok = runRunner({"--config_file", writeConfig("resume_ok.toml", path("out_resume_ok"), extra), "--resume", good});
  EXPECT_EQ(ok.exitCode, 0) << ok.err;
}

// A float weight stored as I32 (the same bytes, relabelled) is refused naming the tensor and both dtypes.
TEST_F(HostileInputs, ACheckpointTensorRelabelledAsAnIntegerIsRefused) {
  const std::string relabelled = path("relabelled.safetensors");
  fs::copy_file(path("tiny_sdxl.safetensors"), relabelled, fs::copy_options::overwrite_existing);
  const std::string key = "model.diffusion_model.input_blocks.0.0.weight";
  {
    std::fstream f(relabelled, std::ios::in | std::ios::out | std::ios::binary);
    std::uint64_t headerSize = 0;
    f.read(reinterpret_cast<char*>(&headerSize), 8);
    std::string header(headerSize, '\0');
    f.read(header.data(), static_cast<std::streamsize>(headerSize));
    const size_t at = header.find("\"" + key + "\"");
    ASSERT_NE(at, std::string::npos);
    const size_t dtype = header.find("\"F32\"", at);
    ASSERT_NE(dtype, std::string::npos);
    header.replace(dtype, 5, "\"I32\"");  // same length: the offsets stay
    f.seekp(8);
    f.write(header.data(), static_cast<std::streamsize>(header.size()));
  }
  const ProcessResult r = runRunner({"--config_file", writeConfig("i32.toml", path("out_i32"), "max_train_steps = 1\n"),
                                     "--pretrained_model_name_or_path", relabelled});
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_NE(r.err.find(key + " is stored as I32, which cannot hold the model's F32 values"), std::string::npos) << r.err;
  expectNoBacktrace(r.err);
}

// network_weights that fill none of the network's modules (a base checkpoint) or only some (a
// U-Net-only LoRA in a run that trains the text encoders too) are refused, saying how many matched
// and naming the first that did not; network_weights_partial loads the part that matches.
TEST_F(HostileInputs, NetworkWeightsThatFitNoneOrSomeModulesAreRefused) {
  const ProcessResult base = runRunner({"--config_file", writeConfig("base_as_lora.toml", path("out_base_as_lora"), "max_train_steps = 1\n"),
                                        "--network_weights", path("tiny_sdxl.safetensors")});
  EXPECT_EQ(base.exitCode, 2) << base.err;
  EXPECT_NE(base.err.find("matches 0 of this network's"), std::string::npos) << base.err;
  EXPECT_NE(base.err.find("not matched: lora_"), std::string::npos) << base.err;
  EXPECT_NE(base.err.find("of its keys name no module of this network ("), std::string::npos) << "names keys of the file:\n" << base.err;
  EXPECT_FALSE(fs::exists(path("out_base_as_lora/t.safetensors")));

  ASSERT_EQ(runRunner({"--config_file", writeConfig("unet_only.toml", path("out_unet_only"), "max_train_steps = 1\nnetwork_train_unet_only = true\n")})
                .exitCode,
            0);
  const std::string unetLora = path("out_unet_only/t.safetensors");
  const std::string cfg = writeConfig("partial.toml", path("out_partial"), "max_train_steps = 1\n");
  const ProcessResult partial = runRunner({"--config_file", cfg, "--network_weights", unetLora});
  EXPECT_EQ(partial.exitCode, 2) << partial.err;
  EXPECT_NE(partial.err.find("not matched: lora_te"), std::string::npos) << partial.err;
  EXPECT_NE(partial.err.find("network_weights_partial"), std::string::npos) << partial.err;
  EXPECT_EQ(partial.err.find("matches 0 of"), std::string::npos) << partial.err;

  const ProcessResult allowed = runRunner({"--config_file", cfg, "--network_weights", unetLora, "--network_weights_partial"});
  EXPECT_EQ(allowed.exitCode, 0) << allowed.err;
  EXPECT_NE(allowed.err.find("start fresh"), std::string::npos) << allowed.err;
  // A full LoRA loaded into a U-Net-only run fills every module: the text encoders' keys are a warning.
  const ProcessResult full = runRunner({"--config_file", writeConfig("te_keys.toml", path("out_te_keys"), "max_train_steps = 1\nnetwork_train_unet_only = true\n"),
                                        "--network_weights", path("out_partial/t.safetensors")});
  EXPECT_EQ(full.exitCode, 0) << full.err;
  EXPECT_NE(full.err.find("name no module of this network (lora_te"), std::string::npos) << full.err;
}

// Repeats are counted, never listed: a million repeats train in the memory one repeat takes; more
// than that is a typo, refused naming the folder before anything loads.
TEST_F(HostileInputs, RepeatsAreCountedAndAbsurdOnesRefused) {
  const fs::path demo = demoFolder();
  ASSERT_FALSE(demo.empty());
  const std::string huge = path("huge_data/99999999999_demo");
  fs::create_directories(huge);
  for (const auto& e : fs::directory_iterator(demo)) fs::copy_file(e.path(), huge + "/" + e.path().filename().string());
  const ProcessResult refused = runRunner({"--config_file", writeConfig("huge.toml", path("out_huge"), "max_train_steps = 1\n", path("huge_data"))});
  EXPECT_EQ(refused.exitCode, 2) << refused.err;
  EXPECT_NE(refused.err.find(huge), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("1000000"), std::string::npos) << refused.err;
  // The same in a dataset TOML.
  writeText(path("huge_dataset.toml"), "[[datasets]]\nbatch_size = 1\n[[datasets.subsets]]\nimage_dir = \"" + demo.string() +
                                           "\"\nnum_repeats = 2000000\n");
  const ProcessResult toml = runRunner({"--config_file", writeConfig("huge_toml.toml", path("out_huge_toml"), "max_train_steps = 1\n"),
                                        "--dataset_config", path("huge_dataset.toml"), "--dry_run"});
  EXPECT_EQ(toml.exitCode, 2) << toml.err;
  EXPECT_NE(toml.err.find("num_repeats"), std::string::npos) << toml.err;

  auto peakRss = [&](const std::string& folder, const std::string& name) {
    const std::string data = path(name + "_data/" + folder);
    fs::create_directories(data);
    for (const auto& e : fs::directory_iterator(demo)) fs::copy_file(e.path(), data + "/" + e.path().filename().string(), fs::copy_options::skip_existing);
    Child c = startRunner({"--config_file", writeConfig(name + ".toml", path("out_" + name), "max_train_steps = 2\nnetwork_train_unet_only = true\n",
                                                        path(name + "_data")),
                           "--events", "jsonl"});
    Ended e = finish(c);
    EXPECT_EQ(e.exitCode, 0) << e.err;
    EXPECT_NE(e.err.find("num train images * repeats: "), std::string::npos) << e.err;
    return e.maxRssKb;
  };
  const long once = peakRss("1_demo", "once");
  const long million = peakRss("1000000_demo", "million");
  // Listed per repeat, a million repeats of the demo's images would take hundreds of MB more.
  EXPECT_LT(million, once + 64 * 1024) << "peak memory with 1 repeat " << once << " kB, with 1e6 " << million << " kB";
}

// A folder named like an image, a dangling link and a PNG whose CRC fails are skipped, each with a
// warning naming it, and the totals are in the log and the start event.
TEST_F(HostileInputs, SkippedDatasetFilesAreNamedAndCounted) {
  const fs::path demo = demoFolder();
  const std::string data = path("skips/10_x");
  fs::create_directories(data);
  int images = 0;
  for (const auto& e : fs::directory_iterator(demo)) {
    fs::copy_file(e.path(), data + "/" + e.path().filename().string());
    images += e.path().extension() == ".png";
  }
  fs::create_directories(data + "/folder.png");
  fs::create_symlink(path("nowhere.png"), data + "/dangling.png");
  // A PNG with one byte of its image data changed: stb_image would decode it without a word.
  std::string png = readText((demo / "shape_000.png").string());
  const size_t idat = png.find("IDAT");
  ASSERT_NE(idat, std::string::npos);
  png[idat + 8] = static_cast<char>(png[idat + 8] ^ 0x01);
  writeText(data + "/damaged.png", png);
  const ProcessResult r = runRunner({"--config_file", writeConfig("skips.toml", path("out_skips"), "max_train_steps = 1\n", path("skips")),
                                     "--events", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::vector<std::string> warnings;
  for (const auto& w : eventsOfType<sinter::events::Warning>(r)) warnings.push_back(w.message);
  for (const std::string& name : {"folder.png", "dangling.png", "damaged.png"}) {
    int naming = 0;
    for (const auto& w : warnings) naming += w.find(data + "/" + name) != std::string::npos;
    EXPECT_EQ(naming, 1) << name << " is named in one warning: " << ::testing::PrintToString(warnings);
    EXPECT_NE(r.err.find("skipped " + data + "/" + name), std::string::npos) << r.err;
  }
  EXPECT_NE(r.err.find("a folder, not an image file"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("which does not exist"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("fails its CRC check"), std::string::npos) << r.err;
  const auto starts = eventsOfType<sinter::events::Start>(r);
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].images, images);
  EXPECT_EQ(starts[0].skipped, 3);
  EXPECT_NE(r.err.find(std::to_string(images) + " images, 3 skipped"), std::string::npos) << r.err;
  // The dataset check at the run's start (headers and content hashes): the skipped files in its
  // report, each folder's repeats, nothing said twice in the warnings (above).
  const auto checks = eventsOfType<sinter::events::DatasetCheck>(r);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].images, images);
  EXPECT_TRUE(checks[0].contents_compared);
  EXPECT_FALSE(checks[0].pixels_decoded);
  EXPECT_EQ(checks[0].unreadable.size(), 3u);
  ASSERT_EQ(checks[0].folders.size(), 1u);
  EXPECT_EQ(checks[0].folders[0].path, data);
  EXPECT_EQ(checks[0].folders[0].with_repeats, 10 * images);
  long long bucketed = 0;
  for (const auto& b : checks[0].buckets) bucketed += b.images;
  EXPECT_EQ(bucketed, images);
}

// The app gone, the run goes on: once the reader of its events closes stdout, the runner says so
// once, trains to its end and saves (it died of SIGPIPE before).
TEST_F(HostileInputs, ARunOutlivesTheReaderOfItsEvents) {
  Child c = startRunner({"--config_file", writeConfig("reader.toml", path("out_reader"), "max_train_steps = 6\nnetwork_train_unet_only = true\n"),
                         "--events", "jsonl"});
  FILE* out = ::fdopen(c.out, "r");
  char* line = nullptr;
  size_t cap = 0;
  bool sawStep = false;
  while (!sawStep && ::getline(&line, &cap, out) > 0) sawStep = std::string(line).find("\"type\":\"step\"") != std::string::npos;
  std::free(line);
  std::fclose(out);  // the app is gone
  c.out = -1;
  EXPECT_TRUE(sawStep);
  const Ended e = finish(c);
  EXPECT_EQ(e.signal, 0) << "killed by signal " << e.signal << ":\n" << e.err;
  EXPECT_EQ(e.exitCode, 0) << e.err;
  EXPECT_TRUE(fs::exists(path("out_reader/t.safetensors"))) << e.err;
  size_t said = 0;
  for (size_t at = 0; (at = e.err.find("the events' reader is gone", at)) != std::string::npos; ++at) ++said;
  EXPECT_EQ(said, 1u) << e.err;
}

// A stop at any moment is exit 0 with nothing made or a whole save: pending before the runner's
// first instruction, the moment its handler can exist, and later during setup.
TEST_F(HostileInputs, AStopAtAnyMomentExitsZeroWithNothingOrAWholeSave) {
  const std::string extra = "max_train_steps = 100000\nnetwork_train_unet_only = true\n";
  // Every file a stopped run leaves is whole.
  auto checkSaves = [](const std::string& dir, const std::string& when) {
    for (const std::string& f : filesIn(dir)) {
      if (fs::path(f).extension() != ".safetensors") continue;
      EXPECT_NO_THROW(sinter::io::SafetensorsFile check(f)) << when << ": " << f;
    }
  };
  {
    const std::string out = path("out_stop_pending");
    // A short run: unheard, the stop would let it complete.
    Child c = startRunner({"--config_file", writeConfig("stop_pending.toml", out, extra), "--max_train_steps", "3", "--events", "jsonl"},
                          /*stopPendingAtStart=*/true);
    const Ended e = finish(c);
    EXPECT_EQ(e.signal, 0) << e.err;
    EXPECT_EQ(e.exitCode, 0) << e.err;
    EXPECT_NE(e.out.find("\"status\":\"stopped\""), std::string::npos) << e.out;
    EXPECT_TRUE(filesIn(out).empty()) << "nothing is made";
  }
  for (const double seconds : {0.0, 0.55, 1.0, 2.0}) {
    const std::string when = seconds == 0 ? "as soon as its handler is there" : std::to_string(seconds) + " s after start";
    const std::string out = path("out_stop_" + std::to_string(static_cast<int>(seconds * 100)));
    const auto start = std::chrono::steady_clock::now();
    Child c = startRunner({"--config_file", writeConfig("stop.toml", out, extra), "--events", "jsonl"});
    // Not before the process has reached main (a signal then meets the loader, not the runner).
    while (!catchesSigterm(c.pid) && std::chrono::steady_clock::now() - start < std::chrono::seconds(30))
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    std::this_thread::sleep_until(start + std::chrono::duration<double>(seconds));
    ::kill(c.pid, SIGTERM);
    const Ended e = finish(c);
    EXPECT_EQ(e.signal, 0) << when << ":\n" << e.err;
    EXPECT_EQ(e.exitCode, 0) << when << ":\n" << e.err;
    EXPECT_NE(e.out.find("\"status\":\"stopped\""), std::string::npos) << when << ":\n" << e.out;
    checkSaves(out, when);
  }
}

// libtorch's errors reach the user as one line of the project's format, without its C++ backtrace.
TEST(RunErrors, LibtorchErrorsLoseTheirBacktrace) {
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(1);
  try {
    generator.set_state(torch::zeros({16}, torch::kUInt8));
    FAIL() << "libtorch took 16 bytes for a CPU generator's state";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Exception raised from"), std::string::npos) << "libtorch's text carries a backtrace: " << e.what();
    const std::string message = sinter::train::userMessage(e);
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.find("Exception raised from"), std::string::npos) << message;
    EXPECT_NE(message.find("RNG state size to be 16"), std::string::npos) << message;
    // Quoted inside another message, the backtrace goes too.
    const std::runtime_error wrapped(std::string("resume: x: ") + e.what());
    EXPECT_EQ(sinter::train::userMessage(wrapped).find("frame #"), std::string::npos) << sinter::train::userMessage(wrapped);
    EXPECT_EQ(sinter::train::userMessage(wrapped).find('\n'), std::string::npos) << sinter::train::userMessage(wrapped);
  }
}
