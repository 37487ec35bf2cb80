#pragma once
// The C interface of the sinter_sentencepiece module (sentencepiece_module.cpp), which
// sentencepiece_loader.cpp loads into a link-map namespace of its own: Debian's libsentencepiece
// carries its own protobuf-lite and libtorch brings libprotobuf, so the two must never share one
// symbol scope. Plain C types and caller-owned buffers only (each side has its own C and C++
// runtime: nothing allocated on one side is freed on the other), and no exception crosses it.
#include <cstddef>

// Raised whenever a signature or meaning below changes; the loader refuses another number.
#define SINTER_SPM_ABI_VERSION 1

extern "C" {

// SINTER_SPM_ABI_VERSION as the module was built.
int sinter_spm_abi_version();

// Reads a SentencePiece model file. A handle for sinter_spm_encode and sinter_spm_free, or null
// with SentencePiece's reason in `error` (truncated to errorSize, always terminated).
void* sinter_spm_load(const char* path, char* error, std::size_t errorSize);

// The piece ids of text[0, size). Writes at most `capacity` ids and returns how many there are
// (call again with a larger buffer when that is more than capacity); -1 with the reason in
// `error` when SentencePiece fails.
long sinter_spm_encode(void* handle, const char* text, std::size_t size, int* ids, std::size_t capacity,
                       char* error, std::size_t errorSize);

void sinter_spm_free(void* handle);

}  // extern "C"
