// The sinter_sentencepiece module: Debian's libsentencepiece behind sentencepiece_module.h. Built
// as a MODULE library of its own, linking libsentencepiece and nothing that brings libprotobuf;
// sentencepiece_loader.cpp loads it. No exception leaves it.
#include "text/sentencepiece_module.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

// The module's only exported symbols (it is built with hidden visibility).
#define SINTER_SPM_EXPORT __attribute__((visibility("default")))

namespace {

void setError(char* error, std::size_t errorSize, const std::string& message) {
  if (!error || errorSize == 0) return;
  const std::size_t n = std::min(message.size(), errorSize - 1);
  std::memcpy(error, message.data(), n);
  error[n] = '\0';
}

}  // namespace

extern "C" {

SINTER_SPM_EXPORT int sinter_spm_abi_version() { return SINTER_SPM_ABI_VERSION; }

SINTER_SPM_EXPORT void* sinter_spm_load(const char* path, char* error, std::size_t errorSize) {
  try {
    auto processor = std::make_unique<sentencepiece::SentencePieceProcessor>();
    const auto status = processor->Load(path);
    if (!status.ok()) {
      setError(error, errorSize, status.ToString());
      return nullptr;
    }
    return processor.release();
  } catch (const std::exception& e) {
    setError(error, errorSize, e.what());
  } catch (...) {
    setError(error, errorSize, "unknown exception");
  }
  return nullptr;
}

SINTER_SPM_EXPORT long sinter_spm_encode(void* handle, const char* text, std::size_t size, int* ids,
                                         std::size_t capacity, char* error, std::size_t errorSize) {
  try {
    const auto* processor = static_cast<const sentencepiece::SentencePieceProcessor*>(handle);
    std::vector<int> pieces;
    const auto status = processor->Encode(absl::string_view(text, size), &pieces);
    if (!status.ok()) {
      setError(error, errorSize, status.ToString());
      return -1;
    }
    std::copy_n(pieces.begin(), std::min(pieces.size(), capacity), ids);
    return static_cast<long>(pieces.size());
  } catch (const std::exception& e) {
    setError(error, errorSize, e.what());
  } catch (...) {
    setError(error, errorSize, "unknown exception");
  }
  return -1;
}

SINTER_SPM_EXPORT void sinter_spm_free(void* handle) {
  delete static_cast<sentencepiece::SentencePieceProcessor*>(handle);
}

}  // extern "C"
