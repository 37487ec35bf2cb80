#pragma once
// GEMM autotuning for max-autotune (DESIGN.md §6): PyTorch's TunableOp times the cuBLAS and
// cuBLASLt algorithms for each GEMM shape the first time it runs (the warm-up steps, before
// capture) and keeps the fastest. The results are kept in a CSV file that later runs read, so only
// shapes not seen before are tuned again.
#include <string>

namespace sinter::compile {

// A CUDA libtorch with TunableOp's C++ interface (PyTorch >= 2.5).
bool gemmTuningCompiledIn();

// Where the results are kept: $SINTER_CACHE_DIR, else $XDG_CACHE_HOME/sinter, else
// ~/.cache/sinter, then "tunableop_results.csv" (TunableOp inserts the device ordinal).
std::string defaultGemmTuningFile();

// Turns tuning on in this process with `file` (its folder is made; the results it holds are read
// when tuning starts, and it is written when the process ends) and returns what it did, for the
// log. Throws std::runtime_error where not compiled in.
std::string enableGemmTuning(const std::string& file);
// Turns tuning off (the benchmark's rows after an autotuned one); what was tuned is still written.
void disableGemmTuning();

}  // namespace sinter::compile
