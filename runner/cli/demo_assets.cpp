#include "cli/demo_assets.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#endif
#include <stb_image_write.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

namespace sinter::runner {

namespace fs = std::filesystem;

namespace {

struct Colour {
  const char* name;
  unsigned char r, g, b;
};

void appendBytes(void* context, void* data, int size) {
  static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<std::size_t>(size));
}

}  // namespace

void writeDemoDataset(const std::string& dir, int count, std::uint64_t seed) {
  const Colour colours[] = {{"red", 220, 40, 40}, {"green", 40, 180, 60}, {"blue", 40, 80, 220}, {"yellow", 230, 210, 40}};
  const char* shapes[] = {"circle", "square"};
  const int sizes[][2] = {{128, 128}, {160, 96}, {96, 160}};  // a few aspect ratios, so buckets matter
  const fs::path folder = fs::path(dir) / "10_demo shapes";
  fs::create_directories(folder);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < count; ++i) {
    const Colour& c = colours[rng() % 4];
    const char* shape = shapes[rng() % 2];
    const int w = sizes[i % 3][0], h = sizes[i % 3][1];
    const Colour& bg = colours[(&c - colours + 1 + rng() % 3) % 4];
    std::vector<unsigned char> px(static_cast<std::size_t>(w * h * 3));
    const int cx = w / 2 + static_cast<int>(rng() % 17) - 8, cy = h / 2 + static_cast<int>(rng() % 17) - 8;
    const int radius = std::min(w, h) / 3;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const int dx = x - cx, dy = y - cy;
        const bool inside = shape[0] == 'c' ? dx * dx + dy * dy <= radius * radius
                                            : std::abs(dx) <= radius && std::abs(dy) <= radius;
        const Colour& p = inside ? c : bg;
        unsigned char* o = &px[static_cast<std::size_t>((y * w + x) * 3)];
        // A little texture so the images are not flat.
        const int n = static_cast<int>((x * 7 + y * 13) % 9) - 4;
        o[0] = static_cast<unsigned char>(std::clamp(p.r / 2 + n + 64, 0, 255));
        o[1] = static_cast<unsigned char>(std::clamp(p.g / 2 + n + 64, 0, 255));
        o[2] = static_cast<unsigned char>(std::clamp(p.b / 2 + n + 64, 0, 255));
      }
    std::string png;
    if (!stbi_write_png_to_func(appendBytes, &png, w, h, 3, px.data(), w * 3))
      throw std::runtime_error("cannot encode demo image " + std::to_string(i));
    char stem[32];
    std::snprintf(stem, sizeof stem, "shape_%03d", i);
    writeFileAtomically((folder / (std::string(stem) + ".png")).string(), png);
    writeFileAtomically((folder / (std::string(stem) + ".txt")).string(),
                        std::string("a ") + c.name + " " + shape + " on " + bg.name + "\n");
  }
}

void writeByteLevelClipVocabulary(const std::string& dir) {
  // GPT-2/CLIP's byte -> printable character mapping (bytes_to_unicode), in CLIP's id order.
  std::vector<int> bytes;
  for (int b = '!'; b <= '~'; ++b) bytes.push_back(b);
  for (int b = 0xA1; b <= 0xAC; ++b) bytes.push_back(b);
  for (int b = 0xAE; b <= 0xFF; ++b) bytes.push_back(b);
  std::vector<int> codepoints = bytes;
  for (int b = 0, n = 0; b < 256; ++b)
    if (std::find(bytes.begin(), bytes.end(), b) == bytes.end()) bytes.push_back(b), codepoints.push_back(256 + n++);
  auto utf8 = [](int cp) {
    std::string s;
    if (cp < 0x80) s += static_cast<char>(cp);
    else {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return s;
  };
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < codepoints.size(); ++i) vocab[utf8(codepoints[i])] = static_cast<int>(i);
  for (std::size_t i = 0; i < codepoints.size(); ++i) vocab[utf8(codepoints[i]) + "</w>"] = static_cast<int>(256 + i);
  // Merges that spell the demo's words left to right ("r e", "re d</w>", ...), so captions become
  // a few word tokens rather than letters.
  std::string merges = "#version: 0.2\n";
  int nextId = 512;
  for (const char* word : {"a", "red", "green", "blue", "yellow", "circle", "square", "on", "shape", "photo", "of"}) {
    std::string symbol(1, word[0]);
    for (std::size_t i = 1; word[i]; ++i) {
      std::string piece(1, word[i]);
      if (!word[i + 1]) piece += "</w>";
      const std::string merged = symbol + piece;
      if (!vocab.contains(merged)) {
        merges += symbol + " " + piece + "\n";
        vocab[merged] = nextId++;
      }
      symbol = merged;
    }
  }
  vocab["<|startoftext|>"] = 49406;
  vocab["<|endoftext|>"] = 49407;
  fs::create_directories(dir);
  writeFileAtomically((fs::path(dir) / "vocab.json").string(), vocab.dump() + "\n");
  writeFileAtomically((fs::path(dir) / "merges.txt").string(), merges);
}

// ---- T5's tokenizer -------------------------------------------------------------------------------

namespace {

// Just enough of the protobuf wire format to write SentencePiece's ModelProto.
void appendVarint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}
void appendTag(std::string& out, int field, int wireType) { appendVarint(out, static_cast<std::uint64_t>(field << 3 | wireType)); }
void appendBytes(std::string& out, int field, const std::string& bytes) {
  appendTag(out, field, 2);
  appendVarint(out, bytes.size());
  out += bytes;
}
void appendInt(std::string& out, int field, std::int64_t v) {
  appendTag(out, field, 0);
  appendVarint(out, static_cast<std::uint64_t>(v));
}
void appendFloat(std::string& out, int field, float v) {
  appendTag(out, field, 5);
  char bytes[4];
  std::memcpy(bytes, &v, 4);  // little-endian, as protobuf's fixed32
  out.append(bytes, 4);
}

}  // namespace

void writeDemoT5Tokenizer(const std::string& dir) {
  enum PieceType { kNormal = 1, kUnknown = 2, kControl = 3 };
  struct Piece {
    std::string text;
    float score;
    PieceType type;
  };
  // T5's special ids: <pad> 0, </s> 1, <unk> 2. Then the demo's words (word-initial, "▁" marking
  // the space before them) scored above the letters, so a caption is a few word pieces.
  const std::string space = "\xe2\x96\x81";  // U+2581, SentencePiece's whitespace mark
  std::vector<Piece> pieces = {{"<pad>", 0.0f, kControl}, {"</s>", 0.0f, kControl}, {"<unk>", 0.0f, kUnknown}};
  for (const char* word : {"a", "red", "green", "blue", "yellow", "circle", "square", "on", "white", "black", "grey",
                           "gray", "shape", "photo", "of"})
    pieces.push_back({space + word, -1.0f, kNormal});
  pieces.push_back({space, -4.0f, kNormal});
  for (char c = 'a'; c <= 'z'; ++c)
    if (std::none_of(pieces.begin(), pieces.end(), [&](const Piece& p) { return p.text == std::string(1, c); }))
      pieces.push_back({std::string(1, c), -5.0f, kNormal});

  std::string model;
  for (const Piece& p : pieces) {
    std::string piece;
    appendBytes(piece, 1, p.text);
    appendFloat(piece, 2, p.score);
    appendInt(piece, 3, p.type);
    appendBytes(model, 1, piece);  // ModelProto.pieces
  }
  std::string trainer;
  appendInt(trainer, 3, 1);  // model_type: UNIGRAM
  appendInt(trainer, 4, static_cast<std::int64_t>(pieces.size()));  // vocab_size
  appendInt(trainer, 40, 2);  // unk_id
  appendInt(trainer, 41, -1);  // bos_id: T5 has none
  appendInt(trainer, 42, 1);  // eos_id
  appendInt(trainer, 43, 0);  // pad_id
  appendBytes(model, 2, trainer);  // ModelProto.trainer_spec
  std::string normalizer;
  appendBytes(normalizer, 1, "identity");  // no character map: the demo's captions are plain ASCII
  appendInt(normalizer, 3, 1);  // add_dummy_prefix
  appendInt(normalizer, 4, 1);  // remove_extra_whitespaces
  appendInt(normalizer, 5, 1);  // escape_whitespaces
  appendBytes(model, 3, normalizer);  // ModelProto.normalizer_spec
  fs::create_directories(dir);
  writeFileAtomically((fs::path(dir) / "spiece.model").string(), model);
}

}  // namespace sinter::runner
