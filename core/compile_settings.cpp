#include "core/compile_settings.h"


#include "core/ascii_text.h"
#include "core/registry.h"

namespace sinter {

std::string CompileRequest::dynamicAsPython() const {
  if (dynamic == "true") return "True";
  if (dynamic == "false") return "False";
  return "None";
}

std::string CompileRequest::logLine(const std::string& model) const {
  return "Compiling " + model + " with torch.compile: backend=" + backend + ", mode=" + mode +
         ", dynamic=" + dynamicAsPython() + ", fullgraph=" + (fullgraph ? "True" : "False");
}


CompileRequest resolveCompileRequest(const Config& config) {
  CompileRequest r;
  // The compile section applies to the families with a compile panel (SDXL, FLUX); for the others
  // (SD 1.x/2.x) validation warns that it is ignored, and so it is: the eager path, as by default.
  if (const std::optional<Family> family = config.family(); family && !findOption("compile")->appliesToFamily(*family)) {
    if (config.getBool("compile"))
      r.notes.push_back(std::string("compile is off: the compile settings apply to SDXL and FLUX only, not ") + toString(*family));
    return r;
  }
  r.enabled = config.getBool("compile");
  r.backend = config.getString("compile_backend");
  r.mode = config.getString("compile_mode");
  r.dynamic = config.getString("compile_dynamic");
  r.fullgraph = config.getBool("compile_fullgraph");
  const long long limit = config.getInt("compile_cache_size_limit");
  r.cacheSizeLimit = limit > 0 ? static_cast<int>(limit) : kDefaultCompileCacheSizeLimit;
  r.compileTextEncoders = config.getBool("compile_text_encoders");
  r.compileVae = config.getBool("compile_vae");
  r.allowTf32 = config.getBool("cuda_allow_tf32");
  r.cudnnBenchmark = config.getBool("cuda_cudnn_benchmark");

  const StringList args = config.getList("compile_args");
  if (!args.empty()) {
    if (!r.enabled) {
      r.notes.push_back("compile_args ignored: compile is off");
    } else if (args.size() == 4) {
      // Deprecated form (musubi-tuner): overrides the individual settings, cache limit 32.
      r.backend = args[0];
      r.mode = args[1];
      r.dynamic = lowerAscii(args[2]);
      r.fullgraph = lowerAscii(args[3]) == "true";
      r.cacheSizeLimit = kCompileArgsCacheSizeLimit;
      r.notes.push_back("compile_args is deprecated: use compile_backend, compile_mode, compile_dynamic and "
                        "compile_fullgraph; it overrides them and sets the cache size limit to 32");
    }
  }
  if (r.enabled && r.backend == "cudagraphs" && r.mode != "default")
    r.notes.push_back("compile_mode " + r.mode + " is ignored by the cudagraphs backend");
  return r;
}

}  // namespace sinter
