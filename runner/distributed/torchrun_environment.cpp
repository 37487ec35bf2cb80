#include "distributed/torchrun_environment.h"

#include <cstdlib>
#include <stdexcept>

namespace sinter::distributed {

namespace {

int parseInteger(const char* name, const char* text, long long low, long long high, const std::string& range) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text, &end, 10);
  if (*text == '\0' || *end != '\0' || errno != 0 || v < low || v > high)
    throw std::invalid_argument(std::string(name) + " is '" + text + "'; torchrun's environment needs " + range);
  return static_cast<int>(v);
}

}  // namespace

std::optional<TorchrunEnvironment> readTorchrunEnvironment(const EnvironmentLookup& lookup) {
  auto get = [&](const char* name) -> const char* { return lookup ? lookup(name) : std::getenv(name); };
  const char* world = get("WORLD_SIZE");
  if (!world) return std::nullopt;
  TorchrunEnvironment env;
  env.worldSize = parseInteger("WORLD_SIZE", world, 1, 1 << 20, "a whole number of processes, at least 1");
  if (env.worldSize == 1) return std::nullopt;
  auto require = [&](const char* name) {
    const char* v = get(name);
    if (!v) throw std::invalid_argument(std::string("WORLD_SIZE is ") + world + " but " + name + " is not set (torchrun sets RANK, "
                                        "LOCAL_RANK, MASTER_ADDR and MASTER_PORT with it)");
    return v;
  };
  const std::string upTo = "a whole number from 0 to " + std::to_string(env.worldSize - 1);
  env.rank = parseInteger("RANK", require("RANK"), 0, env.worldSize - 1, upTo + " (WORLD_SIZE is " + world + ")");
  env.localRank = parseInteger("LOCAL_RANK", require("LOCAL_RANK"), 0, env.worldSize - 1, upTo);
  env.localWorldSize = env.worldSize;
  if (const char* local = get("LOCAL_WORLD_SIZE"))
    env.localWorldSize = parseInteger("LOCAL_WORLD_SIZE", local, 1, env.worldSize, "a whole number from 1 to WORLD_SIZE");
  if (env.localRank >= env.localWorldSize)
    throw std::invalid_argument("LOCAL_RANK is " + std::to_string(env.localRank) + " but LOCAL_WORLD_SIZE is " +
                                std::to_string(env.localWorldSize));
  env.masterAddr = require("MASTER_ADDR");
  if (env.masterAddr.empty()) throw std::invalid_argument("MASTER_ADDR is empty; it names the host of rank 0");
  env.masterPort = parseInteger("MASTER_PORT", require("MASTER_PORT"), 1, 65535, "a TCP port from 1 to 65535");
  return env;
}

}  // namespace sinter::distributed
