#pragma once
// The compile settings a run asked for, after the deprecated compile_args and defaults are applied.
#include <string>
#include <vector>

#include "config.h"

namespace sinter {

struct CompileRequest {
  bool enabled = false;
  std::string backend = "inductor";
  std::string mode = "default";
  std::string dynamic = "auto";  // auto | true | false
  bool fullgraph = false;
  int cacheSizeLimit = 8;        // per region; 0 in the config means this default
  bool compileTextEncoders = false;
  bool compileVae = false;
  bool allowTf32 = false;
  bool cudnnBenchmark = false;
  std::vector<std::string> notes;  // deprecations and ignored settings, for the log

  // Whether the settings replay CUDA graphs (backend cudagraphs, or inductor's reduce-overhead and
  // max-autotune): with fullgraph the whole step, else each block.
  bool capturesGraphs() const {
    return backend == "cudagraphs" || (backend == "inductor" && (mode == "reduce-overhead" || mode == "max-autotune"));
  }
  // Python-style spelling: "None" for auto, "True"/"False".
  std::string dynamicAsPython() const;
  // "Compiling <model> with torch.compile: backend=..., mode=..., dynamic=..., fullgraph=..."
  std::string logLine(const std::string& model) const;
};

constexpr int kDefaultCompileCacheSizeLimit = 8;
constexpr int kCompileArgsCacheSizeLimit = 32;

CompileRequest resolveCompileRequest(const Config& config);

}  // namespace sinter
