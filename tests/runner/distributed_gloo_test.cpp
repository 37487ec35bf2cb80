// Data parallel pieces on c10d's Gloo backend, with two real processes on the CPU: the gradient
// all-reduce against one process over the same batches, the config check, the stop agreement and
// the weights check. Each test forks its ranks before it uses torch (no thread pools yet), and
// they meet through a TCPStore on 127.0.0.1. Skipped where the build has no Gloo.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <cmath>
#include <functional>
#include <sstream>
#include <utility>

#include "distributed/gradient_reducer.h"
#include "distributed/process_group.h"
#include "distributed/rank_agreement.h"
#include "distributed/torchrun_environment.h"
#include "distributed/worker_launcher.h"
#include "train/base/compute_copies.h"

namespace fs = std::filesystem;
using namespace sinter::distributed;

namespace {

fs::path scratch() {
  const fs::path p = fs::temp_directory_path() / ("sinter_gloo_" + std::to_string(::getpid()));
  fs::create_directories(p);
  return p;
}

// Runs `body(group)` in `n` forked ranks; returns their exit codes (the body's return value, 3 when
// it threw, after writing what it threw to <dir>/error-<rank>).
std::vector<int> runRanks(int n, const fs::path& dir, const std::function<int(ProcessGroup&)>& body) {
  const int port = freeLocalPort();
  std::vector<pid_t> pids;
  for (int rank = 0; rank < n; ++rank) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      int code = 3;
      try {
        TorchrunEnvironment env;
        env.rank = rank, env.worldSize = n, env.localRank = rank, env.localWorldSize = n;
        env.masterAddr = "127.0.0.1", env.masterPort = port;
        auto group = ProcessGroup::connect(env, torch::kCPU, std::chrono::seconds(60));
        code = body(*group);
      } catch (const std::exception& e) {
        std::ofstream(dir / ("error-" + std::to_string(rank))) << e.what();
      }
      std::fflush(nullptr);
      ::_exit(code);
    }
    pids.push_back(pid);
  }
  std::vector<int> codes;
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  return codes;
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A small float64 network with a parameter no loss uses (its gradient stays undefined).
struct Net : torch::nn::Module {
  Net() {
    torch::manual_seed(11);
    a = register_module("a", torch::nn::Linear(6, 16));
    b = register_module("b", torch::nn::Linear(16, 16));
    c = register_module("c", torch::nn::Linear(16, 3));
    unused = register_parameter("unused", torch::ones({5}));
    to(torch::kFloat64);
  }
  torch::Tensor forward(const torch::Tensor& x) { return c(torch::gelu(b(torch::tanh(a(x))))); }
  torch::nn::Linear a{nullptr}, b{nullptr}, c{nullptr};
  torch::Tensor unused;
};

// Batch i of the run (fixed, any rank can make any of them).
std::pair<torch::Tensor, torch::Tensor> batch(int i) {
  torch::manual_seed(100 + i);
  return {torch::randn({4, 6}, torch::kFloat64), torch::randn({4, 3}, torch::kFloat64)};
}

torch::Tensor loss(Net& net, int i) {
  auto [x, y] = batch(i);
  return torch::mse_loss(net.forward(x), y);
}

// What rank `r` saved as grads-<r>.pt.
std::vector<torch::Tensor> rankGradients(const fs::path& dir, int r) {
  std::vector<torch::Tensor> grads;
  torch::load(grads, (dir / ("grads-" + std::to_string(r) + ".pt")).string());
  return grads;
}

// Rank 0's buckets-0: its bucket count, and how many started while backward ran.
std::pair<size_t, size_t> bucketCounts(const fs::path& dir) {
  std::istringstream buckets(readFile(dir / "buckets-0"));
  size_t count = 0, overlapped = 0;
  buckets >> count >> overlapped;
  return {count, overlapped};
}

// Several buckets, some of them started during backward, not all (the unused parameter's bucket
// can only start in finish()).
void expectBucketsOverlappedBackward(const fs::path& dir) {
  const auto [count, overlapped] = bucketCounts(dir);
  EXPECT_GT(count, 3u);
  EXPECT_GT(overlapped, 0u) << "no bucket was all-reduced while backward ran";
  EXPECT_LT(overlapped, count) << "the unused parameter's bucket can only start in finish()";
}

}  // namespace

TEST(TorchrunEnvironment, OneProcessWithoutWorldSize) {
  EXPECT_FALSE(readTorchrunEnvironment([](const char*) -> const char* { return nullptr; }));
  EXPECT_FALSE(readTorchrunEnvironment([](const char* n) -> const char* { return std::string(n) == "WORLD_SIZE" ? "1" : nullptr; }));
}

TEST(TorchrunEnvironment, ReadsTorchrunsVariablesAndNamesABadOne) {
  std::map<std::string, std::string> vars{{"WORLD_SIZE", "4"}, {"RANK", "3"},           {"LOCAL_RANK", "1"},
                                          {"LOCAL_WORLD_SIZE", "2"}, {"MASTER_ADDR", "node0"}, {"MASTER_PORT", "29500"}};
  auto lookup = [&](const char* n) -> const char* {
    auto it = vars.find(n);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
  const auto env = readTorchrunEnvironment(lookup);
  ASSERT_TRUE(env);
  EXPECT_EQ(env->rank, 3);
  EXPECT_EQ(env->worldSize, 4);
  EXPECT_EQ(env->localRank, 1);
  EXPECT_EQ(env->localWorldSize, 2);
  EXPECT_EQ(env->masterAddr, "node0");
  EXPECT_EQ(env->masterPort, 29500);
  auto message = [&] {
    try {
      readTorchrunEnvironment(lookup);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  vars["RANK"] = "4";
  EXPECT_NE(message().find("RANK is '4'"), std::string::npos) << message();
  vars["RANK"] = "0";
  vars["MASTER_PORT"] = "http";
  EXPECT_NE(message().find("MASTER_PORT is 'http'"), std::string::npos) << message();
  vars.erase("MASTER_PORT");
  EXPECT_NE(message().find("MASTER_PORT is not set"), std::string::npos) << message();
}

TEST(Nccl, CapturableFromTwoNineSix) {
  EXPECT_TRUE(ncclCapturable("2.9.6"));
  EXPECT_TRUE(ncclCapturable("2.27.7"));
  EXPECT_TRUE(ncclCapturable("3.0.0"));
  EXPECT_FALSE(ncclCapturable("2.9.5"));
  EXPECT_FALSE(ncclCapturable("2.8.4"));
  EXPECT_FALSE(ncclCapturable(""));  // no NCCL in this build
}

TEST(GlooRanks, AllReducedGradientsEqualOneProcessOverTheSameBatches) {
  if (!distributedCompiledIn()) GTEST_SKIP() << "this libtorch has no c10d process groups (Gloo)";
  const fs::path dir = scratch() / "reduce";
  fs::create_directories(dir);
  // Two ranks, two micro-batches each (gradient accumulation): rank r takes batches r and r + 2.
  // Tiny buckets, so that several are all-reduced, some while backward still runs.
  const std::vector<int> codes = runRanks(2, dir, [&](ProcessGroup& group) {
    Net net;
    std::vector<torch::Tensor> params = net.parameters();
    group.broadcastFromRankZero(params);
    GradientReducer reducer(group, params, nullptr, GradientCommunication::Native, /*bucketBytes=*/256);
    for (int micro = 0; micro < 2; ++micro) {
      torch::Tensor l = loss(net, group.rank() + 2 * micro) / 2;
      reducer.beginBackward(micro == 1);  // after the forward pass, which made the accumulators
      l.backward();
    }
    reducer.finish();
    std::vector<torch::Tensor> grads;
    for (const auto& p : params) grads.push_back(p.grad());
    torch::save(grads, (dir / ("grads-" + std::to_string(group.rank()) + ".pt")).string());
    std::ofstream(dir / ("buckets-" + std::to_string(group.rank()))) << reducer.bucketCount() << " " << reducer.bucketsOverlapped();
    return 0;
  });
  for (int r = 0; r < 2; ++r) ASSERT_EQ(codes[r], 0) << readFile(dir / ("error-" + std::to_string(r)));

  // One process over the same four batches: the mean of their gradients.
  Net net;
  for (int i = 0; i < 4; ++i) (loss(net, i) / 4).backward();
  std::vector<torch::Tensor> expected;
  for (const auto& p : net.parameters()) expected.push_back(p.grad().defined() ? p.grad() : torch::zeros_like(p));
  for (int r = 0; r < 2; ++r) {
    const std::vector<torch::Tensor> grads = rankGradients(dir, r);
    ASSERT_EQ(grads.size(), expected.size());
    for (size_t k = 0; k < grads.size(); ++k)
      EXPECT_TRUE(torch::allclose(grads[k], expected[k], 1e-12, 1e-14)) << "rank " << r << " parameter " << k;
  }
  expectBucketsOverlappedBackward(dir);
  fs::remove_all(dir);
}

namespace {

// Mixed precision's layout (train/base/compute_copies.h): the net computes with copies and the
// float32 masters' gradients are a flat buffer. Each rank runs two micro-batches and hands the
// reducer the compact gradients; returns the masters' gradients after finish().
std::vector<torch::Tensor> compactRankGradients(ProcessGroup& group, GradientCommunication communication, size_t* overlapped,
                                                size_t* buckets, bool overlapWithBackward) {
  Net net;
  net.to(torch::kFloat32);
  std::vector<torch::Tensor> params = net.parameters();
  group.broadcastFromRankZero(params);
  // The copies compute in float32 too: the all-reduce, not the copies' rounding, is under test.
  std::unique_ptr<sinter::train::ComputeCopies> copies = sinter::train::ComputeCopies::ofParameters(params, torch::kFloat32);
  const CompactGradients compact{copies->masters(), copies->copies(), copies->masterGradients(), copies->copyGradients()};
  GradientReducer reducer(group, copies->masters(), &compact, communication, /*bucketBytes=*/256);
  reducer.setOverlapWithBackward(overlapWithBackward);
  for (int micro = 0; micro < 2; ++micro) {
    auto [x, y] = batch(group.rank() + 2 * micro);
    torch::Tensor l = torch::mse_loss(net.forward(x.to(torch::kFloat32)), y.to(torch::kFloat32)) / 2;
    reducer.beginBackward(micro == 1);
    l.backward();
    // OptimizerUpdate's order: collect after each backward pass unless the reducer does.
    if (!reducer.collectsCompactGradients()) copies->collectGradients();
  }
  reducer.finish();
  *overlapped = reducer.bucketsOverlapped();
  *buckets = reducer.bucketCount();
  std::vector<torch::Tensor> grads;
  for (const auto& m : copies->masters()) grads.push_back(m.grad().clone());
  EXPECT_EQ(copies->copyGradients().abs().sum().item<double>(), 0.0) << "the copies' gradients were not collected";
  return grads;
}

// The float64 gradients of one process over `batches`, each divided by `divisor`.
std::vector<torch::Tensor> processGradients(const std::vector<int>& batches, double divisor) {
  Net net;
  for (int i : batches) (loss(net, i) / divisor).backward();
  std::vector<torch::Tensor> g;
  for (const auto& p : net.parameters()) g.push_back(p.grad().defined() ? p.grad() : torch::zeros_like(p));
  return g;
}

void runCompact(const fs::path& dir, GradientCommunication communication, bool overlapWithBackward = true) {
  const std::vector<int> codes = runRanks(2, dir, [&](ProcessGroup& group) {
    size_t overlapped = 0, buckets = 0;
    std::vector<torch::Tensor> grads = compactRankGradients(group, communication, &overlapped, &buckets, overlapWithBackward);
    torch::save(grads, (dir / ("grads-" + std::to_string(group.rank()) + ".pt")).string());
    std::ofstream(dir / ("buckets-" + std::to_string(group.rank()))) << buckets << " " << overlapped;
    return ::testing::Test::HasFailure() ? 4 : 0;
  });
  for (int r = 0; r < 2; ++r) ASSERT_EQ(codes[r], 0) << readFile(dir / ("error-" + std::to_string(r)));
}

}  // namespace

namespace {

// Every rank's masters' gradients are the float64 mean of the four micro-batches' within float32's rounding.
void expectCompactMeans(const fs::path& dir) {
  const std::vector<torch::Tensor> expected = processGradients({0, 1, 2, 3}, 4);
  for (int r = 0; r < 2; ++r) {
    const std::vector<torch::Tensor> grads = rankGradients(dir, r);
    ASSERT_EQ(grads.size(), expected.size());
    for (size_t k = 0; k < grads.size(); ++k) {
      // float32 against float64: a few roundings of each term, relative to the terms' size.
      const double scale = expected[k].abs().max().item<double>() + 1e-30;
      EXPECT_LE((grads[k].to(torch::kFloat64) - expected[k]).abs().max().item<double>(), 1e-5 * scale) << "rank " << r << " parameter " << k;
    }
  }
}

}  // namespace

TEST(GlooRanks, MixedPrecisionGradientsAreReducedWhereTheyLieAsBackwardCompletesThem) {
  if (!distributedCompiledIn()) GTEST_SKIP() << "this libtorch has no c10d process groups (Gloo)";
  const fs::path dir = scratch() / "compact";
  fs::create_directories(dir);
  runCompact(dir, GradientCommunication::Native);
  expectCompactMeans(dir);
  expectBucketsOverlappedBackward(dir);
  fs::remove_all(dir);
}

// FLUX's choice (FamilyFacts::overlapGradientReduction): every bucket starts after backward, the
// same means.
TEST(GlooRanks, BucketsStartedAfterBackwardGiveTheSameMeans) {
  if (!distributedCompiledIn()) GTEST_SKIP() << "this libtorch has no c10d process groups (Gloo)";
  if (std::getenv("SINTER_DDP_OVERLAP")) GTEST_SKIP() << "SINTER_DDP_OVERLAP is set: it overrides the choice under test";
  const fs::path dir = scratch() / "compact_after";
  fs::create_directories(dir);
  runCompact(dir, GradientCommunication::Native, /*overlapWithBackward=*/false);
  expectCompactMeans(dir);
  const auto [count, overlapped] = bucketCounts(dir);
  EXPECT_GT(count, 3u);
  EXPECT_EQ(overlapped, 0u) << "a bucket started while backward ran";
  fs::remove_all(dir);
}

namespace {

// Each rank's share (its two micro-batches' mean, halved) is rounded to the wire's type and the sum
// of the two is rounded again: within `unit` (half an ulp, relative) of each share and of the sum,
// plus the subnormal spacing `tiny` for each rounding.
void expectSharesRoundedOnTheWire(const fs::path& dir, at::ScalarType wire, double unit, double tiny) {
  const std::vector<torch::Tensor> share0 = processGradients({0, 2}, 4), share1 = processGradients({1, 3}, 4);
  bool anyRounded = false;
  for (int r = 0; r < 2; ++r) {
    const std::vector<torch::Tensor> grads = rankGradients(dir, r);
    ASSERT_EQ(grads.size(), share0.size());
    for (size_t k = 0; k < grads.size(); ++k) {
      const torch::Tensor expected = share0[k] + share1[k];
      const torch::Tensor bound = 2 * unit * (share0[k].abs() + share1[k].abs() + expected.abs()) + 3 * tiny + 1e-30;
      const torch::Tensor error = (grads[k].to(torch::kFloat64) - expected).abs();
      EXPECT_TRUE((error <= bound).all().item<bool>()) << "rank " << r << " parameter " << k << ": worst excess "
                                                       << (error - bound).max().item<double>();
      anyRounded |= (error > 1e-6 * (expected.abs() + 1e-30)).any().item<bool>();
      // Every value is one of the wire type's, widened.
      EXPECT_TRUE(torch::equal(grads[k], grads[k].to(wire).to(torch::kFloat32))) << "parameter " << k;
    }
  }
  EXPECT_TRUE(anyRounded) << "16-bit communication changed nothing: the gradients did not travel in 16 bits";
}

}  // namespace

TEST(GlooRanks, Fp16CommunicationRoundsEachSharedGradientToElevenBits) {
  if (!distributedCompiledIn()) GTEST_SKIP() << "this libtorch has no c10d process groups (Gloo)";
  const fs::path dir = scratch() / "fp16";
  fs::create_directories(dir);
  runCompact(dir, GradientCommunication::Float16);
  expectSharesRoundedOnTheWire(dir, at::kHalf, std::ldexp(1.0, -11), std::ldexp(1.0, -25));
  fs::remove_all(dir);
}

TEST(GlooRanks, Bf16CommunicationRoundsToEightBitsOrIsRefusedWhereGlooCannotSumIt) {
  if (!distributedCompiledIn()) GTEST_SKIP() << "this libtorch has no c10d process groups (Gloo)";
  const fs::path dir = scratch() / "bf16";
  fs::create_directories(dir);
  const std::vector<int> codes = runRanks(2, dir, [&](ProcessGroup& group) {
    size_t overlapped = 0, buckets = 0;
    try {
      std::vector<torch::Tensor> grads = compactRankGradients(group, GradientCommunication::BFloat16, &overlapped, &buckets, true);
      torch::save(grads, (dir / ("grads-" + std::to_string(group.rank()) + ".pt")).string());
    } catch (const std::invalid_argument& e) {
      std::ofstream(dir / ("refused-" + std::to_string(group.rank()))) << e.what();
    }
    return 0;
  });
  for (int r = 0; r < 2; ++r) ASSERT_EQ(codes[r], 0) << readFile(dir / ("error-" + std::to_string(r)));
  if (fs::exists(dir / "refused-0")) {
    // Debian's libtorch 1.13: Gloo has no bf16 sum. Both ranks refuse, before any step, naming the option.
    for (int r = 0; r < 2; ++r)
      EXPECT_EQ(readFile(dir / ("refused-" + std::to_string(r))),
                "ddp_comm_hook = \"bf16\": this build's gloo cannot sum bf16 tensors; use \"fp16\" or \"no\"");
  } else {
    expectSharesRoundedOnTheWire(dir, at::kBFloat16, std::ldexp(1.0, -8), 0.0);
  }
  fs::remove_all(dir);
}

TEST(GlooRanks, BroadcastGivesEveryRankRankZerosWeights) {
  if (!distributedCompiledIn()) GTEST_SKIP() << "this libtorch has no c10d process groups (Gloo)";
  const fs::path dir = scratch() / "broadcast";
  fs::create_directories(dir);
  const std::vector<int> codes = runRanks(2, dir, [&](ProcessGroup& group) {
    torch::Tensor a = torch::full({3}, static_cast<float>(group.rank() + 1));
    torch::Tensor b = torch::full({2, 2}, static_cast<double>(10 * (group.rank() + 1)), torch::kFloat64);
    group.broadcastFromRankZero({a, b});
    return a.eq(1).all().item<bool>() && b.eq(10).all().item<bool>() ? 0 : 1;
  });
  EXPECT_EQ(codes, (std::vector<int>{0, 0})) << readFile(dir / "error-1");
  fs::remove_all(dir);
}

TEST(GlooRanks, AConfigThatDiffersIsAnErrorOnEveryRankNamingTheLine) {
  if (!distributedCompiledIn()) GTEST_SKIP() << "this libtorch has no c10d process groups (Gloo)";
  const fs::path dir = scratch() / "config";
  fs::create_directories(dir);
  const std::vector<int> codes = runRanks(2, dir, [&](ProcessGroup& group) {
    requireSameConfig(group, "model_family = \"sdxl\"\nlearning_rate = " + std::string(group.rank() == 0 ? "0.0001" : "0.001") + "\n");
    return 0;
  });
  EXPECT_EQ(codes, (std::vector<int>{3, 3}));
  for (int r = 0; r < 2; ++r) {
    const std::string e = readFile(dir / ("error-" + std::to_string(r)));
    EXPECT_NE(e.find("rank 1's config differs from rank 0's: line 2"), std::string::npos) << e;
    EXPECT_NE(e.find("learning_rate = 0.001"), std::string::npos) << e;
  }
  // The same config passes.
  EXPECT_EQ(runRanks(2, dir, [&](ProcessGroup& group) {
              requireSameConfig(group, "seed = 1\n");
              return 0;
            }),
            (std::vector<int>{0, 0}));
  fs::remove_all(dir);
}

TEST(GlooRanks, EveryRankStopsAfterTheStepRankZeroChose) {
  if (!distributedCompiledIn()) GTEST_SKIP() << "this libtorch has no c10d process groups (Gloo)";
  const fs::path dir = scratch() / "stop";
  fs::create_directories(dir);
  // Rank 1 is asked to stop at step 2, rank 0 only at step 4: both leave after step 4.
  const std::vector<int> codes = runRanks(2, dir, [&](ProcessGroup& group) {
    StopAgreement agreement(group);
    torch::Tensor t = torch::ones({1});
    for (long long step = 1; step <= 10; ++step) {
      group.allreduceSum(t).wait();
      const bool askedHere = step >= (group.rank() == 0 ? 4 : 2);
      if (agreement.stopAfter(step, askedHere)) {
        group.barrier();  // as the training loop ends: rank 0's store outlives the others' questions
        return static_cast<int>(10 + step);
      }
    }
    return 1;
  });
  EXPECT_EQ(codes, (std::vector<int>{14, 14}));
  fs::remove_all(dir);
}

TEST(GlooRanks, WeightsThatDivergeAreFoundAfterTraining) {
  if (!distributedCompiledIn()) GTEST_SKIP() << "this libtorch has no c10d process groups (Gloo)";
  const fs::path dir = scratch() / "weights";
  fs::create_directories(dir);
  EXPECT_EQ(runRanks(2, dir, [&](ProcessGroup& group) {
              requireIdenticalWeights(group, {torch::arange(6, torch::kFloat32), torch::ones({2})});
              return 0;
            }),
            (std::vector<int>{0, 0}));
  EXPECT_EQ(runRanks(2, dir, [&](ProcessGroup& group) {
              torch::Tensor w = torch::arange(6, torch::kFloat32);
              if (group.rank() == 1) w[5] = std::nextafter(5.0f, 6.0f);
              requireIdenticalWeights(group, {w});
              return 0;
            }),
            (std::vector<int>{3, 3}));
  EXPECT_NE(readFile(dir / "error-0").find("rank 1's trained weights differ from rank 0's"), std::string::npos);
  fs::remove_all(dir);
}
