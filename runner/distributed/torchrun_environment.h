#pragma once
// torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT):
// how a process learns that it is one of several, whether `sinter-runner --nproc_per_node N`,
// torchrun or another launcher started it.
#include <functional>
#include <optional>
#include <string>

namespace sinter::distributed {

struct TorchrunEnvironment {
  int rank = 0;
  int worldSize = 1;
  int localRank = 0;
  int localWorldSize = 1;
  std::string masterAddr;
  int masterPort = 0;
};

// Reads a variable; nullptr when unset (::getenv by default).
using EnvironmentLookup = std::function<const char*(const char*)>;

// nullopt when WORLD_SIZE is unset or 1 (one process). Otherwise every variable must be there and
// in range, or std::invalid_argument names the variable and its value.
std::optional<TorchrunEnvironment> readTorchrunEnvironment(const EnvironmentLookup& lookup = nullptr);

}  // namespace sinter::distributed
