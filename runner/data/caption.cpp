#include "data/caption.h"

#include <algorithm>
#include <cmath>

namespace sinter::data {

std::string stripWhitespace(const std::string& s) {
  const char* ws = " \t\n\r\f\v";
  const auto b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

namespace {

std::vector<std::string> split(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t at = s.find(sep, start);
    if (at == std::string::npos || sep.empty()) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, at - start));
    start = at + sep.size();
  }
}

std::vector<std::string> strippedNonEmpty(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  for (const auto& t : split(s, sep)) {
    std::string x = stripWhitespace(t);
    if (!x.empty()) out.push_back(std::move(x));
  }
  return out;
}

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

// "{a|b|c}" picks one option; "{{" and "}}" stand for literal braces.
std::string expandWildcards(std::string caption, Rng& rng) {
  if (caption.find('\n') != std::string::npos) {
    const auto lines = split(caption, "\n");
    caption = lines[static_cast<size_t>(rng.uniformInt(0, static_cast<long long>(lines.size()) - 1))];
  }
  const std::string open = "\x01", close = "\x02";  // placeholders never found in text captions
  caption = replaceAll(replaceAll(caption, "{{", open), "}}", close);
  std::string out;
  size_t i = 0;
  while (i < caption.size()) {
    const size_t b = caption.find('{', i);
    const size_t e = b == std::string::npos ? std::string::npos : caption.find('}', b + 1);
    if (b == std::string::npos || e == std::string::npos || e == b + 1) {
      out += caption.substr(i, b == std::string::npos ? std::string::npos : b + 1 - i);
      if (b == std::string::npos) break;
      i = b + 1;
      continue;
    }
    out += caption.substr(i, b - i);
    const auto options = split(caption.substr(b + 1, e - b - 1), "|");
    out += options[static_cast<size_t>(rng.uniformInt(0, static_cast<long long>(options.size()) - 1))];
    i = e + 1;
  }
  return replaceAll(replaceAll(out, open, "{"), close, "}");
}

std::string joinTags(const std::vector<std::string>& tags) {
  std::string out;
  for (size_t i = 0; i < tags.size(); ++i) out += (i ? ", " : "") + tags[i];
  return out;
}

}  // namespace

bool captionIsFixed(const CaptionSettings& s) {
  return !s.shuffleCaption && s.captionDropoutRate <= 0 && s.captionDropoutEveryNEpochs <= 0 &&
         s.captionTagDropoutRate <= 0 && s.tokenWarmupStep <= 0 && !s.enableWildcard &&
         std::none_of(s.replacements.begin(), s.replacements.end(),
                      [](const CaptionReplacement& r) { return r.from.empty() && r.to.size() > 1; });
}

std::string processCaption(const std::string& input, const CaptionSettings& s, const CaptionContext& ctx, Rng& rng) {
  std::string caption = input;
  if (!s.captionPrefix.empty()) caption = s.captionPrefix + " " + caption;
  if (!s.captionSuffix.empty()) caption = caption + " " + s.captionSuffix;

  bool dropped = s.captionDropoutRate > 0 && rng.uniform() < s.captionDropoutRate;
  dropped = dropped || (s.captionDropoutEveryNEpochs > 0 && ctx.epoch % s.captionDropoutEveryNEpochs == 0);
  if (dropped) return "";

  if (s.enableWildcard) caption = expandWildcards(caption, rng);
  else caption = split(caption, "\n")[0];  // only the first line

  if (s.shuffleCaption || s.tokenWarmupStep > 0 || s.captionTagDropoutRate > 0) {
    std::vector<std::string> fixed, flex, fixedSuffix;
    if (!s.keepTokensSeparator.empty() && caption.find(s.keepTokensSeparator) != std::string::npos) {
      // "fixed ||| shuffled ||| fixed suffix"
      const size_t at = caption.find(s.keepTokensSeparator);
      std::string flexPart = caption.substr(at + s.keepTokensSeparator.size());
      const size_t at2 = flexPart.find(s.keepTokensSeparator);
      if (at2 != std::string::npos) {
        fixedSuffix = strippedNonEmpty(flexPart.substr(at2 + s.keepTokensSeparator.size()), s.captionSeparator);
        flexPart = flexPart.substr(0, at2);
      }
      fixed = strippedNonEmpty(caption.substr(0, at), s.captionSeparator);
      flex = strippedNonEmpty(flexPart, s.captionSeparator);
    } else {
      for (const auto& t : split(stripWhitespace(caption), s.captionSeparator)) flex.push_back(stripWhitespace(t));
      if (s.keepTokens > 0) {
        const size_t k = std::min(flex.size(), static_cast<size_t>(s.keepTokens));
        fixed.assign(flex.begin(), flex.begin() + static_cast<long>(k));
        flex.erase(flex.begin(), flex.begin() + static_cast<long>(k));
      }
    }
    double warmupStep = s.tokenWarmupStep;
    if (warmupStep < 1) warmupStep = std::floor(warmupStep * static_cast<double>(ctx.maxTrainSteps));
    if (warmupStep > 0 && static_cast<double>(ctx.step) < warmupStep) {
      const long long len = static_cast<long long>(std::floor(
                                static_cast<double>(ctx.step) *
                                ((static_cast<double>(flex.size()) - s.tokenWarmupMin) / warmupStep))) +
                            s.tokenWarmupMin;
      if (len >= 0 && static_cast<size_t>(len) < flex.size()) flex.resize(static_cast<size_t>(len));
    }
    if (s.shuffleCaption) rng.shuffle(flex);
    if (s.captionTagDropoutRate > 0) {
      std::vector<std::string> kept;
      for (auto& t : flex)
        if (rng.uniform() >= s.captionTagDropoutRate) kept.push_back(std::move(t));
      flex = std::move(kept);
    }
    std::vector<std::string> all = fixed;
    all.insert(all.end(), flex.begin(), flex.end());
    all.insert(all.end(), fixedSuffix.begin(), fixedSuffix.end());
    caption = joinTags(all);
  }
  if (!s.secondarySeparator.empty()) caption = replaceAll(caption, s.secondarySeparator, s.captionSeparator);
  for (const CaptionReplacement& r : s.replacements) {
    if (r.to.empty()) continue;
    if (r.from.empty()) caption = r.to[static_cast<size_t>(rng.uniformInt(0, static_cast<long long>(r.to.size()) - 1))];
    else caption = replaceAll(caption, r.from, r.to.front());
  }
  return caption;
}

}  // namespace sinter::data
