#include "train/methods/embedding_rows.h"

#include <spdlog/spdlog.h>

#include "train/base/run_errors.h"

namespace sinter::train {

std::vector<int32_t> initWordIds(const text::ClipTokenizer& tokenizer, const std::string& initWord, int vectors) {
  if (initWord.empty()) return {};
  const std::vector<int32_t> ids = tokenizer.encode(initWord);
  if (ids.empty()) throw InputError("init_word: \"" + initWord + "\" has no tokens");
  if (ids.size() > 1 && static_cast<int>(ids.size()) != vectors)
    spdlog::warn("init_word \"{}\" is {} tokens and num_vectors_per_token is {}: its tokens are repeated or cut to fit, as in "
                 "sd-scripts", initWord, ids.size(), vectors);
  return ids;
}

torch::Tensor initialEmbeddingRows(const torch::Tensor& tableIn, const std::vector<int32_t>& initIds, int64_t vectors) {
  torch::NoGradGuard noGrad;
  const torch::Tensor table = tableIn.detach().to(torch::kCPU, torch::kFloat32);
  if (initIds.empty()) return table.mean(0, /*keepdim=*/true).expand({vectors, table.size(1)}).clone();
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < vectors; ++i) rows.push_back(initIds[static_cast<size_t>(i) % initIds.size()]);
  return table.index_select(0, torch::tensor(rows, torch::kLong));
}

}  // namespace sinter::train
