#pragma once
// The tokenizers sd-scripts has already downloaded. sd-scripts loads them from the Hugging Face Hub
// (transformers' from_pretrained: CLIP from openai/clip-vit-large-patch14, FLUX's T5 from
// google/t5-v1_1-xxl), which keeps each in the hub cache; a machine that trained with sd-scripts or
// kohya_ss has them there. Sinter downloads nothing, but reads that cache when a tokenizer option
// is unset and no copy ships with Sinter (T5's).
#include <optional>
#include <string>
#include <vector>

namespace sinter::text {

// The hub cache folders, in huggingface_hub's order: $HF_HUB_CACHE, $HF_HOME/hub,
// $XDG_CACHE_HOME/huggingface/hub, ~/.cache/huggingface/hub (those the environment defines).
std::vector<std::string> hubCacheRoots();

// The snapshot folder of `repoId` ("google/t5-v1_1-xxl") in the first cache root that has one
// holding any of `files`: the revision refs/main names, else any snapshot that has them.
std::optional<std::string> findHubCacheSnapshot(const std::string& repoId, const std::vector<std::string>& files);

// T5's tokenizer as sd-scripts' FLUX scripts download it (the repository's spiece.model).
constexpr const char* kT5TokenizerRepo = "google/t5-v1_1-xxl";
std::optional<std::string> findCachedT5Tokenizer();
// Where findCachedT5Tokenizer() looked, for an error message.
std::string describeT5TokenizerSearch();

}  // namespace sinter::text
