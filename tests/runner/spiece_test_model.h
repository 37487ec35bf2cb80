#pragma once
// A small SentencePiece unigram model made at test time with Debian's spm_train, with T5's special
// ids (pad 0, </s> 1, unk 2, no <s>), and spm_encode's ids for a text: the reference T5's
// tokenizer is checked against. CMake finds the tools (SINTER_SPM_TRAIN, SINTER_SPM_ENCODE) in
// builds with SentencePiece; other builds skip before making one.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef SINTER_SPM_TRAIN
#define SINTER_SPM_TRAIN "spm_train"
#define SINTER_SPM_ENCODE "spm_encode"
#endif

namespace sinter::text::testing {

namespace fs = std::filesystem;

class SpieceTestModel {
 public:
  // Trains into a fresh temporary folder (removed with the object); std::runtime_error on failure.
  SpieceTestModel() {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("sinter_t5_model_" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(dir_ / "model");
    std::ofstream corpus(dir_ / "corpus.txt");
    const char* lines[] = {"a photo of a cat sitting on a red chair", "a painting of a dog in the snow",
                           "the quick brown fox jumps over the lazy dog", "a close-up photo of a blue flower",
                           "an old castle on a hill at sunset", "two cats and a dog playing in the garden",
                           "a watercolor painting of mountains and a lake", "sks person wearing a hat, smiling"};
    for (int repeat = 0; repeat < 20; ++repeat)
      for (const char* l : lines) corpus << l << "\n";
    corpus.close();
    const std::string train = std::string(SINTER_SPM_TRAIN) + " --input=" + (dir_ / "corpus.txt").string() +
                              " --model_prefix=" + (dir_ / "model" / "spiece").string() +
                              " --vocab_size=90 --model_type=unigram --pad_id=0 --eos_id=1 --unk_id=2 --bos_id=-1 "
                              "--hard_vocab_limit=false >" + (dir_ / "train.log").string() + " 2>&1";
    if (std::system(train.c_str()) != 0) throw std::runtime_error("spm_train failed: " + train);
  }
  ~SpieceTestModel() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  SpieceTestModel(const SpieceTestModel&) = delete;
  SpieceTestModel& operator=(const SpieceTestModel&) = delete;

  fs::path dir() const { return dir_; }
  fs::path folder() const { return dir_ / "model"; }  // holds spiece.model, as Hugging Face's folder does
  fs::path file() const { return dir_ / "model" / "spiece.model"; }

  // spm_encode's piece ids for one line of text.
  std::vector<int> spmEncode(const std::string& text) const {
    std::ofstream(dir_ / "in.txt") << text << "\n";
    const std::string cmd = std::string(SINTER_SPM_ENCODE) + " --model=" + file().string() +
                            " --output_format=id < " + (dir_ / "in.txt").string();
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) throw std::runtime_error("cannot run " + cmd);
    std::array<char, 4096> buf{};
    while (std::size_t n = std::fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
    if (::pclose(p) != 0) throw std::runtime_error("spm_encode failed: " + cmd);
    std::istringstream ids(out);
    std::vector<int> result;
    for (int id; ids >> id;) result.push_back(id);
    return result;
  }

 private:
  fs::path dir_;
};

}  // namespace sinter::text::testing
