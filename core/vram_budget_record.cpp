#include "core/vram_budget_record.h"

#include "core/cache_dir.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"

namespace sinter {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json readRecord(const std::string& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return json::object();
  try {
    json j = json::parse(readWholeFile(file));
    return j.is_object() ? j : json::object();
  } catch (const std::exception&) {
    return json::object();
  }
}

}  // namespace

std::string defaultVramRecordFile() {
  return (sinterCacheDir() / "vram_budget_corrections.json").string();
}

std::string vramRecordKey(const std::string& family, const std::string& method, long long width, long long height, long long batch) {
  return family + " " + method + " " + std::to_string(width) + "x" + std::to_string(height) + " batch " + std::to_string(batch);
}

double readVramCorrection(const std::string& file, const std::string& key) {
  const json j = readRecord(file);
  if (!j.contains(key) || !j[key].is_object() || !j[key].contains("correction") || !j[key]["correction"].is_number()) return 1;
  const double c = j[key]["correction"].get<double>();
  return std::isfinite(c) ? std::clamp(c, 1.0, 4.0) : 1.0;
}

double recordVramPeak(const std::string& file, const std::string& key, double plannedBytes, double measuredBytes,
                      double correctionUsed) {
  if (!(plannedBytes > 0) || measuredBytes <= plannedBytes) return 0;
  const double correction = std::clamp(std::max(1.0, correctionUsed) * measuredBytes / plannedBytes, 1.0, 4.0);
  json j = readRecord(file);
  j[key] = {{"correction", correction}, {"planned_bytes", plannedBytes}, {"measured_bytes", measuredBytes}};
  const fs::path parent = fs::path(file).parent_path();
  std::error_code ec;
  if (!parent.empty()) fs::create_directories(parent, ec);
  writeFileAtomically(file, j.dump(1) + "\n");
  return correction;
}

}  // namespace sinter
