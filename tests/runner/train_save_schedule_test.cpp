// sd-scripts' save names and save_last_n_* arithmetic (train_util.py).
#include <gtest/gtest.h>

#include "train/loop/save_schedule.h"

using namespace sinter;
using namespace sinter::train;

TEST(SaveSchedule, NamesAsSdScripts) {
  Config c;
  EXPECT_EQ(runOutputName(c), "last");
  c.set("token_string", std::string("zz"));
  EXPECT_EQ(runOutputName(c), "last") << "the token names only a textual inversion run's files";
  EXPECT_EQ(runOutputName(c, Tab::TextualInversion), "zz");
  c.set("output_name", std::string("style"));
  EXPECT_EQ(runOutputName(c), "style");
  EXPECT_EQ(runOutputName(c, Tab::TextualInversion), "style");
  EXPECT_EQ(epochFileStem("style", 3), "style-000003");
  EXPECT_EQ(stepFileStem("style", 250), "style-step00000250");
}

TEST(SaveSchedule, WhenToSaveAndWhatToRemove) {
  Config c;
  c.set("save_every_n_epochs", 2LL);
  c.set("save_last_n_epochs", 2LL);
  c.set("save_every_n_steps", 100LL);
  c.set("save_last_n_steps", 250LL);
  SaveSchedule s = SaveSchedule::fromConfig(c);
  EXPECT_FALSE(s.saveAfterEpoch(1, 10));
  EXPECT_TRUE(s.saveAfterEpoch(2, 10));
  EXPECT_FALSE(s.saveAfterEpoch(10, 10));  // the last epoch is the final model
  EXPECT_TRUE(s.saveAfterStep(300, 1000));
  EXPECT_FALSE(s.saveAfterStep(1000, 1000));
  // Keeping the last 2 saves of every 2 epochs: saving epoch 6 removes epoch 2.
  EXPECT_EQ(s.epochToRemove(4), std::nullopt);
  EXPECT_EQ(s.epochToRemove(6), 2);
  // Keeping 250 steps of saves every 100 steps: saving step 400 removes step 100 (sd-scripts:
  // 400 - 250 - 1 = 149, rounded down to a multiple of 100).
  EXPECT_EQ(s.stepToRemove(300), std::nullopt);
  EXPECT_EQ(s.stepToRemove(400), 100);
  EXPECT_EQ(s.stepToRemove(500), 200);
  EXPECT_EQ(SaveSchedule::fromConfig(Config{}).stepToRemove(500), std::nullopt);
}
