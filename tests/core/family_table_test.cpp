// core/family_table.h: every family has one row, and what reads the rows says what the families
// used to say by name (labels, sd-scripts' network modules and checks, kohya_ss's checkboxes).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/family_table.h"
#include "core/registry.h"
#include "core/vram_plan.h"

using namespace sinter;

TEST(FamilyTable, EveryFamilyHasOneRow) {
  std::set<Family> seen;
  for (const FamilyRow& row : familyTable()) EXPECT_TRUE(seen.insert(row.family).second) << row.label;
  for (Family f : allFamilies()) {
    EXPECT_EQ(seen.count(f), 1u) << toString(f);
    EXPECT_EQ(familyRow(f).family, f);
  }
  EXPECT_EQ(seen.size(), allFamilies().size());
}

TEST(FamilyTable, LabelsOfARegistryMaskReadAsAList) {
  EXPECT_EQ(familyLabels(findOption("blocks_to_swap")->families), "FLUX.1 and SD 3.x");
  EXPECT_EQ(familyLabels(findOption("split_mode")->families), "FLUX.1");
  EXPECT_EQ(familyLabels(findOption("compile")->families), "SDXL and FLUX.1");
  EXPECT_EQ(familyLabels(findOption("training_shift")->families), "SD 3.x");
  EXPECT_EQ(familyLabels(findOption("weighting_scheme")->families), "FLUX.1 and SD 3.x");
  EXPECT_EQ(familyLabels(kAllFamilies), "SDXL, FLUX.1, SD 1.x, SD 2.x and SD 3.x");
}

TEST(FamilyTable, MemoryModelsCarryTheirFamily) {
  for (const FamilyRow& row : familyTable()) {
    const std::optional<MemoryModel> model = fullSizeMemoryModel(row.family);
    EXPECT_EQ(model.has_value(), row.memoryModel != nullptr) << row.label;
    if (model) EXPECT_EQ(model->family, row.family) << row.label;
  }
}

TEST(FamilyTable, KohyaCheckboxesNameOneFamilyEach) {
  std::set<std::string> keys;
  for (const FamilyRow& row : familyTable())
    for (const auto& [key, order] : row.kohyaCheckboxes) EXPECT_TRUE(keys.insert(key).second) << key;
  EXPECT_EQ(keys, (std::set<std::string>{"sdxl", "sdxl_checkbox", "flux1_checkbox", "sd3_checkbox", "v2"}));
}
