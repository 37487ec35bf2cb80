#include "train/loop/best_checkpoints.h"

#include <algorithm>
#include <cstdio>

namespace sinter::train {

namespace {

bool better(const BestCheckpoint& a, const BestCheckpoint& b) { return a.loss < b.loss || (a.loss == b.loss && a.step < b.step); }

}  // namespace

bool BestCheckpoints::earns(long long step, double loss) const {
  if (keep_ <= 0) return false;
  if (std::any_of(kept_.begin(), kept_.end(), [&](const BestCheckpoint& f) { return f.step == step; })) return false;
  return static_cast<int>(kept_.size()) < keep_ || loss < kept_.back().loss;
}

std::optional<BestCheckpoint> BestCheckpoints::add(const BestCheckpoint& file) {
  kept_.insert(std::upper_bound(kept_.begin(), kept_.end(), file, better), file);
  if (static_cast<int>(kept_.size()) <= keep_) return std::nullopt;
  BestCheckpoint dropped = kept_.back();
  kept_.pop_back();
  return dropped;
}

std::vector<std::string> BestCheckpoints::keptPaths() const {
  std::vector<std::string> paths;
  for (const BestCheckpoint& f : kept_) paths.push_back(f.path);
  return paths;
}

std::string bestFileStem(const std::string& outputName, long long step, double loss) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "-best-step%08lld-loss%.6f", step, loss);
  return outputName + buf;
}

}  // namespace sinter::train
