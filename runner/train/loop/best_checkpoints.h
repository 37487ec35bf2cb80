#pragma once
// save_best_k's bookkeeping: which saved files hold the k lowest validation losses so far. Pure:
// the caller writes the new file first and deletes the one that dropped out after, so that a crash
// in between leaves at least the k best on disk.
#include <optional>
#include <string>
#include <vector>

namespace sinter::train {

struct BestCheckpoint {
  long long step = 0;
  double loss = 0;
  std::string path;
};

class BestCheckpoints {
 public:
  explicit BestCheckpoints(int keep) : keep_(keep) {}

  // Whether a pass's loss at `step` earns a file: fewer than k kept, or lower than the worst kept
  // (a tie keeps the earlier file). A step that has a file already earns none (the same weights).
  bool earns(long long step, double loss) const;
  // Adds the file written for an earned pass; returns the one that dropped out of the k best.
  std::optional<BestCheckpoint> add(const BestCheckpoint& file);
  // Lowest loss first (the earlier step first among equal losses).
  const std::vector<BestCheckpoint>& kept() const { return kept_; }
  std::vector<std::string> keptPaths() const;

 private:
  int keep_;
  std::vector<BestCheckpoint> kept_;
};

// The file's stem: <output_name>-best-step<8 digits>-loss<6 decimals>.
std::string bestFileStem(const std::string& outputName, long long step, double loss);

}  // namespace sinter::train
