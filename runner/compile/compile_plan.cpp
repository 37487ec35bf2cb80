#include "compile/compile_plan.h"

namespace sinter::compile {

CompilePlan planCompile(const Config& config, std::optional<Family> family) {
  CompilePlan plan;
  plan.request = resolveCompileRequest(config);
  plan.model = family == Family::FLUX ? "DiT model" : "U-Net";
  if (plan.request.enabled)
    plan.unavailable.push_back("graph capture and fused kernels: the compile engine is not in this build; the step runs eagerly");
  return plan;
}

events::CompilePlan CompilePlan::event() const {
  events::CompilePlan e;
  e.enabled = request.enabled;
  e.backend = request.backend;
  e.mode = request.mode;
  e.dynamic = request.dynamic;
  e.fullgraph = request.fullgraph;
  e.cache_size_limit = request.cacheSizeLimit;
  e.mechanisms = mechanisms;
  e.regions = regions;
  e.unavailable = unavailable;
  return e;
}

std::string CompilePlan::headline() const { return request.enabled ? request.logLine(model) : "compile: off"; }

std::vector<std::string> CompilePlan::lines() const {
  std::vector<std::string> out{headline()};
  if (request.enabled) out.push_back("cache_size_limit=" + std::to_string(request.cacheSizeLimit));
  for (const auto& m : mechanisms) out.push_back("mechanism: " + m);
  for (const auto& r : regions) out.push_back("region: " + r);
  for (const auto& u : unavailable) out.push_back("unavailable: " + u);
  return out;
}

}  // namespace sinter::compile
