#pragma once
// A PNG's chunks checked against their CRC-32s, as libpng and PIL check them on load (stb_image,
// which decodes here, does not): a file damaged on disk or in transfer is found before training
// rather than trained on.
#include <cstddef>
#include <cstdint>
#include <string>

namespace sinter::data {

// The first problem with the chunks of a PNG file's bytes (a chunk whose CRC does not match its
// data, one that runs past the end, no IEND), as a reason for the log; "" when every chunk checks.
std::string pngChunkProblem(const std::uint8_t* bytes, size_t size);

}  // namespace sinter::data
