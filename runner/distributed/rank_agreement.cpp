#include "distributed/rank_agreement.h"

#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace sinter::distributed {

namespace {

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// "" when equal, else the first line that differs, described.
std::string firstDifference(const std::string& mine, const std::string& theirs) {
  const auto a = linesOf(mine), b = linesOf(theirs);
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string x = i < a.size() ? a[i] : "(nothing)", y = i < b.size() ? b[i] : "(nothing)";
    if (x != y) return "line " + std::to_string(i + 1) + " of the resolved config is '" + x + "' here but '" + y + "' on rank 0";
  }
  return "";
}

}  // namespace

void requireSameConfig(ProcessGroup& group, const std::string& resolvedConfig) {
  if (group.rank() == 0) group.publish("config", resolvedConfig);
  const std::string mine = group.rank() == 0 ? "" : firstDifference(resolvedConfig, group.await("config"));
  const std::vector<std::string> verdicts = group.gatherOnRankZero("config-check", mine);
  std::string problem = mine.empty() ? "" : "rank " + std::to_string(group.rank()) + "'s config differs from rank 0's: " + mine;
  if (group.rank() == 0) {
    for (size_t r = 1; r < verdicts.size() && problem.empty(); ++r)
      if (!verdicts[r].empty()) problem = "rank " + std::to_string(r) + "'s config differs from rank 0's: " + verdicts[r];
    group.publish("config-verdict", problem);
  } else if (problem.empty()) {
    problem = group.await("config-verdict");
  }
  group.barrier();  // every rank has its answer before rank 0 (whose store serves it) may leave
  if (!problem.empty()) throw std::invalid_argument(problem + " (every rank must train with the same settings)");
}

std::string rankZeroVerdict(ProcessGroup& group, const std::string& key, const std::string& verdictOnRankZero) {
  if (group.rank() == 0) group.publish(key, verdictOnRankZero);
  const std::string verdict = group.rank() == 0 ? verdictOnRankZero : group.await(key);
  group.barrier();  // every rank has its answer before rank 0 (whose store serves it) may leave
  return verdict;
}

void requireIdenticalWeights(ProcessGroup& group, const std::vector<torch::Tensor>& params) {
  std::string fingerprint;
  {
    torch::NoGradGuard noGrad;
    // Copies on side streams (a swapped block's weights written back to host memory) finish first.
    if (group.device().is_cuda()) torch::cuda::synchronize(group.device().index());
    std::vector<torch::Tensor> sums;
    for (const torch::Tensor& p : params) {
      const torch::Tensor d = p.detach().to(torch::kFloat64);
      sums.push_back(d.sum().reshape({1}));
      sums.push_back(d.square().sum().reshape({1}));
    }
    if (!sums.empty()) {
      const torch::Tensor all = torch::cat(sums).cpu();
      char buffer[64];
      for (int64_t i = 0; i < all.numel(); ++i) {
        std::snprintf(buffer, sizeof buffer, "%a ", all[i].item<double>());
        fingerprint += buffer;
      }
    }
  }
  const std::vector<std::string> all = group.gatherOnRankZero("weights", fingerprint);
  std::string problem;
  if (group.rank() == 0) {
    for (size_t r = 1; r < all.size() && problem.empty(); ++r)
      if (all[r] != all[0]) problem = "rank " + std::to_string(r) + "'s trained weights differ from rank 0's";
    group.publish("weights-verdict", problem);
  } else {
    problem = group.await("weights-verdict");
  }
  group.barrier();  // every rank has its answer before rank 0 (whose store serves it) may leave
  if (!problem.empty()) throw std::runtime_error(problem + " (the ranks' steps diverged)");
}

bool StopAgreement::stopAfter(long long step, bool requestedHere) {
  const std::string key = "stop/" + std::to_string(step);
  if (group_.rank() == 0) {
    group_.publish(key, requestedHere ? "1" : "0");
    // The others have read the answers of long-past steps (they cannot be more than a few steps
    // behind rank 0, whose collectives wait for theirs).
    if (step > 64) group_.forget("stop/" + std::to_string(step - 64));
    return requestedHere;
  }
  return group_.await(key) == "1";
}

}  // namespace sinter::distributed
