#include "compile/gemm_tuning.h"

#include "core/cache_dir.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#if __has_include(<torch/version.h>)
#include <torch/version.h>
#endif

#if SINTER_WITH_CUDA && defined(TORCH_VERSION_MAJOR) && (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5))
#define SINTER_HAS_TUNABLE_OP 1
#include <ATen/cuda/tunable/Tunable.h>
#else
#define SINTER_HAS_TUNABLE_OP 0
#endif

namespace sinter::compile {

namespace fs = std::filesystem;

bool gemmTuningCompiledIn() { return SINTER_HAS_TUNABLE_OP != 0; }

std::string defaultGemmTuningFile() {
  return (sinterCacheDir() / "tunableop_results.csv").string();
}

std::string enableGemmTuning(const std::string& file) {
#if SINTER_HAS_TUNABLE_OP
  const fs::path parent = fs::path(file).parent_path();
  if (!parent.empty()) fs::create_directories(parent);
  at::cuda::tunable::TuningContext* tuning = at::cuda::tunable::getTuningContext();
  // TunableOp reads the file when it first tunes and writes it back when the process ends.
  tuning->SetFilename(file, /*insert_device_ordinal=*/true);
  const std::string withOrdinal = tuning->GetFilename();
  tuning->EnableTunableOp(true);
  tuning->EnableTuning(true);
  // Each candidate algorithm is timed for at most 3 ms or 10 runs (TunableOp's defaults are 30 ms
  // and 100): on the H200 the full-size SDXL step's 74 GEMM shapes then tune in about 1 s when the
  // machine has run them before (its driver caches), with steps as fast as with longer timings.
  // PYTORCH_TUNABLEOP_MAX_TUNING_DURATION_MS / _ITERATIONS still override.
  tuning->SetMaxTuningDurationMs(3);
  tuning->SetMaxTuningIterations(10);
  return "GEMM autotuning (TunableOp): shapes not tuned before are tuned during warm-up; results " +
         std::string(fs::exists(withOrdinal) ? "read from and kept in " : "kept in ") + withOrdinal;
#else
  (void)file;
  throw std::runtime_error("GEMM autotuning (TunableOp) is not in this build");
#endif
}

void disableGemmTuning() {
#if SINTER_HAS_TUNABLE_OP
  at::cuda::tunable::TuningContext* tuning = at::cuda::tunable::getTuningContext();
  tuning->EnableTuning(false);
  tuning->EnableTunableOp(false);
#endif
}

}  // namespace sinter::compile
