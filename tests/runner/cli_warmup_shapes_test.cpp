// The shapes a run captures before step 1 (from the batch plan's signatures, and the same joined as
// batched gradient accumulation runs them) must be the shapes its batches stage into, or the
// captured graphs are never replayed. Checked on the demo's tiny
// model (its VAE downscales by 2, not 8) and at each max_token_length.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "cli/demo_assets.h"
#include "data/batch_loader.h"
#include "data/batch_plan.h"
#include "data/joined_batch.h"
#include "models/checkpoints/random_checkpoint.h"
#include "train/loop/run_preflight.h"
#include "train/sdxl/sdxl_family.h"

namespace fs = std::filesystem;
using namespace sinter;
using namespace sinter::train;

TEST(WarmupShapes, AreTheShapesBatchesStageInto) {
  const fs::path dir = fs::temp_directory_path() / ("sinter-warmup-shapes-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  models::writeRandomSdxlCheckpoint((dir / "tiny.safetensors").string(), /*tiny=*/true, 1);
  runner::writeByteLevelClipVocabulary((dir / "tokenizer").string());
  runner::writeDemoDataset((dir / "images").string(), 6, 1);
  for (long long maxTokens : {75LL, 150LL, 225LL}) {
    SCOPED_TRACE("max_token_length " + std::to_string(maxTokens));
    Config config;
    config.set("model_family", std::string("sdxl"));
    config.set("pretrained_model_name_or_path", (dir / "tiny.safetensors").string());
    config.set("clip_tokenizer", (dir / "tokenizer").string());
    config.set("train_data_dir", (dir / "images").string());
    config.set("output_dir", (dir / "out").string());
    config.set("resolution", std::string("128,128"));
    config.set("enable_bucket", true);
    config.set("min_bucket_reso", 64LL);
    config.set("max_bucket_reso", 256LL);
    config.set("bucket_reso_steps", 32LL);
    config.set("caption_extension", std::string(".txt"));
    config.set("train_batch_size", 2LL);
    config.set("max_token_length", maxTokens);
    config.set("network_train_unet_only", true);
    RunPreflight preflight = preflightRun(config);
    ASSERT_TRUE(preflight.ok());
    EventSink events(false);
    const RunContext run{preflight.resolved, torch::kCPU, PrecisionPlan{}, 1, events, std::chrono::steady_clock::now()};
    SdxlFamily family(run);
    const data::BatchPlan plan(*preflight.dataset, 1);
    const std::vector<data::ShapeSignature> signatures = plan.shapeSignatures();
    ASSERT_GE(signatures.size(), 2u);  // several buckets
    // One batch of each signature (staging encodes latents and captions, which takes a while on the CPU).
    data::BatchLoader loader(*preflight.dataset, plan, data::LoaderOptions{});
    std::vector<bool> seen(signatures.size(), false);
    for (long long i = 0; i < plan.batchesPerEpoch(); ++i) {
      const data::Batch batch = loader.next();
      size_t k = 0;
      while (k < signatures.size() && !(signatures[k].width == batch.bucket.width && signatures[k].height == batch.bucket.height &&
                                        signatures[k].batchSize == batch.lossWeights.size(0)))
        ++k;
      ASSERT_LT(k, signatures.size()) << "batch " << i << " has no planned signature";
      if (seen[k]) continue;
      seen[k] = true;
      EXPECT_EQ(family.stageWarmup(signatures[k]).describe(), family.stage(batch).describe());
      // Joined as batched gradient accumulation runs two micro-batches of it in one pass.
      data::ShapeSignature joined = signatures[k];
      joined.batchSize *= 2;
      joined.microBatches = 2;
      std::string why;
      const std::optional<data::Batch> pass = data::joinBatches({batch, batch}, &why);
      ASSERT_TRUE(pass) << why;
      EXPECT_EQ(family.stageWarmup(joined).describe(), family.stage(*pass).describe());
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), true), static_cast<long>(signatures.size()));
  }
  fs::remove_all(dir);
}
