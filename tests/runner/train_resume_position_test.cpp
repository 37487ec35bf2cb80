// A resumed run's data position: unchanged in the same layout; carried over as the share of the
// epoch, with a warning naming both values, when the state was saved with another batch size or by
// another number of ranks.
#include <gtest/gtest.h>

#include "train/loop/resume_position.h"

using sinter::train::EpochLayout;
using sinter::train::dataPositionJson;
using sinter::train::resumeDataPosition;

TEST(ResumePosition, TheSameLayoutContinuesWhereItStoppedWithoutAWord) {
  const EpochLayout layout{1, 2, 60};
  const auto data = dataPositionJson({7, 3, 11}, layout);
  EXPECT_EQ(data.at("train_batch_size"), 2);
  EXPECT_EQ(data.at("batches_per_epoch"), 60);
  EXPECT_EQ(data.at("ranks"), 1);
  const auto r = resumeDataPosition(data, layout, "s");
  EXPECT_EQ(r.position, (sinter::data::DataOrderState{7, 3, 11}));
  EXPECT_TRUE(r.warnings.empty());
}

TEST(ResumePosition, AnotherBatchSizeKeepsTheShareOfTheEpochAndSaysSo) {
  const auto data = dataPositionJson({7, 1, 15}, EpochLayout{1, 2, 60});  // a quarter of the epoch
  const auto r = resumeDataPosition(data, EpochLayout{1, 1, 120}, "out/t-step00000075-state");
  EXPECT_EQ(r.position, (sinter::data::DataOrderState{7, 1, 30}));
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0],
            "resume: out/t-step00000075-state was saved with train_batch_size 2 and continues with 1: an epoch is now 120 batches "
            "(was 60), and it goes on from batch 30 (was 15), the same share of the epoch; its remaining batches are cut anew, so some "
            "images of this epoch may be seen twice or not at all; the step count and schedule are this run's");
  // Larger batches: fewer of them, rounded down (no batch of the epoch is skipped for it).
  const auto larger = resumeDataPosition(dataPositionJson({7, 1, 7}, EpochLayout{1, 1, 120}), EpochLayout{1, 4, 30}, "s");
  EXPECT_EQ(larger.position.indexInEpoch, 1);
  EXPECT_NE(larger.warnings.at(0).find("train_batch_size 1 and continues with 4"), std::string::npos);
}

TEST(ResumePosition, AnotherBatchSizeOnAnotherNumberOfRanksNamesBoth) {
  const auto data = dataPositionJson({7, 0, 10}, EpochLayout{2, 1, 40});  // 20 per rank, half done
  const auto r = resumeDataPosition(data, EpochLayout{1, 2, 20}, "s");
  EXPECT_EQ(r.position.indexInEpoch, 10);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("train_batch_size 1 and continues with 2, saved by 2 ranks and continuing on 1: an epoch is now 20 "
                               "batches per rank (was 20)"),
            std::string::npos)
      << r.warnings[0];
}

TEST(ResumePosition, AnotherNumberOfRanksIsCarriedOverAsBefore) {
  const auto data = dataPositionJson({7, 0, 3}, EpochLayout{2, 1, 5});
  const auto r = resumeDataPosition(data, EpochLayout{1, 1, 5}, "s");
  EXPECT_EQ(r.position.indexInEpoch, 5);  // min(5, 3 * 2 / 1)
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], "resume: s was saved by 2 ranks and continues on 1: the epoch goes on from batch 5 of 5 per rank (was 3 of 3); "
                           "the step count and schedule are this run's");
}

TEST(ResumePosition, AStateThatPredatesTheBatchSizeIsTakenAsThisRunsSize) {
  const nlohmann::json data = {{"seed", 7}, {"epoch", 0}, {"index", 4}, {"ranks", 1}};
  const auto r = resumeDataPosition(data, EpochLayout{1, 2, 60}, "s");
  EXPECT_EQ(r.position.indexInEpoch, 4);
  EXPECT_TRUE(r.warnings.empty());
}
