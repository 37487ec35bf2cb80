// Data parallel training end to end: `sinter-runner --nproc_per_node 2` on the CPU (two workers
// over c10d's Gloo) with the tiny SDXL model: steps and epochs counted as sd-scripts counts them
// under accelerate, one event stream and one set of files (rank 0's), identical weights on both
// ranks, a stop that reaches both and saves every rank's noise state, and a killed rank that ends
// the run with exit 1 and nothing half-written. Skipped where the build has no Gloo.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/events.h"
#include "distributed/process_group.h"
#include "distributed/worker_launcher.h"
#include "io/safetensors.h"
#include "runner_process.h"
#include "train/loop/output_lock.h"

namespace fs = std::filesystem;
using sinter::test::ProcessResult;
using sinter::test::runRunner;
using sinter::test::eventsOfType;

namespace {

fs::path g_root;

std::string path(const std::string& rel) { return (g_root / rel).string(); }

std::string writeConfig(const std::string& name, const std::string& outputDir, const std::string& extra) {
  const std::string text = "model_family = \"sdxl\"\n"
                           "pretrained_model_name_or_path = \"" + path("tiny_sdxl.safetensors") + "\"\n"
                           "clip_tokenizer = \"" + path("tokenizer") + "\"\n"
                           "train_data_dir = \"" + path("five") + "\"\n"
                           "output_dir = \"" + outputDir + "\"\n"
                           "output_name = \"t\"\n"
                           "resolution = \"64,64\"\n"
                           "caption_extension = \".txt\"\n"
                           "max_data_loader_n_workers = 0\n"
                           "cache_latents = true\n"
                           "network_train_unet_only = true\n"
                           "network_dim = 4\n"
                           "network_alpha = 4.0\n"
                           "learning_rate = 0.01\n"
                           "seed = 7\n" + extra;
  const std::string p = path(name);
  std::ofstream(p) << text;
  return p;
}

std::vector<std::string> filesIn(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(dir)) names.push_back(fs::relative(e.path(), dir).string());
  std::sort(names.begin(), names.end());
  return names;
}

// The launcher's worker whose environment says RANK=<rank>, or -1.
pid_t workerOf(pid_t launcher, int rank) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string statText((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const size_t close = statText.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(statText.substr(close + 2));
    std::string state;
    pid_t ppid = 0;
    fields >> state >> ppid;
    if (ppid != launcher) continue;
    std::ifstream environ(e.path() / "environ");
    bool match = false;
    for (std::string entry; std::getline(environ, entry, '\0');) match |= entry == "RANK=" + std::to_string(rank);
    if (match)
      return static_cast<pid_t>(std::stoi(name));
  }
  return -1;
}

// Starts the runner as rank `rank` of 2 with torchrun's environment, as an external launcher
// would; its stderr goes to `log`.
pid_t startWorker(int rank, int port, const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  for (const std::string& v : {"RANK=" + std::to_string(rank), "LOCAL_RANK=" + std::to_string(rank), std::string("WORLD_SIZE=2"),
                               std::string("MASTER_ADDR=127.0.0.1"), "MASTER_PORT=" + std::to_string(port)})
    env.push_back(v);
  std::vector<std::string> argv{SINTER_RUNNER_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> envp, argvp;
  for (auto& v : env) envp.push_back(v.data());
  for (auto& a : argv) argvp.push_back(a.data());
  envp.push_back(nullptr);
  argvp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 2);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::execve(argvp[0], argvp.data(), envp.data());
    ::_exit(127);
  }
  return pid;
}

int exitCodeOf(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string readFile(const std::string& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class DistributedRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_root = fs::temp_directory_path() / ("sinter_distributed_run_" + std::to_string(::getpid()));
    fs::create_directories(g_root);
    ASSERT_EQ(runRunner({"--init_checkpoint", path("tiny_sdxl.safetensors"), "--model_family", "sdxl", "--model_size", "tiny", "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_dataset", path("images"), "--seed", "3"}).exitCode, 0);
    ASSERT_EQ(runRunner({"--init_tokenizer", path("tokenizer")}).exitCode, 0);
    // Five pictures, one repeat: five batches of one per epoch.
    fs::path from;
    for (const auto& e : fs::directory_iterator(path("images"))) from = e.path();
    const fs::path to = g_root / "five" / "1_shapes";
    fs::create_directories(to);
    int copied = 0;
    std::vector<fs::path> pictures;
    for (const auto& e : fs::directory_iterator(from))
      if (e.path().extension() != ".txt") pictures.push_back(e.path());
    std::sort(pictures.begin(), pictures.end());
    for (const fs::path& p : pictures) {
      if (copied == 5) break;
      fs::copy_file(p, to / p.filename());
      fs::path caption = p;
      caption.replace_extension(".txt");
      if (fs::exists(caption)) fs::copy_file(caption, to / caption.filename());
      ++copied;
    }
    ASSERT_EQ(copied, 5);
  }
  static void TearDownTestSuite() { fs::remove_all(g_root); }
  void SetUp() override {
    if (!sinter::distributed::distributedCompiledIn()) GTEST_SKIP() << "this libtorch has no c10d process groups (Gloo)";
  }
};

}  // namespace

TEST_F(DistributedRun, TwoRanksCountStepsAsAccelerateAndWriteOneSetOfFiles) {
  const std::string out = path("out_two");
  const std::string cfg = writeConfig("two.toml", out, "max_train_epochs = 2\nsave_every_n_epochs = 1\n");
  // With an EMA of the weights (rank 0 keeps it and writes it beside each model).
  ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl", "--nproc_per_node", "2", "--ema_decay", "0.9", "--ema_update_every", "1"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  // Five batches an epoch on two ranks: ceil(5 / 2) = 3 steps an epoch, 6 in all.
  const auto starts = eventsOfType<sinter::events::Start>(r);
  ASSERT_EQ(starts.size(), 1u) << "only rank 0 reports events";
  EXPECT_EQ(starts[0].total_steps, 6);
  EXPECT_EQ(starts[0].device, "cpu + 1 more rank");
  EXPECT_EQ(starts[0].epochs, 2);
  EXPECT_EQ(eventsOfType<sinter::events::Step>(r).size(), 6u);
  const auto done = eventsOfType<sinter::events::Done>(r);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].status, "completed");
  EXPECT_NE(r.err.find("the trained weights are identical on all 2 ranks"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("total batch size (with parallel & distributed & accumulation): 2"), std::string::npos) << r.err;
  // Rank 0's files, once: the epoch save and the final LoRA, each with its EMA, nothing half-written.
  EXPECT_EQ(filesIn(out), (std::vector<std::string>{"t-000001-ema.safetensors", "t-000001.safetensors", "t-ema.safetensors", "t.safetensors"}));
  sinter::io::SafetensorsFile lora(out + "/t.safetensors"), ema(out + "/t-ema.safetensors");
  EXPECT_FALSE(lora.keys().empty());
  EXPECT_EQ(ema.keys(), lora.keys());

  // One process over the same data takes all five batches an epoch.
  ProcessResult one = runRunner({"--config_file", cfg, "--events", "jsonl", "--output_dir", path("out_one")});
  ASSERT_EQ(one.exitCode, 0) << one.err;
  EXPECT_EQ(eventsOfType<sinter::events::Start>(one).at(0).total_steps, 10);
}

TEST_F(DistributedRun, AStopReachesEveryRankAndSavesEachOnesNoiseState) {
  const std::string out = path("out_stop");
  const std::string cfg = writeConfig("stop.toml", out, "max_train_steps = 200\n");
  // The launcher forwards the stop to both workers; rank 0 picks the step they all stop after.
  ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl", "--nproc_per_node", "2"}, [](const std::string& line) {
    auto e = sinter::events::parseJsonLine(line);
    auto s = e ? std::get_if<sinter::events::Step>(&*e) : nullptr;
    return !(s && s->step == 3);
  });
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto done = eventsOfType<sinter::events::Done>(r);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].status, "stopped");
  const long long step = done[0].steps;
  EXPECT_GE(step, 3);
  EXPECT_LT(step, 200);
  char stem[32];
  std::snprintf(stem, sizeof stem, "t-step%08lld", step);
  EXPECT_TRUE(fs::exists(out + "/" + stem + ".safetensors")) << r.err;
  const std::string state = out + "/" + stem + "-state";
  ASSERT_TRUE(fs::exists(state)) << r.err;
  // The state holds both ranks' noise generators; resuming from it on two ranks continues.
  bool rank1Noise = false;
  for (const auto& e : fs::recursive_directory_iterator(state)) {
    if (e.path().extension() != ".safetensors") continue;
    for (const auto& k : sinter::io::SafetensorsFile(e.path().string()).keys()) rank1Noise |= k.find("device_rank1") != std::string::npos;
  }
  EXPECT_TRUE(rank1Noise) << "rank 1's noise state was not saved";
  ProcessResult resumed = runRunner({"--config_file", cfg, "--events", "jsonl", "--nproc_per_node", "2", "--resume", state,
                                     "--max_train_steps", std::to_string(step + 2), "--output_dir", path("out_resumed")});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
  const auto steps = eventsOfType<sinter::events::Step>(resumed);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].step, step + 1);
  EXPECT_EQ(resumed.err.find("holds no noise state"), std::string::npos) << resumed.err;
  // One process resumes it too: the epoch goes on from the share already trained.
  ProcessResult alone = runRunner({"--config_file", cfg, "--events", "jsonl", "--resume", state, "--max_train_steps",
                                   std::to_string(step + 1), "--output_dir", path("out_resumed_alone")});
  ASSERT_EQ(alone.exitCode, 0) << alone.err;
  EXPECT_NE(alone.err.find("was saved by 2 ranks and continues on 1"), std::string::npos) << alone.err;
  EXPECT_EQ(eventsOfType<sinter::events::Step>(alone).size(), 1u);
}

TEST_F(DistributedRun, AKilledRankEndsTheRunWithExitOneAndNothingHalfWritten) {
  const std::string out = path("out_killed");
  const std::string cfg = writeConfig("killed.toml", out, "max_train_steps = 400\nsave_every_n_steps = 2\n");
  pid_t killed = -1;
  ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl", "--nproc_per_node", "2"}, [&](const std::string& line) {
    auto e = sinter::events::parseJsonLine(line);
    auto s = e ? std::get_if<sinter::events::Step>(&*e) : nullptr;
    if (s && s->step == 5 && killed < 0) {
      killed = workerOf(sinter::test::lastRunnerPid(), 1);
      if (killed > 0) ::kill(killed, SIGKILL);
    }
    return true;
  });
  ASSERT_GT(killed, 0) << "rank 1's process was not found";
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_NE(r.err.find("rank 1 was killed by signal 9"), std::string::npos) << r.err;
  const auto done = eventsOfType<sinter::events::Done>(r);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].status, "failed");
  EXPECT_FALSE(eventsOfType<sinter::events::Error>(r).empty());
  // The saves made before are whole files; no temporary file is left.
  int saves = 0;
  for (const std::string& name : filesIn(out)) {
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << name;
    if (fs::path(name).extension() == ".safetensors") {
      EXPECT_NO_THROW(sinter::io::SafetensorsFile(out + "/" + name).keys()) << name;
      ++saves;
    }
  }
  EXPECT_GE(saves, 2);
  EXPECT_FALSE(fs::exists(out + "/t.lock"));  // rank 0 left at once, removing its output lock's file
}

// Rank 0 alone takes the output's lock; when another run holds it, every rank refuses (exit 2)
// rather than wait for rank 0.
TEST_F(DistributedRun, EveryRankRefusesAnOutputThatAnotherRunHolds) {
  const std::string out = path("out_held");
  fs::create_directories(out);
  sinter::train::OutputLock held(sinter::train::outputLockPath(out, "t"));
  const std::string cfg = writeConfig("held.toml", out, "max_train_steps = 2\n");
  ProcessResult r = runRunner({"--config_file", cfg, "--events", "jsonl", "--nproc_per_node", "2"});
  EXPECT_EQ(r.exitCode, 2) << r.err;
  const std::string says = "'" + out + "/t.lock' is locked by another run (pid " + std::to_string(::getpid()) + ")";
  EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  // Torchrun's way: both workers refuse, each saying why.
  const int port = sinter::distributed::freeLocalPort();
  const pid_t r0 = startWorker(0, port, {"--config_file", cfg}, path("held-0.log"));
  const pid_t r1 = startWorker(1, port, {"--config_file", cfg}, path("held-1.log"));
  EXPECT_EQ(exitCodeOf(r0), 2);
  EXPECT_EQ(exitCodeOf(r1), 2);
  for (const std::string& log : {readFile(path("held-0.log")), readFile(path("held-1.log"))}) EXPECT_NE(log.find(says), std::string::npos) << log;
  EXPECT_EQ(filesIn(out), std::vector<std::string>{"t.lock"});
}

TEST_F(DistributedRun, MoreProcessesThanTheLauncherCanStartOrABadCountIsRefused) {
  const std::string cfg = writeConfig("bad.toml", path("out_bad"), "max_train_steps = 2\n");
  ProcessResult r = runRunner({"--config_file", cfg, "--nproc_per_node", "two"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--nproc_per_node takes a whole number"), std::string::npos) << r.err;
  // The tools are one process's work.
  r = runRunner({"--init_dataset", path("never"), "--nproc_per_node", "2"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--nproc_per_node applies to training runs and --benchmark_steps, not to --init_dataset"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("never")));
  // A worker cannot launch workers of its own.
  ::setenv("WORLD_SIZE", "2", 1);
  r = runRunner({"--config_file", cfg, "--nproc_per_node", "2"});
  ::unsetenv("WORLD_SIZE");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("inside a launched worker"), std::string::npos) << r.err;
  // torchrun's environment half set is named.
  ::setenv("WORLD_SIZE", "2", 1);
  ::setenv("RANK", "0", 1);
  r = runRunner({"--config_file", cfg});
  ::unsetenv("WORLD_SIZE");
  ::unsetenv("RANK");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("LOCAL_RANK is not set"), std::string::npos) << r.err;
}

TEST_F(DistributedRun, WorkersStartedWithTorchrunsEnvironmentTrainTogether) {
  const std::string out = path("out_torchrun");
  const std::string cfg = writeConfig("torchrun.toml", out, "max_train_steps = 4\n");
  const int port = sinter::distributed::freeLocalPort();
  const pid_t r0 = startWorker(0, port, {"--config_file", cfg}, path("torchrun-0.log"));
  const pid_t r1 = startWorker(1, port, {"--config_file", cfg}, path("torchrun-1.log"));
  EXPECT_EQ(exitCodeOf(r0), 0) << readFile(path("torchrun-0.log"));
  EXPECT_EQ(exitCodeOf(r1), 0) << readFile(path("torchrun-1.log"));
  const std::string log0 = readFile(path("torchrun-0.log"));
  EXPECT_NE(log0.find("data parallel: rank 0 of 2"), std::string::npos) << log0;
  EXPECT_NE(log0.find("the trained weights are identical on all 2 ranks"), std::string::npos) << log0;
  EXPECT_EQ(filesIn(out), (std::vector<std::string>{"t.safetensors"}));
}

TEST_F(DistributedRun, RanksWithDifferentConfigsRefuseToStart) {
  const std::string cfg = writeConfig("mismatch.toml", path("out_mismatch"), "max_train_steps = 4\n");
  const int port = sinter::distributed::freeLocalPort();
  const pid_t r0 = startWorker(0, port, {"--config_file", cfg}, path("mismatch-0.log"));
  const pid_t r1 = startWorker(1, port, {"--config_file", cfg, "--learning_rate", "0.5"}, path("mismatch-1.log"));
  EXPECT_EQ(exitCodeOf(r0), 2);
  EXPECT_EQ(exitCodeOf(r1), 2);
  for (const std::string& log : {readFile(path("mismatch-0.log")), readFile(path("mismatch-1.log"))})
    EXPECT_NE(log.find("rank 1's config differs from rank 0's: line"), std::string::npos) << log;
  EXPECT_NE(readFile(path("mismatch-1.log")).find("learning_rate = 0.5"), std::string::npos);
  EXPECT_FALSE(fs::exists(path("out_mismatch") + "/t.safetensors"));
}

// Fine-tuning on two ranks: the plain step (gradients all-reduced in buckets) and the fused backward
// pass (each gradient all-reduced just before its own step) average the same gradients, so both
// train the same weights, bit for bit, and on every rank.
TEST_F(DistributedRun, AFusedBackwardPassOnTwoRanksTrainsAsThePlainStep) {
  const std::string extra = "training_type = \"finetune\"\nmax_train_steps = 3\noptimizer_type = \"Adafactor\"\n"
                            "optimizer_args = [\"scale_parameter=False\", \"relative_step=False\", \"warmup_init=False\"]\n"
                            "max_grad_norm = 0.0\n";
  ProcessResult plain = runRunner({"--config_file", writeConfig("ft_plain.toml", path("out_ft_plain"), extra), "--nproc_per_node", "2"});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  ProcessResult fused = runRunner(
      {"--config_file", writeConfig("ft_fused.toml", path("out_ft_fused"), extra + "fused_backward_pass = true\n"), "--nproc_per_node", "2"});
  ASSERT_EQ(fused.exitCode, 0) << fused.err;
  EXPECT_NE(fused.err.find("each gradient all-reduced before its fused step"), std::string::npos) << fused.err;
  for (const ProcessResult* r : {&plain, &fused})
    EXPECT_NE(r->err.find("the trained weights are identical on all 2 ranks"), std::string::npos) << r->err;
  sinter::io::SafetensorsFile a(path("out_ft_plain/t.safetensors")), b(path("out_ft_fused/t.safetensors")), base(path("tiny_sdxl.safetensors"));
  ASSERT_EQ(a.keys(), b.keys());
  bool trained = false;
  for (const auto& k : a.keys()) {
    EXPECT_TRUE(torch::equal(a.tensor(k), b.tensor(k))) << k;
    if (k.rfind("model.diffusion_model.", 0) == 0 && base.has(k)) trained |= !torch::equal(a.tensor(k), base.tensor(k).to(a.tensor(k).dtype()));
  }
  EXPECT_TRUE(trained) << "the U-Net did not change";
}

TEST_F(DistributedRun, MixedPrecisionOnTwoRanksWithGradientsInFp16OnTheWireTrainsCloseToFloat32) {
  // bf16 compute copies: the reducer takes the copies' gradients bucket by bucket into the float32
  // masters' buffer and all-reduces it there (or, with ddp_comm_hook fp16, in 16 bits; Gloo here has no bf16 sum).
  const std::string extra = "mixed_precision = \"bf16\"\nmax_train_steps = 3\n";
  ProcessResult native = runRunner({"--config_file", writeConfig("mp_no.toml", path("out_mp_no"), extra), "--nproc_per_node", "2"});
  ASSERT_EQ(native.exitCode, 0) << native.err;
  ProcessResult half = runRunner(
      {"--config_file", writeConfig("mp_fp16.toml", path("out_mp_fp16"), extra + "ddp_comm_hook = \"fp16\"\n"), "--nproc_per_node", "2"});
  ASSERT_EQ(half.exitCode, 0) << half.err;
  EXPECT_NE(native.err.find("all-reduced in order as backward completes them"), std::string::npos) << native.err;
  EXPECT_NE(half.err.find("(fp16 on the wire)"), std::string::npos) << half.err;
  for (const ProcessResult* r : {&native, &half})
    EXPECT_NE(r->err.find("the trained weights are identical on all 2 ranks"), std::string::npos) << r->err;
  // Three AdamW steps from the same start: the LoRA weights differ by the gradients' rounding only.
  sinter::io::SafetensorsFile a(path("out_mp_no/t.safetensors")), b(path("out_mp_fp16/t.safetensors"));
  ASSERT_EQ(a.keys(), b.keys());
  double diff = 0, norm = 0;
  for (const auto& k : a.keys()) {
    if (k.find("lora_up") == std::string::npos) continue;
    const torch::Tensor x = a.tensor(k).to(torch::kFloat64), y = b.tensor(k).to(torch::kFloat64);
    diff += (x - y).pow(2).sum().item<double>();
    norm += x.pow(2).sum().item<double>();
  }
  ASSERT_GT(norm, 0.0) << "the LoRA did not train";
  EXPECT_LT(std::sqrt(diff / norm), 0.05) << "fp16 gradient communication moved the trained LoRA too far";
}

TEST_F(DistributedRun, A16BitGradientCommunicationWithTheFusedBackwardPassIsRefused) {
  const std::string extra = "training_type = \"finetune\"\nmax_train_steps = 1\noptimizer_type = \"Adafactor\"\n"
                            "optimizer_args = [\"scale_parameter=False\", \"relative_step=False\", \"warmup_init=False\"]\n"
                            "fused_backward_pass = true\nddp_comm_hook = \"fp16\"\n";
  ProcessResult r = runRunner({"--config_file", writeConfig("ft_fused_fp16.toml", path("out_ft_fused_fp16"), extra), "--nproc_per_node", "2"});
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.err.find("ddp_comm_hook = \"fp16\" does not go with fused_backward_pass"), std::string::npos) << r.err;
}
