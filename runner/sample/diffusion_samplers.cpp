#include "sample/diffusion_samplers.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace sinter::sample {

namespace {

// np.interp over the integer grid 0..T-1.
double interpolate(const std::vector<double>& table, double at) {
  const double clamped = std::clamp(at, 0.0, static_cast<double>(table.size() - 1));
  const size_t lo = static_cast<size_t>(std::floor(clamped));
  const size_t hi = std::min(lo + 1, table.size() - 1);
  const double f = clamped - static_cast<double>(lo);
  return table[lo] * (1.0 - f) + table[hi] * f;
}

// np.linspace(0, T - 1, n) reversed.
std::vector<double> descendingLinspace(double last, int n) {
  std::vector<double> out(n);
  for (int k = 0; k < n; ++k) out[n - 1 - k] = n == 1 ? 0.0 : last * static_cast<double>(k) / (n - 1);
  return out;
}

}  // namespace

const std::vector<std::string>& renderedSamplerNames() {
  static const std::vector<std::string> names{"ddim", "euler", "k_euler", "euler_a", "k_euler_a", "dpmsolver++"};
  return names;
}

DiffusionSamplerKind parseDiffusionSampler(const std::string& name) {
  if (name == "ddim") return DiffusionSamplerKind::Ddim;
  if (name == "euler" || name == "k_euler") return DiffusionSamplerKind::Euler;
  if (name == "euler_a" || name == "k_euler_a") return DiffusionSamplerKind::EulerAncestral;
  if (name == "dpmsolver++") return DiffusionSamplerKind::DpmSolverPlusPlus;
  std::string list;
  for (const std::string& n : renderedSamplerNames()) list += (list.empty() ? "" : ", ") + n;
  throw std::invalid_argument("sampler '" + name + "' is not in this build; it renders with " + list);
}

std::string displayName(DiffusionSamplerKind kind) {
  switch (kind) {
    case DiffusionSamplerKind::Ddim: return "DDIM";
    case DiffusionSamplerKind::Euler: return "Euler";
    case DiffusionSamplerKind::EulerAncestral: return "Euler a";
    case DiffusionSamplerKind::DpmSolverPlusPlus: return "DPM++ 2M";
  }
  return "";
}

DiffusionSampler::DiffusionSampler(DiffusionSamplerKind kind, int steps, std::vector<double> alphasCumprod, bool vPrediction)
    : kind_(kind), alphasCumprod_(std::move(alphasCumprod)), vPrediction_(vPrediction) {
  const int T = static_cast<int>(alphasCumprod_.size());
  if (steps < 1 || steps > T) throw std::invalid_argument("sample steps must be 1.." + std::to_string(T));
  std::vector<double> sigmaTable(T);
  for (int t = 0; t < T; ++t) sigmaTable[t] = std::sqrt((1.0 - alphasCumprod_[t]) / alphasCumprod_[t]);
  switch (kind_) {
    case DiffusionSamplerKind::Ddim:
      // "leading": t = k * (T / steps) for k = steps-1 .. 0.
      ddimStride_ = T / steps;
      for (int k = steps - 1; k >= 0; --k) timesteps_.push_back(static_cast<double>(k * ddimStride_));
      for (double t : timesteps_) sigmas_.push_back(sigmaTable[static_cast<size_t>(t)]);
      sigmas_.push_back(0.0);
      break;
    case DiffusionSamplerKind::Euler:
    case DiffusionSamplerKind::EulerAncestral:
      timesteps_ = descendingLinspace(T - 1, steps);
      for (double t : timesteps_) sigmas_.push_back(interpolate(sigmaTable, t));
      sigmas_.push_back(0.0);
      break;
    case DiffusionSamplerKind::DpmSolverPlusPlus:
      // round(linspace(0, T - 1, steps + 1)) reversed, without its last (0).
      for (double t : descendingLinspace(T - 1, steps + 1)) timesteps_.push_back(std::round(t));
      timesteps_.pop_back();
      for (double t : timesteps_) sigmas_.push_back(sigmaTable[static_cast<size_t>(t)]);
      sigmas_.push_back(0.0);
      break;
  }
}

double DiffusionSampler::initNoiseSigma() const {
  return kind_ == DiffusionSamplerKind::Euler || kind_ == DiffusionSamplerKind::EulerAncestral ? sigmas_.front() : 1.0;
}

torch::Tensor DiffusionSampler::scaleModelInput(const torch::Tensor& x, int i) const {
  if (kind_ == DiffusionSamplerKind::Euler || kind_ == DiffusionSamplerKind::EulerAncestral)
    return x / std::sqrt(sigmas_.at(i) * sigmas_.at(i) + 1.0);
  return x;
}

torch::Tensor DiffusionSampler::predictedX0(const torch::Tensor& out, int i, const torch::Tensor& x) const {
  if (kind_ == DiffusionSamplerKind::Euler || kind_ == DiffusionSamplerKind::EulerAncestral) {
    // x = x0 + sigma * eps (the sigma-scaled space k-diffusion samples in).
    const double s = sigmas_.at(i);
    return vPrediction_ ? out * (-s / std::sqrt(s * s + 1.0)) + x / (s * s + 1.0) : x - s * out;
  }
  // x = sqrt(a) x0 + sqrt(1 - a) eps (the variance-preserving space).
  const double a = alphasCumprod_.at(static_cast<size_t>(timesteps_.at(i)));
  return vPrediction_ ? std::sqrt(a) * x - std::sqrt(1.0 - a) * out : (x - std::sqrt(1.0 - a) * out) / std::sqrt(a);
}

torch::Tensor DiffusionSampler::step(const torch::Tensor& modelOutput, int i, const torch::Tensor& x, const at::Generator& generator) {
  const torch::Tensor out = modelOutput.to(torch::kFloat32), xf = x.to(torch::kFloat32);
  torch::Tensor x0 = predictedX0(out, i, xf);
  switch (kind_) {
    case DiffusionSamplerKind::Ddim: {
      x0 = x0.clamp(-1.0, 1.0);  // clip_sample
      const double a = alphasCumprod_.at(static_cast<size_t>(timesteps_.at(i)));
      const int prev = static_cast<int>(timesteps_.at(i)) - ddimStride_;
      const double aPrev = prev >= 0 ? alphasCumprod_.at(prev) : 1.0;  // set_alpha_to_one
      // The model's epsilon (diffusers keeps the unclipped one), pointed from x0 to the previous step.
      const torch::Tensor eps = vPrediction_ ? std::sqrt(a) * out + std::sqrt(1.0 - a) * xf : out;
      return std::sqrt(aPrev) * x0 + std::sqrt(1.0 - aPrev) * eps;
    }
    case DiffusionSamplerKind::Euler: {
      const double s = sigmas_.at(i), next = sigmas_.at(i + 1);
      return xf + (xf - x0) / s * (next - s);
    }
    case DiffusionSamplerKind::EulerAncestral: {
      const double s = sigmas_.at(i), next = sigmas_.at(i + 1);
      const double up = std::sqrt(next * next * (s * s - next * next) / (s * s));
      const double down = std::sqrt(next * next - up * up);
      const torch::Tensor noise = at::randn(xf.sizes(), generator, xf.options());
      return xf + (xf - x0) / s * (down - s) + noise * up;
    }
    case DiffusionSamplerKind::DpmSolverPlusPlus: {
      // In VP terms: alpha = 1 / sqrt(sigma^2 + 1), sigma_vp = sigma * alpha, lambda = -log(sigma).
      const double s0 = sigmas_.at(i), t = sigmas_.at(i + 1);
      const bool firstOrder = i == 0 || i + 1 == steps() || !previousX0_.defined();
      torch::Tensor next;
      if (t == 0.0) {
        next = x0;  // alpha_t = 1, sigma_t = 0: the update lands on x0
      } else {
        const double alphaT = 1.0 / std::sqrt(t * t + 1.0), alphaS0 = 1.0 / std::sqrt(s0 * s0 + 1.0);
        const double h = std::log(s0) - std::log(t);
        const double ratio = (t * alphaT) / (s0 * alphaS0);
        const double phi = alphaT * (std::exp(-h) - 1.0);
        if (firstOrder) {
          next = ratio * xf - phi * x0;
        } else {
          const double s1 = sigmas_.at(i - 1);
          const double r0 = (std::log(s1) - std::log(s0)) / h;
          const torch::Tensor d1 = (x0 - previousX0_) / r0;
          next = ratio * xf - phi * x0 - 0.5 * phi * d1;
        }
      }
      previousX0_ = x0;
      return next;
    }
  }
  throw std::logic_error("DiffusionSampler::step: unknown sampler");
}

}  // namespace sinter::sample
