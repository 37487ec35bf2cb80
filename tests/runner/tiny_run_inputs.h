#pragma once
// The inputs a tiny run reads, made by the runner itself under a test suite's folder: each family's
// tiny checkpoint (tiny_<family>.safetensors), the generated dataset ("images") and the bundled
// tokenizer files ("tokenizer"). Several run tests share this set-up.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "runner_process.h"

namespace sinter::test {

inline void writeTinyRunInputs(const std::filesystem::path& root, const std::vector<std::string>& families, bool dataset = true) {
  std::filesystem::create_directories(root);
  for (const std::string& family : families)
    ASSERT_EQ(runRunner({"--init_checkpoint", (root / ("tiny_" + family + ".safetensors")).string(), "--model_family", family,
                         "--model_size", "tiny", "--seed", "3"})
                  .exitCode,
              0)
        << family;
  if (dataset) ASSERT_EQ(runRunner({"--init_dataset", (root / "images").string(), "--seed", "3"}).exitCode, 0);
  ASSERT_EQ(runRunner({"--init_tokenizer", (root / "tokenizer").string()}).exitCode, 0);
}

}  // namespace sinter::test
