#include "text/unicode.h"

#include <algorithm>

#include "text/unicode_tables.h"

namespace sinter::text {

namespace tables = unicode_tables;

namespace {

bool inRanges(const tables::CodePointRange* ranges, std::size_t count, char32_t cp) {
  const auto* end = ranges + count;
  const auto* it = std::upper_bound(ranges, end, cp,
                                    [](char32_t c, const tables::CodePointRange& r) { return c < r.first; });
  return it != ranges && cp <= (it - 1)->last;
}

// Hangul syllables decompose and compose by formula (Unicode ch. 3.12).
constexpr char32_t kHangulBase = 0xAC00, kLeadBase = 0x1100, kVowelBase = 0x1161, kTrailBase = 0x11A7;
constexpr int kLeadCount = 19, kVowelCount = 21, kTrailCount = 28;
constexpr int kSyllableCount = kLeadCount * kVowelCount * kTrailCount;

uint8_t combiningClass(char32_t cp) {
  const auto* begin = tables::kCombiningClasses;
  const auto* end = begin + tables::kCombiningClassesCount;
  const auto* it = std::upper_bound(begin, end, cp,
                                    [](char32_t c, const tables::CombiningClassRange& r) { return c < r.first; });
  return (it != begin && cp <= (it - 1)->last) ? (it - 1)->combiningClass : 0;
}

void appendDecomposed(std::u32string& out, char32_t cp) {
  if (cp >= kHangulBase && cp < kHangulBase + kSyllableCount) {
    const int index = static_cast<int>(cp - kHangulBase);
    out.push_back(kLeadBase + index / (kVowelCount * kTrailCount));
    out.push_back(kVowelBase + (index % (kVowelCount * kTrailCount)) / kTrailCount);
    if (index % kTrailCount != 0) out.push_back(kTrailBase + index % kTrailCount);
    return;
  }
  const auto* begin = tables::kDecompositions;
  const auto* end = begin + tables::kDecompositionsCount;
  const auto* it = std::lower_bound(begin, end, cp,
                                    [](const tables::Decomposition& d, char32_t c) { return d.from < c; });
  if (it != end && it->from == cp) {
    out.append(it->to, it->to + it->length);
  } else {
    out.push_back(cp);
  }
}

// 0 when the pair has no primary composite.
char32_t compose(char32_t first, char32_t second) {
  if (first >= kLeadBase && first < kLeadBase + kLeadCount && second >= kVowelBase &&
      second < kVowelBase + kVowelCount) {
    return kHangulBase + ((first - kLeadBase) * kVowelCount + (second - kVowelBase)) * kTrailCount;
  }
  if (first >= kHangulBase && first < kHangulBase + kSyllableCount && (first - kHangulBase) % kTrailCount == 0 &&
      second > kTrailBase && second < kTrailBase + kTrailCount) {
    return first + (second - kTrailBase);
  }
  const auto* begin = tables::kCompositions;
  const auto* end = begin + tables::kCompositionsCount;
  const auto* it = std::lower_bound(begin, end, std::make_pair(first, second),
                                    [](const tables::Composition& c, const std::pair<char32_t, char32_t>& key) {
                                      return std::make_pair(c.first, c.second) < key;
                                    });
  return (it != end && it->first == first && it->second == second) ? it->composite : 0;
}

}  // namespace

bool isLetter(char32_t cp) { return inRanges(tables::kLetters, tables::kLettersCount, cp); }
bool isNumber(char32_t cp) { return inRanges(tables::kNumbers, tables::kNumbersCount, cp); }
bool isWhiteSpace(char32_t cp) { return inRanges(tables::kWhiteSpace, tables::kWhiteSpaceCount, cp); }

std::u32string toLower(const std::u32string& text) {
  std::u32string out;
  out.reserve(text.size());
  const auto* begin = tables::kLowercase;
  const auto* end = begin + tables::kLowercaseCount;
  for (char32_t cp : text) {
    if (cp < 0x80) {
      out.push_back((cp >= 'A' && cp <= 'Z') ? cp + 32 : cp);
      continue;
    }
    const auto* it = std::lower_bound(begin, end, cp,
                                      [](const tables::LowercaseMapping& m, char32_t c) { return m.from < c; });
    if (it != end && it->from == cp) {
      out.push_back(it->to0);
      if (it->to1 != 0) out.push_back(it->to1);
    } else {
      out.push_back(cp);
    }
  }
  return out;
}

std::u32string normalizeNfc(const std::u32string& text) {
  // Canonical decomposition, then canonical ordering of combining marks (stable sort by class
  // within each run of non-starters), then canonical composition.
  std::u32string decomposed;
  decomposed.reserve(text.size());
  for (char32_t cp : text) appendDecomposed(decomposed, cp);

  for (std::size_t i = 0; i < decomposed.size();) {
    if (combiningClass(decomposed[i]) == 0) { ++i; continue; }
    std::size_t j = i;
    while (j < decomposed.size() && combiningClass(decomposed[j]) != 0) ++j;
    std::stable_sort(decomposed.begin() + i, decomposed.begin() + j,
                     [](char32_t a, char32_t b) { return combiningClass(a) < combiningClass(b); });
    i = j;
  }

  std::u32string out;
  out.reserve(decomposed.size());
  std::size_t starter = std::u32string::npos;  // index in out of the last starter
  int lastClass = -1;                          // class of the last character appended after it
  for (char32_t cp : decomposed) {
    const int cls = combiningClass(cp);
    if (starter != std::u32string::npos) {
      // Blocked when a character of the same or higher class (or a starter) sits in between.
      const bool blocked = (lastClass != -1) && (lastClass == 0 || lastClass >= cls);
      if (!blocked) {
        const char32_t composite = compose(out[starter], cp);
        if (composite != 0) {
          out[starter] = composite;
          continue;
        }
      }
    }
    if (cls == 0) {
      starter = out.size();
      lastClass = -1;
    } else {
      lastClass = cls;
    }
    out.push_back(cp);
  }
  return out;
}

}  // namespace sinter::text
