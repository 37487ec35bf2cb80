#include "core/kohya_accelerate.h"

#include <algorithm>
#include <cctype>

#include "core/family_table.h"
#include "core/registry.h"

namespace sinter {

using nlohmann::json;

namespace {

bool isChoice(const char* key, const std::string& value) {
  const OptionSpec* spec = findOption(key);
  return spec && std::find(spec->choices.begin(), spec->choices.end(), value) != spec->choices.end();
}

void importProcesses(KohyaImportContext& ctx) {
  if (ctx.has("num_processes")) {
    const json& n = ctx.value("num_processes");
    const std::optional<double> count = ctx.number("num_processes");
    if (count && *count >= 1 && *count <= 16 && *count == static_cast<int>(*count)) {
      ctx.result().processes = static_cast<int>(*count);
      if (*count > 1) ctx.carried({"num_processes"}, "num_processes " + pythonText(n) + " -> GPUs " + pythonText(n));
      else ctx.atDefaults({"num_processes"}, "num_processes " + pythonText(n) + ": one GPU, as Sinter runs by default");
    } else if (isKohyaUnset(n)) {
      ctx.atDefaults({"num_processes"}, "num_processes " + shown(n) + ": unset");
    } else {
      ctx.notCarried({"num_processes"}, "num_processes " + shown(n) + " is not a number of GPUs from 1 to 16");
    }
  }
  const double machines = ctx.numberOr("num_machines", 1);
  if (machines > 1)
    ctx.notCarried({"num_machines"}, "num_machines " + pythonText(ctx.value("num_machines")) +
                                         ": machines: start sinter-runner on each with torchrun's environment "
                                         "(RANK, WORLD_SIZE, MASTER_ADDR, ...)");
  else
    ctx.atDefaults({"num_machines"}, "num_machines " + shown(ctx.value("num_machines")) + ": one machine");
  ctx.atDefaults({"multi_gpu"}, "multi_gpu " + shown(ctx.value("multi_gpu")) + ": accelerate's launcher switch; the GPUs setting decides");
  const std::string ids = ctx.text("gpu_ids");
  if (ids.empty())
    ctx.atDefaults({"gpu_ids"}, "gpu_ids \"\": every GPU");
  else
    ctx.notCarried({"gpu_ids"}, "gpu_ids \"" + ids + "\": Sinter has no GPU list setting; start it with CUDA_VISIBLE_DEVICES=" + ids);
}

void importDynamo(KohyaImportContext& ctx) {
  const std::vector<std::string> keys{"dynamo_backend", "dynamo_mode", "dynamo_use_fullgraph", "dynamo_use_dynamic"};
  std::string backend = ctx.text("dynamo_backend");
  std::transform(backend.begin(), backend.end(), backend.begin(), [](unsigned char c) { return std::tolower(c); });
  if (backend.empty() || backend == "no") {
    ctx.atDefaults(keys, "dynamo_backend " + shown(ctx.value("dynamo_backend")) +
                             ": accelerate compiles nothing, and Sinter's compile stays off (dynamo_mode, "
                             "dynamo_use_fullgraph and dynamo_use_dynamic apply only with a backend)");
    return;
  }
  // A file that names no family keeps model_family on auto: the settings apply once it detects SDXL or FLUX.1.
  const bool unsaid = !ctx.family && ctx.familyName.empty();
  const OptionSpec& compile = *findOption("compile");
  if (!unsaid && (!ctx.family || !compile.appliesToFamily(*ctx.family))) {
    ctx.notCarried(keys, "dynamo_backend \"" + backend + "\": accelerate compiles the whole model; Sinter compiles " +
                             familyLabels(compile.families) + " training only, so this runs uncompiled");
    return;
  }
  ctx.setOption("compile", true);
  if (isChoice("compile_backend", backend)) {
    ctx.setOption("compile_backend", backend);
    ctx.carried({"dynamo_backend"}, "dynamo_backend \"" + backend + "\" -> compile = true, compile_backend = \"" + backend + "\"");
  } else {
    // TensorRT, ONNX Runtime, TVM, nvFuser, IPEX, ...: optimising compilers Sinter does not have;
    // inductor's fused kernels are its nearest equivalent.
    ctx.setOption("compile_backend", "inductor");
    ctx.notCarried({"dynamo_backend"}, "dynamo_backend \"" + backend + "\": Sinter has no such backend; compile = true "
                                       "with compile_backend = \"inductor\" (fused kernels) instead");
  }
  const std::string mode = ctx.text("dynamo_mode").empty() ? "default" : ctx.text("dynamo_mode");
  if (isChoice("compile_mode", mode)) {
    ctx.setOption("compile_mode", mode);
    ctx.carried({"dynamo_mode"}, "dynamo_mode \"" + mode + "\" -> compile_mode = \"" + mode + "\"");
  } else {
    ctx.notCarried({"dynamo_mode"}, "dynamo_mode \"" + mode + "\": Sinter has no such compile mode; compile_mode stays \"default\"");
  }
  const bool fullgraph = ctx.flag("dynamo_use_fullgraph");
  ctx.setOption("compile_fullgraph", fullgraph);
  ctx.carried({"dynamo_use_fullgraph"}, "dynamo_use_fullgraph " + shown(json(fullgraph)) + " -> compile_fullgraph = " +
                                            (fullgraph ? "true" : "false"));
  // accelerate launch always sets the plugin's dynamic: True with --dynamo_use_dynamic, else False.
  const bool dynamic = ctx.flag("dynamo_use_dynamic");
  ctx.setOption("compile_dynamic", dynamic ? "true" : "false");
  ctx.carried({"dynamo_use_dynamic"}, std::string("dynamo_use_dynamic ") + (dynamic ? "true" : "false") +
                                          " -> compile_dynamic = \"" + (dynamic ? "true" : "false") + "\"");
}

}  // namespace

void importKohyaAccelerate(KohyaImportContext& ctx) {
  importProcesses(ctx);
  importDynamo(ctx);
}

}  // namespace sinter
