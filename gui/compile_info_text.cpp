#include "compile_info_text.h"

#include <QCoreApplication>

#include "core/compile_settings.h"
#include "core/vram_plan.h"

namespace sinter::gui {

namespace {

// Gives lupdate and translate() the context "CompileInfo" for the free functions below.
struct CompileInfoText {
  Q_DECLARE_TR_FUNCTIONS(CompileInfo)
};

QString backendEffect(const std::string& backend) {
  if (backend == "eager") return CompileInfoText::tr("Backend eager: nothing is captured; the stock kernels run (for debugging).");
  if (backend == "aot_eager")
    return CompileInfoText::tr("Backend aot_eager: runs eagerly but partitions regions and checks them, reporting what would break capture (host syncs, CPU tensors, data-dependent shapes).");
  if (backend == "cudagraphs")
    return CompileInfoText::tr("Backend cudagraphs: CUDA-graph capture of regions with the stock kernels; the mode setting is ignored.");
  return CompileInfoText::tr("Backend inductor: fused attention, fused AdamW, fused GEGLU and GroupNorm+SiLU kernels (CUDA builds) and the LoRA update added in the GEMM epilogue, plus what the mode adds.");
}

QString modeEffect(const std::string& mode) {
  if (mode == "reduce-overhead") return CompileInfoText::tr("Mode reduce-overhead: fused kernels plus CUDA-graph capture.");
  if (mode == "max-autotune")
    return CompileInfoText::tr("Mode max-autotune: CUDA graphs plus autotuning (cuDNN benchmark, GEMM algorithm search) before capture.");
  if (mode == "max-autotune-no-cudagraphs") return CompileInfoText::tr("Mode max-autotune-no-cudagraphs: autotuning without CUDA graphs.");
  return CompileInfoText::tr("Mode default: fused kernels, no graphs.");
}

QString dynamicEffect(const std::string& dynamic) {
  if (dynamic == "true") return CompileInfoText::tr("Dynamic shapes true: nothing is shape-specialised: no graphs, no per-shape autotuning.");
  if (dynamic == "false")
    return CompileInfoText::tr("Dynamic shapes false: one graph per input-shape signature, captured on first sight, up to the cache limit.");
  return CompileInfoText::tr("Dynamic shapes auto: the bucket shapes are known before step 1; the most frequent signatures are pre-captured up to the cache limit and the rest run uncaptured.");
}

}  // namespace

QString CompileInfo::html() const {
  QString out;
  for (const QString& p : problems) out += QStringLiteral("<p style='color:#b05000'><b>%1</b></p>").arg(p.toHtmlEscaped());
  out += QStringLiteral("<ul style='margin-left:0px'>");
  for (const QString& e : effects) out += QStringLiteral("<li>%1</li>").arg(e.toHtmlEscaped());
  out += QStringLiteral("</ul>");
  if (!memoryPlan.isEmpty()) {
    out += QStringLiteral("<p><b>%1</b></p><pre>").arg(CompileInfoText::tr("Memory plan").toHtmlEscaped());
    for (const QString& line : memoryPlan) out += line.toHtmlEscaped() + QStringLiteral("\n");
    out += QStringLiteral("</pre>");
  }
  return out;
}

namespace {

// vram_budget_gb: the plan for the full-size architecture (the runner's dry run plans with the
// checkpoint's own parameter counts and says the same for those).
void describeMemoryPlan(const Config& config, CompileInfo& info) {
  try {
    if (isUnset(config.get("vram_budget_gb")) || config.getDouble("vram_budget_gb") <= 0) return;
    const std::optional<Family> family = config.family();
    const std::optional<MemoryModel> model = family ? fullSizeMemoryModel(*family) : std::nullopt;
    if (!model) {
      info.memoryPlan << CompileInfoText::tr("Set the model family to SDXL or FLUX to see the plan for this budget.");
      return;
    }
    const VramPlan plan = planVram(*model, planRequestFromConfig(config, *model));
    info.memoryPlan << CompileInfoText::tr("Estimated for the full-size %1 (the runner's dry run plans with the checkpoint's own sizes):")
                           .arg(QString::fromStdString(model->architecture));
    for (const std::string& line : plan.lines()) info.memoryPlan << QString::fromStdString(line);
  } catch (const std::exception& e) {
    info.memoryPlan << QString::fromUtf8(e.what());
  }
}

}  // namespace

CompileInfo describeCompileSettings(const Config& config) {
  CompileInfo info;
  describeMemoryPlan(config, info);
  CompileRequest request;
  try {
    request = resolveCompileRequest(config);
  } catch (const std::exception& e) {
    info.problems << QString::fromUtf8(e.what());
    return info;
  }
  if (!request.enabled) {
    info.effects << CompileInfoText::tr("torch.compile is off: every step runs the stock kernels eagerly. TF32 and cuDNN benchmark still apply.");
  } else {
    info.effects << backendEffect(request.backend);
    if (request.backend == "inductor") info.effects << modeEffect(request.mode);
    info.effects << dynamicEffect(request.dynamic);
    info.effects << (request.fullgraph
                         ? CompileInfoText::tr("Fullgraph on: forward, backward and optimizer step are captured as one graph per signature; anything that prevents it stops the run with its cause.")
                         : CompileInfoText::tr("Fullgraph off: each U-Net input, middle and output block (FLUX: double and single block) replays its forward and backward pass from CUDA graphs, the rest of the step runs eagerly; a block that cannot be captured runs eagerly with a warning naming why. With gradient checkpointing the blocks stay eager."));
    info.effects << CompileInfoText::tr("Cache size limit: at most %1 captured signatures per region (0 means the default, %2).")
                        .arg(request.cacheSizeLimit)
                        .arg(kDefaultCompileCacheSizeLimit);
    info.effects << CompileInfoText::tr("The first steps include warm-up: graphs are captured on the real bucket shapes and batch size before step 1, and the warm-up time is reported apart from training time.");
    if (request.compileTextEncoders || request.compileVae)
      info.effects << CompileInfoText::tr("Text encoder / VAE compilation captures their caching passes as CUDA graphs (with reduce-overhead or max-autotune).");
  }
  for (const std::string& note : request.notes) info.problems << QString::fromStdString(note);

  // Settings that the rest of the form limits.
  const auto boolOf = [&](const char* key) {
    try { return config.getBool(key); } catch (const std::exception&) { return false; }
  };
  const auto intOf = [&](const char* key) {
    try { return config.getInt(key); } catch (const std::exception&) { return 0LL; }
  };
  if (request.enabled && request.fullgraph && boolOf("split_attn"))
    info.problems << CompileInfoText::tr("Fullgraph is refused with split attention: turn off one of them.");
  if (request.enabled && intOf("blocks_to_swap") > 0)
    info.problems << CompileInfoText::tr("With block swapping, the swapped blocks' weights stay out of capture (their Linear layers run uncaptured).");
  return info;
}

}  // namespace sinter::gui
