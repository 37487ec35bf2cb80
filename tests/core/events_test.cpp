#include <gtest/gtest.h>

#include <map>

#include "core/events.h"

using namespace sinter::events;

TEST(Events, EveryTypeRoundTrips) {
  std::vector<Event> all{Start{"0.1.0", "cpu", "sdxl", "lora", 100, 2},
                         CompilePlan{true, "inductor", "reduce-overhead", "auto", false, 8, {"fused attention"}, {"input_blocks"}, {"cuda graphs: CPU build"}},
                         Warmup{"1x4x128x128", 1.5},
                         Step{3, 100, 1, 0.25, 0.2, 1e-4, 2.5, 38.8, 400, 1234},
                         Epoch{1, 2, 50, 0.21},
                         Validation{40, 1, 0.125, "step"},
                         Validation{50, 1, 0.11, "epoch"},
                         Saved{"/out/a.safetensors", "lora"},
                         Saved{"/out/a-best-step00000040-loss0.125000.safetensors", "best", 40, 0.125,
                               {"/out/a-best-step00000040-loss0.125000.safetensors", "/out/a-best-step00000020-loss0.250000.safetensors"}},
                         Sample{"/out/s.png", "a cat", 20, 2, 1, 3.5},
                         Warning{"careful"},
                         Error{"bad"},
                         DatasetCheck{3, true, false, {"caption file is empty: /d/a.txt"}, {"ignoring folder x"},
                                      {{"/d/b.png", "no .txt caption file"}}, {{"/d/a.png", "empty"}}, {{"/d/c.png", "16x16"}},
                                      {{"/d/e.png", "not an image"}}, {{"/d/c.png", "/d/d.png"}}, {{1024, 768, 2, 20}},
                                      {{"/d", 3, 10, 20, 1, false}}},
                         Control{"save", 12, 1, "done", 0.5, "saved at step 12"},
                         GridCell{1, 3, 0, 2, "/out/a-000001.safetensors", "a cat", 2.5},
                         Done{"completed", 100, 12.5},
                         Done{"completed", 60, 7.5, "early_stop", "no new best validation loss in 3 passes"}};
  for (const Event& e : all) {
    std::string line = toJsonLine(e);
    EXPECT_EQ(line.find('\n'), std::string::npos);
    auto back = parseJsonLine(line);
    ASSERT_TRUE(back.has_value()) << line;
    EXPECT_EQ(back->index(), e.index()) << line;
    EXPECT_EQ(toJsonLine(*back), line);
  }
}

TEST(Events, ReadingIsTolerant) {
  auto e = parseJsonLine(R"({"type":"step","step":5,"total":10,"new_field":[1,2],"loss":"oops"})");
  ASSERT_TRUE(e);
  const Step& s = std::get<Step>(*e);
  EXPECT_EQ(s.step, 5);
  EXPECT_EQ(s.total, 10);
  EXPECT_EQ(s.loss, 0.0);
  auto u = parseJsonLine(R"({"type":"histogram","bins":[1]})");
  ASSERT_TRUE(u);
  EXPECT_EQ(std::get<Unknown>(*u).type, "histogram");
  EXPECT_FALSE(parseJsonLine("steps:  12%|#  | 12/100"));
  EXPECT_FALSE(parseJsonLine("[1,2]"));
  EXPECT_FALSE(parseJsonLine(R"({"type":3})"));
  EXPECT_FALSE(parseJsonLine(""));
}

TEST(Events, ValidationFields) {
  const std::string line = toJsonLine(Validation{40, 2, 0.125, "epoch"});
  EXPECT_EQ(line, R"({"epoch":2,"kind":"epoch","loss":0.125,"step":40,"type":"validation"})");
  const Validation v = std::get<Validation>(*parseJsonLine(line));
  EXPECT_EQ(v.step, 40);
  EXPECT_EQ(v.epoch, 2);
  EXPECT_EQ(v.loss, 0.125);
  EXPECT_EQ(v.kind, "epoch");
}

// A control channel's acknowledgement (--control stdin): the command, the step it acted at, what it did.
TEST(Events, ControlFields) {
  const std::string line = toJsonLine(Control{"stop_after_epoch", 7, 2, "pending", 0, "the run ends after epoch 2"});
  EXPECT_EQ(line, R"({"command":"stop_after_epoch","epoch":2,"message":"the run ends after epoch 2","result":"pending",)"
                  R"("seconds":0.0,"step":7,"type":"control"})");
  const Control c = std::get<Control>(*parseJsonLine(line));
  EXPECT_EQ(c.command, "stop_after_epoch");
  EXPECT_EQ(c.step, 7);
  EXPECT_EQ(c.epoch, 2);
  EXPECT_EQ(c.result, "pending");
  EXPECT_EQ(c.message, "the run ends after epoch 2");
}

TEST(Events, InvalidUtf8InMessagesDoesNotBreakTheStream) {
  std::string line = toJsonLine(Error{std::string("bad file caf\xe9.png")});
  EXPECT_TRUE(parseJsonLine(line).has_value());
}

// A method's figures (scale_weight_norms) ride on the step event as extra numbers, by sd-scripts' log names.
TEST(Events, StepFiguresRoundTripAsExtraKeys) {
  Step s{7, 100, 1, 0.25, 0.2, 1e-4, 2.5, 38.8, 400, 1234};
  s.figures = {{"max_norm/keys_scaled", 3}, {"norm/avg_key_norm", 0.75}, {"max_norm/max_key_norm", 1.0}};
  const std::string line = toJsonLine(s);
  EXPECT_NE(line.find("\"max_norm/keys_scaled\":3"), std::string::npos) << line;
  auto back = parseJsonLine(line);
  ASSERT_TRUE(back);
  const Step& b = std::get<Step>(*back);
  ASSERT_EQ(b.figures.size(), 3u);
  std::map<std::string, double> got(b.figures.begin(), b.figures.end());
  EXPECT_EQ(got.at("max_norm/keys_scaled"), 3);
  EXPECT_EQ(got.at("norm/avg_key_norm"), 0.75);
  EXPECT_EQ(got.at("max_norm/max_key_norm"), 1.0);
  EXPECT_EQ(toJsonLine(*back), line);
}

// The dataset check's report: its lists of objects read back field by field; an item that is no
// object is left out, a missing list is empty.
TEST(Events, DatasetCheckListsReadBack) {
  const auto e = parseJsonLine(
      R"({"type":"dataset_check","images":2,"unreadable":[{"path":"/d/x.png","reason":"empty file"},7],)"
      R"("duplicates":[["/d/a.png","/d/b.png"]],"buckets":[{"width":64,"height":32,"images":2,"with_repeats":6}],)"
      R"("folders":[{"path":"/d","images":2,"repeats":3,"with_repeats":6,"regularization":true}]})");
  ASSERT_TRUE(e);
  const DatasetCheck& c = std::get<DatasetCheck>(*e);
  EXPECT_EQ(c.images, 2);
  ASSERT_EQ(c.unreadable.size(), 1u);
  EXPECT_EQ(c.unreadable[0].path, "/d/x.png");
  EXPECT_EQ(c.unreadable[0].reason, "empty file");
  EXPECT_TRUE(c.missing_captions.empty());
  ASSERT_EQ(c.duplicates.size(), 1u);
  EXPECT_EQ(c.duplicates[0].size(), 2u);
  ASSERT_EQ(c.buckets.size(), 1u);
  EXPECT_EQ(c.buckets[0].width, 64);
  EXPECT_EQ(c.buckets[0].with_repeats, 6);
  ASSERT_EQ(c.folders.size(), 1u);
  EXPECT_TRUE(c.folders[0].regularization);
  EXPECT_EQ(c.folders[0].repeats, 3);
}

TEST(Events, BestSaveAndEarlyStopFields) {
  // The best-file fields are written for kind "best" only; a done event without a reason has none.
  EXPECT_EQ(toJsonLine(Saved{"/o/a.safetensors", "step"}), R"({"kind":"step","path":"/o/a.safetensors","type":"saved"})");
  EXPECT_EQ(toJsonLine(Done{"completed", 10, 1.0}), R"({"seconds":1.0,"status":"completed","steps":10,"type":"done"})");
  const Saved s = std::get<Saved>(*parseJsonLine(R"({"type":"saved","kind":"best","path":"/o/b","step":12,"loss":0.5,"best":["/o/b","/o/c"]})"));
  EXPECT_EQ(s.step, 12);
  EXPECT_EQ(s.loss, 0.5);
  EXPECT_EQ(s.best, (std::vector<std::string>{"/o/b", "/o/c"}));
  const Done d = std::get<Done>(*parseJsonLine(R"({"type":"done","status":"completed","steps":9,"reason":"early_stop","message":"why"})"));
  EXPECT_EQ(d.reason, "early_stop");
  EXPECT_EQ(d.message, "why");
}
