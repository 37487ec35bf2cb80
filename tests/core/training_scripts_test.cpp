// sd-scripts' training scripts by name, both ways: what a script's name trains, and which script
// name gives a family and training type (the app's Print command shows that form).
#include <gtest/gtest.h>

#include <string>

#include "core/training_scripts.h"

using namespace sinter;

TEST(TrainingScripts, TheScriptForAFamilyAndTabTrainsThatFamilyAndTab) {
  auto name = [](std::optional<Family> f, Tab t, bool inJson) {
    const TrainingScript* s = trainingScriptFor(f, t, inJson);
    return s ? std::string(s->name) : std::string();
  };
  EXPECT_EQ(name(Family::SDXL, Tab::LoRA, false), "sdxl_train_network.py");
  EXPECT_EQ(name(Family::FLUX, Tab::LoRA, false), "flux_train_network.py");
  EXPECT_EQ(name(Family::SD15, Tab::LoRA, false), "train_network.py");
  EXPECT_EQ(name(std::nullopt, Tab::DreamBooth, false), "train_db.py");
  EXPECT_EQ(name(Family::SD2, Tab::FineTune, false), "fine_tune.py");
  EXPECT_EQ(name(Family::SDXL, Tab::DreamBooth, false), "sdxl_train.py");
  EXPECT_EQ(name(Family::SDXL, Tab::FineTune, true), "sdxl_train.py");
  EXPECT_EQ(name(Family::FLUX, Tab::FineTune, true), "flux_train.py");
  EXPECT_EQ(name(Family::SD3, Tab::LoRA, false), "sd3_train_network.py");
  EXPECT_EQ(name(Family::SD3, Tab::DreamBooth, false), "sd3_train.py");
  EXPECT_EQ(name(Family::SD3, Tab::FineTune, true), "sd3_train.py");
  EXPECT_EQ(name(Family::SD3, Tab::FineTune, false), "");
  // sdxl_train.py trains a fine-tune only from in_json: metadata from a dataset config has no script name.
  EXPECT_EQ(name(Family::SDXL, Tab::FineTune, false), "");
  EXPECT_EQ(name(Family::SDXL, Tab::DreamBooth, true), "");
  EXPECT_EQ(name(Family::SD15, Tab::TextualInversion, false), "train_textual_inversion.py");
  EXPECT_EQ(name(Family::SDXL, Tab::TextualInversion, false), "sdxl_train_textual_inversion.py");
  EXPECT_EQ(name(Family::FLUX, Tab::TextualInversion, false), "");  // sd-scripts has no FLUX.1 or SD 3.x textual inversion
  EXPECT_EQ(name(Family::SD3, Tab::TextualInversion, false), "");

  // Both ways agree for every combination that has a script.
  for (std::optional<Family> family : {std::optional<Family>{}, std::optional<Family>{Family::SDXL}, std::optional<Family>{Family::FLUX},
                                       std::optional<Family>{Family::SD3}})
    for (Tab tab : allTabs())
      for (bool inJson : {false, true}) {
        const TrainingScript* s = trainingScriptFor(family, tab, inJson);
        if (!s) continue;
        EXPECT_EQ(findTrainingScript(std::string("/opt/sd-scripts/") + s->name), s);
        EXPECT_EQ(s->family, family) << s->name;
        EXPECT_EQ(s->fineTuneWithInJson && inJson ? Tab::FineTune : s->tab, tab) << s->name;
      }
  // A script's name trains its family only; the family-less scripts train SD 1.x and 2.x.
  EXPECT_TRUE(scriptTrains(*findTrainingScript("sd3_train_network.py"), Family::SD3));
  EXPECT_FALSE(scriptTrains(*findTrainingScript("sd3_train.py"), Family::FLUX));
  EXPECT_FALSE(scriptTrains(*findTrainingScript("train_network.py"), Family::SD3));
  EXPECT_TRUE(scriptTrains(*findTrainingScript("train_textual_inversion.py"), Family::SD2));
  EXPECT_FALSE(scriptTrains(*findTrainingScript("sdxl_train_textual_inversion.py"), Family::SD15));
}
