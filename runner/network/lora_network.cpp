#include "network/lora_network.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/ascii_text.h"

namespace sinter::network {

std::string shapeText(at::IntArrayRef shape) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << "]";
  return s.str();
}

namespace {

std::string joinComma(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::vector<std::string> splitOn(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at; (at = s.find(sep, start)) != std::string::npos; start = at + 1) parts.push_back(s.substr(start, at - start));
  parts.push_back(s.substr(start));
  return parts;
}

double parseNumber(const std::string& key, const std::string& value) {
  try {
    const std::string v = trimAscii(value);
    size_t used = 0;
    const double d = std::stod(v, &used);
    if (used != v.size() || !std::isfinite(d)) throw std::invalid_argument(value);
    return d;
  } catch (const std::exception&) {
    throw LoraError("network_args: " + key + "=" + value + " is not a number");
  }
}

int64_t parseInteger(const std::string& key, const std::string& value) {
  try {
    const std::string v = trimAscii(value);
    size_t used = 0;
    const long long i = std::stoll(v, &used);
    if (used != v.size()) throw std::invalid_argument(value);
    return i;
  } catch (const std::exception&) {
    throw LoraError("network_args: " + key + "=" + value + " is not a whole number");
  }
}

double parseProbability(const std::string& key, const std::string& value) {
  const double p = parseNumber(key, value);
  if (p < 0.0 || p >= 1.0) throw LoraError("network_args: " + key + "=" + value + " is not in [0, 1)");
  return p;
}

// block_dims and its kin: exactly kSdxlBlockCount comma-separated values (get_block_dims_and_alphas).
template <typename T, typename Parse>
std::vector<T> parseBlockList(const std::string& key, const std::string& value, Parse parse) {
  std::vector<T> out;
  for (const std::string& item : splitOn(value, ',')) out.push_back(parse(key, item));
  if (out.size() != static_cast<size_t>(kSdxlBlockCount))
    throw LoraError("network_args: " + key + " must have " + std::to_string(kSdxlBlockCount) +
                    " comma-separated values (SDXL's blocks: 0 embeddings, 1-9 input_blocks, 10-12 middle_block, "
                    "13-21 output_blocks, 22 out), got " + std::to_string(out.size()));
  return out;
}

// An lr weight list as parse_block_lr_kwargs reads it: empty items are 0; then padded with 1 or cut
// to `count` (get_block_lr_weight).
std::vector<double> lrWeightList(const std::string& key, const std::string& value, size_t count) {
  std::vector<double> out;
  for (const std::string& item : splitOn(value, ',')) out.push_back(trimAscii(item).empty() ? 0.0 : parseNumber(key, item));
  out.resize(count, 1.0);
  return out;
}

// train_double_block_indices / train_single_block_indices (lora_flux's parse_block_selection):
// "all", "none", "" or a comma-separated list of indices and inclusive ranges "a-b".
std::vector<bool> parseBlockSelection(const std::string& key, const std::string& value, int total) {
  if (value == "all") return std::vector<bool>(total, true);
  std::vector<bool> selected(total, false);
  if (value == "none" || value.empty()) return selected;
  auto index = [&](const std::string& text) {
    const int64_t i = parseInteger(key, text);
    if (i < 0 || i >= total)
      throw LoraError("network_args: " + key + "=" + value + ": index " + std::to_string(i) + " is not in 0-" +
                      std::to_string(total - 1));
    return static_cast<int>(i);
  };
  for (const std::string& part : splitOn(value, ',')) {
    const size_t dash = part.find('-');
    if (dash == std::string::npos) {
      selected[index(part)] = true;
      continue;
    }
    const int first = index(part.substr(0, dash)), last = index(part.substr(dash + 1));
    if (first > last) throw LoraError("network_args: " + key + "=" + value + ": range " + part + " runs backwards");
    for (int i = first; i <= last; ++i) selected[i] = true;
  }
  return selected;
}

// lora_flux's boolean args compare with the string "True"; anything else is false.
bool pythonTrue(const std::string& value) { return value == "True"; }

const std::vector<std::string>& fluxTypeDimKeys() {
  static const std::vector<std::string> keys{"img_attn_dim", "txt_attn_dim", "img_mlp_dim", "txt_mlp_dim",
                                             "img_mod_dim",  "txt_mod_dim",  "single_dim",  "single_mod_dim"};
  return keys;
}

const std::vector<std::string>& sd3TypeDimKeys() {
  static const std::vector<std::string> keys{"context_attn_dim", "context_mlp_dim", "context_mod_dim",
                                             "x_attn_dim",       "x_mlp_dim",       "x_mod_dim"};
  return keys;
}

// lora_sd3's emb_dims: "[context, t, x, y, final_mod, final_linear]" or without brackets, 6 integers.
std::vector<int64_t> parseEmbDims(const std::string& value) {
  std::string list = trimAscii(value);
  if (list.size() >= 2 && list.front() == '[' && list.back() == ']') list = list.substr(1, list.size() - 2);
  std::vector<int64_t> dims;
  for (const std::string& item : splitOn(list, ',')) dims.push_back(parseInteger("emb_dims", trimAscii(item)));
  if (dims.size() != 6)
    throw LoraError("network_args: emb_dims=" + value + " must be 6 dimensions (context, t, x, y, final_mod, final_linear)");
  return dims;
}

// Keys of sd-scripts' networks that this build refuses, and why.
const std::map<std::string, std::string>& refusedNetworkArgs() {
  static const std::map<std::string, std::string> why{
      {"in_dims", "LoRA on FLUX's input layers (img_in, time_in, vector_in, guidance_in, txt_in) is not implemented in this "
                  "build"},
      {"ggpo_sigma", "LoRA-GGPO's weight perturbation is not implemented in this build"},
      {"ggpo_beta", "LoRA-GGPO's weight perturbation is not implemented in this build"},
      {"network_reg_lrs", "regular-expression learning rates are not implemented in this build"},
      {"network_reg_dims", "regular-expression ranks are not implemented in this build"},
  };
  return why;
}

}  // namespace

// Every key parseNetworkArgs accepts (core/kohya_network.cpp keeps the same list).
const std::vector<std::string>& supportedNetworkArgs() {
  static const std::vector<std::string> keys = {
      "loraplus_lr_ratio", "loraplus_unet_lr_ratio", "loraplus_text_encoder_lr_ratio", "conv_dim", "conv_alpha",
      "rank_dropout", "module_dropout", "block_dims", "block_alphas", "conv_block_dims", "conv_block_alphas",
      "down_lr_weight", "mid_lr_weight", "up_lr_weight", "block_lr_zero_threshold", "train_blocks",
      "train_double_block_indices", "train_single_block_indices", "img_attn_dim", "txt_attn_dim", "img_mlp_dim",
      "txt_mlp_dim", "img_mod_dim", "txt_mod_dim", "single_dim", "single_mod_dim", "split_qkv", "train_t5xxl",
      "verbose", "context_attn_dim", "context_mlp_dim", "context_mod_dim", "x_attn_dim", "x_mlp_dim", "x_mod_dim",
      "train_block_indices", "emb_dims"};
  return keys;
}

std::vector<double> namedBlockLrWeights(const std::string& key, const std::string& spec) {
  constexpr int n = 9;  // SDXL_NUM_OF_BLOCKS
  const double kPi = std::acos(-1.0);
  const std::vector<std::string> tokens = splitOn(spec, '+');
  const std::string name = tokens[0];
  const double base = tokens.size() > 1 ? parseNumber(key, tokens[1]) : 0.0;
  std::vector<double> w;
  for (int j = 0; j < n; ++j) {
    const double up = static_cast<double>(j) / (n - 1), down = static_cast<double>(n - 1 - j) / (n - 1);
    if (name == "sine") w.push_back(std::sin(kPi * up / 2) + base);
    else if (name == "cosine") w.push_back(std::sin(kPi * down / 2) + base);
    else if (name == "linear") w.push_back(up + base);
    else if (name == "reverse_linear") w.push_back(down + base);
    else if (name == "zeros") w.push_back(base);
    else
      throw LoraError("network_args: " + key + "=" + spec +
                      " is neither a comma-separated list of weights nor one of cosine, sine, linear, reverse_linear, "
                      "zeros (each optionally +number)");
  }
  return w;
}

namespace {

// lycoris.kohya: LoRA+'s ratios as networks.lora reads them, the rest LyCORIS's.
LoraNetworkArgs parseLycorisNetworkArgs(const std::vector<std::string>& args) {
  LoraNetworkArgs parsed;
  for (const std::string& arg : args) {
    const size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0) throw LoraError("network_args: '" + arg + "' is not key=value");
    const std::string key = arg.substr(0, eq), value = arg.substr(eq + 1);
    if (key == "loraplus_lr_ratio") parsed.loraplusLrRatio = parseNumber(key, value);
    else if (key == "loraplus_unet_lr_ratio") parsed.loraplusUnetLrRatio = parseNumber(key, value);
    else if (key == "loraplus_text_encoder_lr_ratio") parsed.loraplusTextEncoderLrRatio = parseNumber(key, value);
    parsed.raw.emplace_back(key, value);
  }
  try {
    parsed.lycoris = parseLycorisArgs(parsed.raw);
  } catch (const std::invalid_argument& e) {
    throw LoraError(e.what());
  }
  return parsed;
}

}  // namespace

LoraNetworkArgs parseNetworkArgs(const std::vector<std::string>& args, const std::string& networkModule) {
  if (networkModule == "lycoris.kohya") return parseLycorisNetworkArgs(args);
  LoraNetworkArgs parsed;
  std::optional<std::string> downLr, midLr, upLr;
  double zeroThreshold = 0.0;
  for (const std::string& arg : args) {
    const size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0)
      throw LoraError("network_args: '" + arg + "' is not key=value");
    const std::string key = arg.substr(0, eq);
    const std::string value = arg.substr(eq + 1);
    const auto typeDim = std::find(fluxTypeDimKeys().begin(), fluxTypeDimKeys().end(), key);
    const auto sd3TypeDim = std::find(sd3TypeDimKeys().begin(), sd3TypeDimKeys().end(), key);
    if (key == "loraplus_lr_ratio") {
      parsed.loraplusLrRatio = parseNumber(key, value);
    } else if (key == "loraplus_unet_lr_ratio") {
      parsed.loraplusUnetLrRatio = parseNumber(key, value);
    } else if (key == "loraplus_text_encoder_lr_ratio") {
      parsed.loraplusTextEncoderLrRatio = parseNumber(key, value);
    } else if (key == "conv_dim") {
      parsed.convDim = parseInteger(key, value);
      if (*parsed.convDim < 0) throw LoraError("network_args: conv_dim=" + value + " is negative");
    } else if (key == "conv_alpha") {
      parsed.convAlpha = parseNumber(key, value);
    } else if (key == "rank_dropout") {
      parsed.rankDropout = parseProbability(key, value);
    } else if (key == "module_dropout") {
      parsed.moduleDropout = parseProbability(key, value);
    } else if (key == "block_dims") {
      parsed.blockDims = parseBlockList<int64_t>(key, value, parseInteger);
    } else if (key == "conv_block_dims") {
      parsed.convBlockDims = parseBlockList<int64_t>(key, value, parseInteger);
    } else if (key == "block_alphas") {
      parsed.blockAlphas = parseBlockList<double>(key, value, parseNumber);
    } else if (key == "conv_block_alphas") {
      parsed.convBlockAlphas = parseBlockList<double>(key, value, parseNumber);
    } else if (key == "down_lr_weight") {
      downLr = value;
    } else if (key == "mid_lr_weight") {
      midLr = value;
    } else if (key == "up_lr_weight") {
      upLr = value;
    } else if (key == "block_lr_zero_threshold") {
      zeroThreshold = parseNumber(key, value);
    } else if (key == "train_blocks") {
      if (value != "all" && value != "double" && value != "single")
        throw LoraError("network_args: train_blocks='" + value + "' is not one of all, double, single");
      parsed.trainBlocks = value;
    } else if (key == "train_double_block_indices") {
      parsed.trainDoubleBlocks = parseBlockSelection(key, value, 19);
    } else if (key == "train_single_block_indices") {
      parsed.trainSingleBlocks = parseBlockSelection(key, value, 38);
    } else if (typeDim != fluxTypeDimKeys().end() || sd3TypeDim != sd3TypeDimKeys().end()) {
      const int64_t dim = parseInteger(key, value);
      if (dim < 0) throw LoraError("network_args: " + key + "=" + value + " is negative");
      if (typeDim != fluxTypeDimKeys().end()) parsed.fluxTypeDims[typeDim - fluxTypeDimKeys().begin()] = dim;
      else parsed.sd3TypeDims[sd3TypeDim - sd3TypeDimKeys().begin()] = dim;
    } else if (key == "train_block_indices") {
      parsed.trainJointBlocks = parseBlockSelection(key, value, 999);  // lora_sd3: any joint block index
    } else if (key == "emb_dims") {
      parsed.sd3EmbDims = parseEmbDims(value);
      for (int64_t dim : parsed.sd3EmbDims)
        if (dim < 0) throw LoraError("network_args: emb_dims=" + value + " holds a negative dimension");
    } else if (key == "split_qkv") {
      if (pythonTrue(value))
        throw LoraError("network_args: split_qkv=True is not supported by this build: its separate q/k/v (and mlp) "
                        "adapters are not implemented; leave it out (False) for one adapter per qkv Linear");
    } else if (key == "train_t5xxl") {
      parsed.trainT5xxl = pythonTrue(value);
    } else if (key == "verbose") {
      // lora_flux's module listing in the log; nothing to train differently.
    } else if (auto refused = refusedNetworkArgs().find(key); refused != refusedNetworkArgs().end()) {
      throw LoraError("network_args: '" + key + "' is not supported: " + refused->second);
    } else {
      throw LoraError("network_args: '" + key + "' is not supported by this build of networks.lora (supported: " +
                      joinComma(supportedNetworkArgs()) + ")");
    }
    parsed.raw.emplace_back(key, value);
  }
  if (parsed.convDim && !parsed.convAlpha) parsed.convAlpha = 1.0;  // create_network: conv_alpha None -> 1.0
  // parse_block_lr_kwargs and get_block_lr_weight: a list has a ',' (down and up; mid always is a
  // list), else it names a preset; missing blocks weigh 1, weights not above the threshold 0.
  if (downLr || midLr || upLr) {
    auto blockWeights = [&](const char* key, const std::optional<std::string>& v, size_t count, bool presets) {
      std::vector<double> w(count, 1.0);
      if (v) w = !presets || v->find(',') != std::string::npos ? lrWeightList(key, *v, count) : namedBlockLrWeights(key, *v);
      if (v)
        for (double& x : w)
          if (!(x > zeroThreshold)) x = 0.0;
      return w;
    };
    const std::vector<double> down = blockWeights("down_lr_weight", downLr, 9, true);
    const std::vector<double> mid = blockWeights("mid_lr_weight", midLr, 3, false);
    const std::vector<double> up = blockWeights("up_lr_weight", upLr, 9, true);
    std::vector<double> all{1.0};  // time/label embeddings
    all.insert(all.end(), down.begin(), down.end());
    all.insert(all.end(), mid.begin(), mid.end());
    all.insert(all.end(), up.begin(), up.end());
    all.push_back(1.0);  // out
    parsed.blockLrWeight = all;
  }
  return parsed;
}

void checkNetworkArgsFamily(const LoraNetworkArgs& args, LoraNetworkModule module) {
  if (args.lycoris) return;  // lycoris.kohya's arguments are the same for every model
  // Each module's own keys (besides those all of them read: loraplus, dropouts, conv_dim).
  static const std::vector<std::pair<LoraNetworkModule, std::vector<std::string>>> own{
      {LoraNetworkModule::Lora,
       {"block_dims", "block_alphas", "conv_block_dims", "conv_block_alphas", "down_lr_weight", "mid_lr_weight", "up_lr_weight",
        "block_lr_zero_threshold"}},
      {LoraNetworkModule::LoraFlux,
       {"train_blocks", "train_double_block_indices", "train_single_block_indices", "img_attn_dim", "txt_attn_dim",
        "img_mlp_dim", "txt_mlp_dim", "img_mod_dim", "txt_mod_dim", "single_dim", "single_mod_dim", "split_qkv",
        "train_t5xxl", "verbose"}},
      {LoraNetworkModule::LoraSd3,
       {"context_attn_dim", "context_mlp_dim", "context_mod_dim", "x_attn_dim", "x_mlp_dim", "x_mod_dim",
        "train_block_indices", "emb_dims", "split_qkv", "train_t5xxl", "verbose"}},
  };
  static const std::map<LoraNetworkModule, const char*> models{
      {LoraNetworkModule::Lora, "SD 1.x/2.x and SDXL"}, {LoraNetworkModule::LoraFlux, "FLUX"}, {LoraNetworkModule::LoraSd3, "SD 3.x"}};
  for (const auto& [key, value] : args.raw) {
    bool mine = false;
    std::string owner;
    for (const auto& [m, keys] : own) {
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) continue;
      mine |= m == module;
      if (owner.empty()) owner = std::string(loraNetworkModuleName(m)) + " (" + models.at(m) + ")";
    }
    if (!owner.empty() && !mine)
      throw LoraError("network_args " + key + " is an argument of " + owner + ", not of " + models.at(module) + "'s " +
                      loraNetworkModuleName(module));
  }
}

LoraNetwork::LoraNetwork(LoraNetworkOptions options) : options_(std::move(options)) {
  if (!options_.moduleRanks && options_.dim <= 0)
    throw LoraError("network_dim must be at least 1 (got " + std::to_string(options_.dim) + ")");
  if (options_.dropout < 0.0 || options_.dropout >= 1.0)
    throw LoraError("network_dropout must be in [0, 1) (got " + std::to_string(options_.dropout) + ")");
  const LoraNetworkArgs& a = options_.args;
  // create_network: block_dims or lr weights turn per-block ranks on (get_block_dims_and_alphas),
  // and blocks whose lr weight is 0 get none (remove_block_dims_and_alphas).
  if (a.usesBlocks()) {
    BlockRanks b;
    b.dims = a.blockDims.value_or(std::vector<int64_t>(kSdxlBlockCount, options_.dim));
    b.alphas = a.blockAlphas.value_or(std::vector<double>(kSdxlBlockCount, options_.alpha));
    if (a.convBlockDims) {
      b.convDims = a.convBlockDims;
      b.convAlphas = a.convBlockAlphas.value_or(std::vector<double>(kSdxlBlockCount, a.convAlpha.value_or(1.0)));
    } else if (a.convDim) {
      b.convDims = std::vector<int64_t>(kSdxlBlockCount, *a.convDim);
      b.convAlphas = std::vector<double>(kSdxlBlockCount, *a.convAlpha);
    }
    if (a.blockLrWeight)
      for (int i = 0; i < kSdxlBlockCount; ++i)
        if ((*a.blockLrWeight)[i] == 0.0) {
          b.dims[i] = 0;
          if (b.convDims) (*b.convDims)[i] = 0;
        }
    blocks_ = std::move(b);
  }
}

LoraNetwork::~LoraNetwork() = default;

namespace {

// Python's list[-1] for get_block_index's -1 (a name it does not know).
template <typename T>
const T& blockEntry(const std::vector<T>& list, int index) {
  return list[index < 0 ? list.size() - 1 : static_cast<size_t>(index)];
}

// lora_flux's and lora_sd3's type_dims: the dim of the first identifier all of whose parts are in
// the module's name and whose dim is given (may be 0: the module is left out).
std::optional<int64_t> typeDim(const std::vector<std::optional<int64_t>>& dims, const std::vector<std::vector<std::string>>& identifiers,
                               const std::string& name) {
  for (size_t i = 0; i < identifiers.size(); ++i) {
    if (!dims[i]) continue;
    bool all = true;
    for (const std::string& part : identifiers[i]) all &= name.find(part) != std::string::npos;
    if (all) return dims[i];
  }
  return std::nullopt;
}

const std::vector<std::vector<std::string>>& fluxTypeIdentifiers() {
  static const std::vector<std::vector<std::string>> identifiers{
      {"img_attn"}, {"txt_attn"}, {"img_mlp"}, {"txt_mlp"}, {"img_mod"}, {"txt_mod"}, {"single_blocks", "linear"}, {"modulation"}};
  return identifiers;
}

const std::vector<std::vector<std::string>>& sd3TypeIdentifiers() {
  static const std::vector<std::vector<std::string>> identifiers{
      {"context_block", "attn"}, {"context_block", "mlp"}, {"context_block", "adaLN_modulation"},
      {"x_block", "attn"},       {"x_block", "mlp"},       {"x_block", "adaLN_modulation"}};
  return identifiers;
}

// Whether block selection flags (parse_block_selection's) train the block of a kohya name
// "lora_unet_<kind>_blocks_<i>_...": as lora_flux and lora_sd3 read it, the name's 5th '_' part.
bool blockSelected(const std::vector<bool>& selected, const std::string& name) {
  const std::vector<std::string> parts = splitOn(name, '_');
  const size_t index = parts.size() > 4 ? static_cast<size_t>(std::stoul(parts[4])) : 0;
  return index < selected.size() && selected[index];
}

}  // namespace

int64_t LoraNetwork::rankFor(const LoraTargetRule& rule, const std::string& name, bool conv3x3, double* alpha) const {
  const LoraNetworkArgs& a = options_.args;
  if (options_.moduleRanks) {
    auto it = options_.moduleRanks->find(name);
    if (it == options_.moduleRanks->end()) return 0;
    *alpha = it->second.alpha;
    return it->second.rank;
  }
  const bool unet = rule.component == LoraComponent::Unet;
  if (unet && blocks_) {
    const int block = sdxlBlockIndex(name);
    if (!conv3x3) {
      *alpha = blockEntry(blocks_->alphas, block);
      return blockEntry(blocks_->dims, block);
    }
    if (!blocks_->convDims) return 0;
    *alpha = blockEntry(blocks_->convAlphas, block);
    return blockEntry(*blocks_->convDims, block);
  }
  // lora_sd3's emb_dims: the embedders' and final layer's rank; the x_embedder conv takes conv_dim where given.
  if (unet && rule.module == LoraNetworkModule::LoraSd3) {
    if (const std::optional<size_t> part = sd3EmbeddingPart(name)) {
      if (conv3x3 && a.convDim) {
        *alpha = *a.convAlpha;
        return *a.convDim;
      }
      *alpha = options_.alpha;
      return a.sd3EmbDims[*part];
    }
  }
  if (conv3x3) {
    if (!a.convDim) return 0;
    *alpha = *a.convAlpha;
    return *a.convDim;
  }
  *alpha = options_.alpha;
  int64_t dim = options_.dim;
  if (unet && rule.module == LoraNetworkModule::LoraFlux) {
    if (const std::optional<int64_t> typed = typeDim(a.fluxTypeDims, fluxTypeIdentifiers(), name)) dim = *typed;
    // train_double_block_indices / train_single_block_indices: "lora_unet_double_blocks_<i>_...".
    const bool isDouble = name.find("double") != std::string::npos, isSingle = name.find("single") != std::string::npos;
    if (dim && isDouble && a.trainDoubleBlocks && !blockSelected(*a.trainDoubleBlocks, name)) dim = 0;
    else if (dim && isSingle && !isDouble && a.trainSingleBlocks && !blockSelected(*a.trainSingleBlocks, name)) dim = 0;
  }
  if (unet && rule.module == LoraNetworkModule::LoraSd3) {
    if (const std::optional<int64_t> typed = typeDim(a.sd3TypeDims, sd3TypeIdentifiers(), name)) dim = *typed;
    // train_block_indices: "lora_unet_joint_blocks_<i>_...".
    if (dim && a.trainJointBlocks && name.find("joint_blocks") != std::string::npos && !blockSelected(*a.trainJointBlocks, name))
      dim = 0;
  }
  return dim;
}

size_t LoraNetwork::attach(const LoraTargetRule& rule, torch::nn::Module& root, const std::string& pathPrefix) {
  networkModule_ = rule.module;
  if (options_.args.lycoris) return attachLycoris(rule, root, pathPrefix);
  const LoraComponent component = rule.component;
  checkNetworkArgsFamily(options_.args, rule.module);
  // One walk in module order, as sd-scripts' named_modules(): Linears and Conv2ds.
  struct Candidate {
    std::string path;
    std::shared_ptr<models::LinearImpl> linear;
    std::shared_ptr<models::Conv2dImpl> conv;
  };
  std::vector<Candidate> candidates;
  std::vector<std::string> linearPaths, paths;
  for (const auto& item : root.named_modules("", /*include_self=*/false)) {
    auto linear = std::dynamic_pointer_cast<models::LinearImpl>(item.value());
    auto conv = linear ? nullptr : std::dynamic_pointer_cast<models::Conv2dImpl>(item.value());
    if (!linear && !conv) continue;
    candidates.push_back({pathPrefix + item.key(), linear, conv});
    paths.push_back(candidates.back().path);
    if (linear || (rule.selectsConv1x1 && conv->kernelSize() == 1)) linearPaths.push_back(paths.back());
  }
  const std::vector<bool> linearChosen = rule.select(linearPaths);
  // create_network adds the Conv2d-3x3 target modules with conv_dim, conv_block_dims or ranks from a file.
  const LoraNetworkArgs& a = options_.args;
  // Only with a conv rank: a 1x1 conv in those blocks (a ResBlock's skip) would take network_dim. lora_sd3's
  // emb_dims choose the x_embedder's conv by their own rank (its rule selects it only then).
  const bool convBlocks = rule.selectInConvBlocks && (options_.moduleRanks || a.convDim || (blocks_ && blocks_->convDims) ||
                                                      rule.module == LoraNetworkModule::LoraSd3);
  const std::vector<bool> inConvBlocks = convBlocks ? rule.selectInConvBlocks(paths) : std::vector<bool>(paths.size(), false);

  size_t attached = 0, linearIndex = 0;
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    const bool selectable = c.linear || (rule.selectsConv1x1 && c.conv->kernelSize() == 1);
    const bool chosen = (selectable && linearChosen[linearIndex++]) || inConvBlocks[i];
    if (!chosen || (rule.notInSdScriptsModel && rule.notInSdScriptsModel(c.path))) continue;
    const std::string name = loraModuleName(rule, c.path);
    if (find(name)) throw LoraError("duplicated LoRA module name: " + name);
    const bool conv3x3 = c.conv && c.conv->kernelSize() != 1;
    double alpha = 0.0;
    const int64_t rank = rankFor(rule, name, conv3x3, &alpha);
    if (rank <= 0) continue;  // not in the file, or a dim of 0
    if (alpha == 0.0) alpha = static_cast<double>(rank);

    auto adapter = std::make_shared<models::LoraAdapter>();
    // Same initialisation as sd-scripts (and Microsoft's LoRA): Kaiming-uniform down, zero up. A
    // Conv2d's down is a conv of its kernel, its up a 1x1 conv.
    const int64_t in = c.linear ? c.linear->inFeatures() : c.conv->inChannels();
    const int64_t out = c.linear ? c.linear->outFeatures() : c.conv->outChannels();
    const int64_t k = c.conv ? c.conv->kernelSize() : 0;
    torch::Tensor down = torch::empty(c.conv ? std::vector<int64_t>{rank, in, k, k} : std::vector<int64_t>{rank, in}, torch::kFloat32);
    torch::nn::init::kaiming_uniform_(down, std::sqrt(5.0));
    adapter->down = down.to(options_.device, options_.dtype).set_requires_grad(true);
    adapter->up = torch::zeros(c.conv ? std::vector<int64_t>{out, rank, 1, 1} : std::vector<int64_t>{out, rank},
                               torch::TensorOptions(options_.dtype).device(options_.device))
                      .set_requires_grad(true);
    adapter->alpha = alpha;
    adapter->dropout = options_.dropout;
    adapter->rankDropout = a.rankDropout.value_or(0.0);
    adapter->moduleDropout = a.moduleDropout.value_or(0.0);
    adapter->multiplier = options_.multiplier;
    LoraModule m{name, c.path, component, models::Linear(nullptr), models::Conv2d(nullptr), adapter};
    if (c.linear) {
      c.linear->lora = adapter;
      m.linear = models::Linear(c.linear);
    } else {
      c.conv->lora = adapter;
      m.conv = models::Conv2d(c.conv);
    }
    modules_.push_back(std::move(m));
    ++attached;
  }
  return attached;
}

void LoraNetwork::detach() {
  for (LoraModule& m : modules_) {
    if (m.linear) {
      m.linear->lora.reset();
      m.linear->lycoris.reset();
    }
    if (m.conv) {
      m.conv->lora.reset();
      m.conv->lycoris.reset();
    }
  }
  modules_.clear();
}

size_t LoraNetwork::moduleCount(LoraComponent component) const {
  size_t n = 0;
  for (const LoraModule& m : modules_) n += m.component == component;
  return n;
}

const LoraModule* LoraNetwork::find(const std::string& name) const {
  for (const LoraModule& m : modules_)
    if (m.name == name) return &m;
  return nullptr;
}

std::vector<std::pair<std::string, torch::Tensor>> LoraModule::trainedTensors() const {
  if (lycoris) {
    std::vector<std::pair<std::string, torch::Tensor>> out;
    for (const std::string& n : lycoris->tensors.names)
      if (lycoris->tensors.trained.at(n)) out.emplace_back(n, lycoris->tensors.at(n));
    return out;
  }
  return {{"lora_down.weight", adapter->down}, {"lora_up.weight", adapter->up}};
}

std::vector<torch::Tensor> LoraNetwork::parameters() const {
  std::vector<torch::Tensor> params;
  params.reserve(modules_.size() * 2);
  for (const LoraModule& m : modules_)
    for (const auto& [name, t] : m.trainedTensors()) params.push_back(t);
  return params;
}

int64_t LoraNetwork::parameterCount() const {
  int64_t n = 0;
  for (const torch::Tensor& p : parameters()) n += p.numel();
  return n;
}

size_t LoraNetwork::textEncoderLrPlace(const LoraModule& m) const {
  const bool sd3 = networkModule_ == LoraNetworkModule::LoraSd3;
  if (m.component == LoraComponent::TextEncoder3) return sd3 ? 2 : 1;
  return sd3 && m.component == LoraComponent::TextEncoder2 ? 1 : 0;
}

bool LoraNetwork::readsTextEncoderLrAt(size_t place) const {
  for (const LoraModule& m : modules_)
    if (m.component != LoraComponent::Unet && textEncoderLrPlace(m) == place) return true;
  return false;
}

std::vector<LoraParamGroup> LoraNetwork::parameterGroups(std::optional<double> textEncoderLr, std::optional<double> unetLr,
                                                         double defaultLr, std::optional<double> t5xxlLr,
                                                         std::optional<double> sd3T5xxlLr) const {
  const LoraNetworkArgs& a = options_.args;
  // assemble_params: one group at lr, its lora_up in a "plus" group at lr * ratio under LoRA+.
  auto assemble = [&](const std::vector<const LoraModule*>& modules, const std::string& label, double lr,
                      std::optional<double> ratio, std::vector<LoraParamGroup>& out) {
    LoraParamGroup plain{label, lr, {}};
    LoraParamGroup plus{label + " plus", ratio ? lr * *ratio : lr, {}};
    // As assemble_params: a tensor whose name has "lora_up" goes to the plus group.
    for (const LoraModule* m : modules)
      for (const auto& [name, t] : m->trainedTensors())
        (ratio && name.find("lora_up") != std::string::npos ? plus : plain).params.push_back(t);
    for (LoraParamGroup* g : {&plain, &plus})
      if (!g->params.empty() && g->lr != 0.0) out.push_back(std::move(*g));
  };
  std::vector<const LoraModule*> unet, textEncoders[3];  // by the text_encoder_lr value they train at
  for (const LoraModule& m : modules_) (m.component == LoraComponent::Unet ? unet : textEncoders[textEncoderLrPlace(m)]).push_back(&m);
  std::vector<LoraParamGroup> groups;
  const std::optional<double> textEncoderRatio = a.loraplusTextEncoderLrRatio ? a.loraplusTextEncoderLrRatio : a.loraplusLrRatio;
  // Each value falls back to the one before it, as sd-scripts fills a shorter list.
  const double firstLr = textEncoderLr.value_or(defaultLr), secondLr = t5xxlLr.value_or(firstLr);
  assemble(textEncoders[0], "textencoder", firstLr, textEncoderRatio, groups);
  assemble(textEncoders[1], "textencoder 2", secondLr, textEncoderRatio, groups);
  assemble(textEncoders[2], "textencoder 3", sd3T5xxlLr.value_or(secondLr), textEncoderRatio, groups);
  const std::optional<double> unetRatio = a.loraplusUnetLrRatio ? a.loraplusUnetLrRatio : a.loraplusLrRatio;
  if (!a.blockLrWeight) {
    assemble(unet, "unet", unetLr.value_or(defaultLr), unetRatio, groups);
    return groups;
  }
  // Block lr weights: the UNet's modules by get_block_index, blocks in order of first appearance.
  std::vector<std::pair<int, std::vector<const LoraModule*>>> byBlock;
  for (const LoraModule* m : unet) {
    const int block = sdxlBlockIndex(m->name);
    auto it = std::find_if(byBlock.begin(), byBlock.end(), [&](const auto& b) { return b.first == block; });
    if (it == byBlock.end()) it = byBlock.insert(byBlock.end(), {block, {}});
    it->second.push_back(m);
  }
  for (const auto& [block, modules] : byBlock)
    assemble(modules, "unet_block" + std::to_string(block), unetLr.value_or(defaultLr) * blockEntry(*a.blockLrWeight, block),
             unetRatio, groups);
  return groups;
}

void LoraNetwork::setMultiplier(double multiplier) {
  options_.multiplier = multiplier;
  for (LoraModule& m : modules_) (m.lycoris ? m.lycoris->multiplier : m.adapter->multiplier) = multiplier;
}

void LoraNetwork::setTraining(bool training) {
  for (LoraModule& m : modules_) {
    if (m.linear) m.linear->train(training);
    if (m.conv) m.conv->train(training);
  }
}

std::vector<std::pair<std::string, torch::Tensor>> LoraNetwork::stateDict(torch::Dtype dtype) const {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  out.reserve(modules_.size() * 3);
  torch::NoGradGuard noGrad;
  for (const LoraModule& m : modules_) {
    if (m.lycoris) {
      appendLycorisState(m, dtype, out);
      continue;
    }
    // sd-scripts registers alpha as a buffer (a 0-dim tensor), saved in save_precision too.
    out.emplace_back(m.name + ".alpha", torch::tensor(static_cast<float>(m.adapter->alpha)).to(dtype));
    out.emplace_back(m.name + ".lora_down.weight", m.adapter->down.detach().to(torch::kCPU, dtype).contiguous());
    out.emplace_back(m.name + ".lora_up.weight", m.adapter->up.detach().to(torch::kCPU, dtype).contiguous());
  }
  return out;
}

LoraLoadReport LoraNetwork::loadStateDict(const std::map<std::string, torch::Tensor>& tensors,
                                          const std::string& source) {
  LoraLoadReport report;
  torch::NoGradGuard noGrad;
  std::map<std::string, bool> used;
  for (const auto& kv : tensors) used[kv.first] = false;

  auto copyInto = [&](const std::string& key, torch::Tensor& dst) {
    const torch::Tensor& src = tensors.at(key);
    if (src.sizes() != dst.sizes())
      throw LoraError(source + ": " + key + " has shape " + shapeText(src.sizes()) + ", the network expects " +
                      shapeText(dst.sizes()) +
                      " (network_dim " + std::to_string(options_.dim) +
                      "; dim_from_weights takes the rank from the file)");
    if (!src.is_floating_point())
      throw LoraError(source + ": " + key + " is stored as " + std::string(c10::toString(src.scalar_type())) +
                      ", which cannot hold the network's " + c10::toString(dst.scalar_type()) + " weights");
    dst.copy_(src.to(dst.device(), dst.scalar_type()));
    used[key] = true;
  };

  for (LoraModule& m : modules_) {
    if (m.lycoris) {
      report.loadedModules += loadLycorisModule(m, tensors, source, used, report);
      continue;
    }
    const std::string downKey = m.name + ".lora_down.weight";
    const std::string upKey = m.name + ".lora_up.weight";
    const std::string alphaKey = m.name + ".alpha";
    const bool hasDown = tensors.count(downKey) > 0, hasUp = tensors.count(upKey) > 0;
    if (!hasDown && !hasUp) {
      report.missing.push_back(m.name);
      continue;
    }
    if (hasDown != hasUp)
      throw LoraError(source + ": " + m.name + " has only " + (hasDown ? downKey : upKey) + ", not both weights");
    copyInto(downKey, m.adapter->down);
    copyInto(upKey, m.adapter->up);
    if (tensors.count(alphaKey)) {
      const torch::Tensor& a = tensors.at(alphaKey);
      if (a.numel() != 1) throw LoraError(source + ": " + alphaKey + " is not a scalar");
      const double fileAlpha = a.to(torch::kFloat64).item<double>();
      if (std::abs(fileAlpha - m.adapter->alpha) > 1e-6 * std::max(1.0, std::abs(fileAlpha)))
        report.warnings.push_back(m.name + ": alpha " + std::to_string(fileAlpha) + " from the file replaces " +
                                  std::to_string(m.adapter->alpha));
      m.adapter->alpha = fileAlpha;
      used[alphaKey] = true;
    }
    ++report.loadedModules;
  }
  for (const auto& [key, wasUsed] : used)
    if (!wasUsed) report.unexpected.push_back(key);
  return report;
}

}  // namespace sinter::network
