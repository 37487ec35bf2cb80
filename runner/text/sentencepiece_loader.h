#pragma once
// SentencePiece for the runner through the sinter_sentencepiece module (sentencepiece_module.h),
// loaded at run time with dlmopen into a link-map namespace of its own. Debian's libsentencepiece
// carries and exports its own protobuf-lite (3.14) and libtorch brings libprotobuf (3.21): linked
// together, libprotobuf's start-up bound to the other's symbols and every torch test crashed at
// load. sentencepiece_loader.cpp says why a namespace of its own rather than RTLD_DEEPBIND.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace sinter::text {

class SentencePieceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Whether this build made the module (CMake's SINTER_WITH_SENTENCEPIECE).
bool sentencePieceModuleBuilt();

// Where the module is looked for, in order: beside the running executable (the build tree's bin/,
// where the tests run too), the installed lib folder relative to it, and the path the build wrote
// it to. Empty in a build without the module.
std::vector<std::string> sentencePieceModuleCandidates();

struct SentencePieceModule;  // a loaded module's entry points

// One SentencePiece model read by the module.
class SentencePieceModel {
 public:
  // The module is the first of `moduleCandidates` that exists, loaded once per process.
  // SentencePieceError naming the paths tried when none exists, the path and the loader's reason
  // when it does not load, and SentencePiece's reason when the model does not read.
  explicit SentencePieceModel(const std::string& modelFile,
                              const std::vector<std::string>& moduleCandidates = sentencePieceModuleCandidates());
  ~SentencePieceModel();
  SentencePieceModel(SentencePieceModel&&) noexcept;
  SentencePieceModel& operator=(SentencePieceModel&&) noexcept;
  SentencePieceModel(const SentencePieceModel&) = delete;
  SentencePieceModel& operator=(const SentencePieceModel&) = delete;

  std::vector<int> encode(const std::string& text) const;  // piece ids; safe from several threads
  const std::string& modulePath() const;

 private:
  const SentencePieceModule* module_ = nullptr;
  void* handle_ = nullptr;
};

}  // namespace sinter::text
