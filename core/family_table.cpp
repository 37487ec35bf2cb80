#include "core/family_table.h"

#include <stdexcept>

#include "core/vram_plan.h"

namespace sinter {

const std::vector<FamilyRow>& familyTable() {
  // kohya_ss's tabs choose a script in this order: sdxl (sdxl_checkbox on the fine-tune tab), then
  // flux1_checkbox, sd3_checkbox and the other families, then v2's SD 2.x scripts
  // (core/kohya_import.cpp lists the families Sinter does not train at their places). kohya_ss's
  // DreamBooth and fine-tune tabs test sd3_checkbox before flux1_checkbox; a file ticks one of them.
  static const std::vector<FamilyRow> rows{
      {Family::SDXL, "SDXL", "networks.lora", false, 32, 32,
       {{"sdxl", 0}, {"sdxl_checkbox", 1}},
       {},
       {"stabilityai/stable-diffusion-xl-base-1.0", "stabilityai/stable-diffusion-xl-refiner-1.0"},
       false, "sdxl_no_half_vae", sdxlBaseMemoryModel},
      {Family::FLUX, "FLUX.1", "networks.lora_flux", true, 32, 16,
       {{"flux1_checkbox", 2}},
       {},
       {},
       false, nullptr, fluxDevMemoryModel},
      {Family::SD15, "SD 1.x", "networks.lora", false, 0, 0,
       {},
       {},
       {"CompVis/stable-diffusion-v1-4", "runwayml/stable-diffusion-v1-5"},
       true, nullptr, nullptr},
      {Family::SD2, "SD 2.x", "networks.lora", false, 0, 0,
       {{"v2", 9}},
       {{"v2", true}},  // sd-scripts' own v2 flag, which the runner checks against the checkpoint
       {"stabilityai/stable-diffusion-2-1-base/blob/main/v2-1_512-ema-pruned", "stabilityai/stable-diffusion-2-1-base",
        "stabilityai/stable-diffusion-2-base", "stabilityai/stable-diffusion-2-1/blob/main/v2-1_768-ema-pruned",
        "stabilityai/stable-diffusion-2-1", "stabilityai/stable-diffusion-2"},
       true, nullptr, nullptr},
      // sd3_train_network.py checks bucket_reso_steps against 32, sd3_train.py against 8. kohya_ss's
      // DreamBooth tab passes learning_rate_te for SD3 too, and sd3_train.py does not read it.
      {Family::SD3, "SD 3.x", "networks.lora_sd3", true, 32, 8,
       {{"sd3_checkbox", 3}},
       {},
       {},
       false, nullptr, nullptr},
  };
  return rows;
}

const FamilyRow& familyRow(Family family) {
  for (const FamilyRow& row : familyTable())
    if (row.family == family) return row;
  throw std::logic_error(std::string("no family table row for ") + toString(family));
}

std::string familyLabels(std::uint8_t families) {
  std::vector<std::string> labels;
  for (const FamilyRow& row : familyTable())
    if (families & static_cast<std::uint8_t>(row.family)) labels.emplace_back(row.label);
  std::string out;
  for (std::size_t i = 0; i < labels.size(); ++i)
    out += (i == 0 ? "" : i + 1 == labels.size() ? " and " : ", ") + labels[i];
  return out;
}

Family kohyaUntickedFamily() { return Family::SD15; }

}  // namespace sinter
