#pragma once
// PyTorch's own checkpoint files (.ckpt, .pt, .bin: a zip archive of pickles, or a bare pickle)
// told apart from safetensors by their first bytes, so that the error says what the file is and
// what to do. Sinter never unpickles a file: a pickle runs code when it is loaded.
#include <cstddef>
#include <optional>
#include <string>

namespace sinter {

// When a file's first bytes (`head`, `size` of them; 9 or more tell a safetensors file whose header
// length starts like a pickle's) are a PyTorch pickle checkpoint's: what it is and what to do, as a
// phrase ("a PyTorch pickle checkpoint ..."); else nullopt.
std::optional<std::string> pickleCheckpointProblem(const unsigned char* head, std::size_t size);

}  // namespace sinter
