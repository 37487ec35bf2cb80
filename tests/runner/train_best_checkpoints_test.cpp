// save_best_k's bookkeeping and early_stop_patience's count (best_checkpoints.h, early_stop.h),
// without a run: which files stay, which one drops out, and the pass that ends the run.
#include <gtest/gtest.h>

#include "train/loop/best_checkpoints.h"
#include "train/loop/early_stop.h"

using sinter::train::BestCheckpoint;
using sinter::train::BestCheckpoints;
using sinter::train::EarlyStop;

TEST(BestCheckpoints, KeepsTheKLowestAndNamesTheOneThatDropsOut) {
  BestCheckpoints best(2);
  ASSERT_TRUE(best.earns(1, 0.5));
  EXPECT_FALSE(best.add({1, 0.5, "a"}));
  ASSERT_TRUE(best.earns(2, 0.7));  // fewer than k kept: any loss earns a file
  EXPECT_FALSE(best.add({2, 0.7, "b"}));
  EXPECT_FALSE(best.earns(3, 0.7));  // a tie with the worst kept keeps the earlier file
  EXPECT_FALSE(best.earns(3, 0.9));
  ASSERT_TRUE(best.earns(3, 0.4));
  const auto dropped = best.add({3, 0.4, "c"});
  ASSERT_TRUE(dropped);
  EXPECT_EQ(dropped->path, "b");
  EXPECT_EQ(best.keptPaths(), (std::vector<std::string>{"c", "a"}));
  EXPECT_FALSE(best.earns(3, 0.1));  // the same step (the epoch's pass after the step's): the same weights
}

TEST(BestCheckpoints, NameCarriesStepAndLoss) {
  EXPECT_EQ(sinter::train::bestFileStem("t", 120, 0.0842131), "t-best-step00000120-loss0.084213");
  EXPECT_FALSE(BestCheckpoints(0).earns(1, 0.1));
}

TEST(EarlyStop, EndsAtThePatienceThPassWithoutANewBest) {
  EarlyStop stop(2, 0.0);
  EXPECT_FALSE(stop.passEndsRun(1, 0.5));  // the first pass is the best so far
  EXPECT_FALSE(stop.passEndsRun(2, 0.6));
  EXPECT_FALSE(stop.passEndsRun(3, 0.4));  // a new best starts the count again
  EXPECT_EQ(stop.passesWithoutBest(), 0);
  EXPECT_FALSE(stop.passEndsRun(4, 0.4));  // equal is no improvement
  EXPECT_TRUE(stop.passEndsRun(5, 0.45));
  EXPECT_EQ(stop.bestStep(), 3);
  EXPECT_EQ(*stop.bestLoss(), 0.4);
}

TEST(EarlyStop, MinDeltaIsTheImprovementNeeded) {
  EarlyStop stop(1, 0.1);
  EXPECT_FALSE(stop.passEndsRun(1, 1.0));
  EXPECT_FALSE(stop.passEndsRun(2, 0.85));  // 0.15 lower: a new best
  EXPECT_TRUE(stop.passEndsRun(3, 0.8));    // 0.05 lower: not enough
  EXPECT_EQ(stop.bestStep(), 2);
}
