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

}  // namespace

QString CompileInfo::html() const {
  QString out;
  for (const QString& p : problems) out += QStringLiteral("<p style='color:#b05000'><b>%1</b></p>").arg(p.toHtmlEscaped());
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
