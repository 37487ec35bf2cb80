// T5's tokenizer in a process that holds libtorch, as the caching passes will use it: Debian's
// libsentencepiece carries its own protobuf-lite and libtorch brings libprotobuf, and linking both
// once crashed every torch test at load. Torch works before and after tokenizing, the tokens
// become the [batch, length] tensors the T5 encoder takes, and tokenizing on several threads while
// torch computes agrees with spm_encode.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>
#include <memory>
#include <thread>

#include "spiece_test_model.h"
#include "text/t5_tokenizer.h"

using sinter::text::T5Tokenizer;
using sinter::text::T5TokenizerError;

namespace {

class T5TokensBesideTorch : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!sinter::text::t5TokenizerCompiledIn()) GTEST_SKIP() << "configured with -DSINTER_WITH_SENTENCEPIECE=OFF";
    model = std::make_unique<sinter::text::testing::SpieceTestModel>();
  }
  std::unique_ptr<sinter::text::testing::SpieceTestModel> model;
};

double torchWorks() {
  torch::manual_seed(0);
  const torch::Tensor a = torch::randn({64, 64}, torch::kDouble);
  return torch::matmul(a, a.t()).trace().item<double>();  // the squared Frobenius norm of a
}

}  // namespace

TEST_F(T5TokensBesideTorch, TorchBeforeAndAfterAndTheTokensAsTensors) {
  const double before = torchWorks();
  const T5Tokenizer tokenizer(model->folder().string());
  const std::vector<std::string> captions{"a photo of a cat", "a painting of a dog in the snow", ""};
  const int64_t length = 40;
  sinter::text::T5Tokens tokens = tokenizer.encode(captions, length);
  const torch::Tensor ids = torch::from_blob(tokens.ids.data(), {tokens.batch, tokens.length}, torch::kLong).clone();
  const torch::Tensor mask = torch::from_blob(tokens.mask.data(), {tokens.batch, tokens.length}, torch::kLong).clone();
  ASSERT_EQ(ids.sizes(), (std::vector<int64_t>{3, length}));
  for (int64_t b = 0; b < ids.size(0); ++b) {
    std::vector<int> expected = model->spmEncode(captions[static_cast<size_t>(b)]);
    expected.push_back(T5Tokenizer::kEosId);
    ASSERT_EQ(mask[b].sum().item<int64_t>(), static_cast<int64_t>(expected.size()));
    for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(ids[b][static_cast<int64_t>(i)].item<int64_t>(), expected[i]);
  }
  EXPECT_EQ((ids * (1 - mask)).abs().sum().item<int64_t>(), 0);  // padding is 0 wherever the mask is
  EXPECT_EQ(torchWorks(), before);
}

TEST_F(T5TokensBesideTorch, SeveralThreadsTokenizeWhileTorchComputes) {
  const T5Tokenizer tokenizer(model->file().string());
  const std::vector<std::string> captions{"two cats and a dog playing in the garden", "sks person wearing a hat"};
  const sinter::text::T5Tokens expected = tokenizer.encode(captions, 32);
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 100; ++round) mismatches[t] += tokenizer.encode(captions, 32).ids != expected.ids;
    });
  const double first = torchWorks();
  for (int round = 0; round < 20; ++round) EXPECT_EQ(torchWorks(), first);
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

TEST_F(T5TokensBesideTorch, AnUnreadableModelIsAnErrorAndTorchGoesOn) {
  const double before = torchWorks();
  const std::string bad = (model->dir() / "bad.model").string();
  std::ofstream(bad) << "not a sentencepiece model";
  EXPECT_THROW(T5Tokenizer tokenizer(bad), T5TokenizerError);
  EXPECT_EQ(torchWorks(), before);
}
