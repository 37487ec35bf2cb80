#pragma once
// What every rank must agree on, through the rendezvous store: the config they train with, and the
// step after which they stop (a stop request reaches each rank at its own moment; rank 0's decides
// for all, so no rank waits in a collective for one that has left).
#include <string>

#include "distributed/process_group.h"

namespace sinter::distributed {

// Throws std::invalid_argument on every rank when any rank's resolved config differs from rank
// 0's, naming the rank and the first line that differs.
void requireSameConfig(ProcessGroup& group, const std::string& resolvedConfig);

// A check that rank 0 alone makes (it alone writes the run's files, and takes their lock): its
// verdict ("" when all is well, else why not) returned on every rank, so that all of them refuse
// together rather than wait for one that has left. `key` names the check in the store.
std::string rankZeroVerdict(ProcessGroup& group, const std::string& key, const std::string& verdictOnRankZero);

// After training: throws std::runtime_error on every rank when any rank's `params` differ from rank
// 0's (compared by fingerprint: each tensor's float64 sum and sum of squares, exact), naming the rank.
// A data-parallel run's ranks step the same averaged gradients, so they must stay identical.
void requireIdenticalWeights(ProcessGroup& group, const std::vector<torch::Tensor>& params);

class StopAgreement {
 public:
  explicit StopAgreement(ProcessGroup& group) : group_(group) {}
  // Called by every rank after each step: whether all of them stop after it. Rank 0 says
  // whether it was asked to stop; the others wait for its answer.
  bool stopAfter(long long step, bool requestedHere);

 private:
  ProcessGroup& group_;
};

}  // namespace sinter::distributed
