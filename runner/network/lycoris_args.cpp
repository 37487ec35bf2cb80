#include "network/lycoris_args.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <stdexcept>

#include "core/ascii_text.h"

namespace sinter::network {

namespace {

// LyCORIS's str_bool: str(value).lower() != "false".
bool strBool(const std::string& value) { return lowerAscii(value) != "false"; }

[[noreturn]] void bad(const std::string& key, const std::string& value, const std::string& why) {
  throw std::invalid_argument("network_args: " + key + "=" + value + " " + why);
}

double number(const std::string& key, const std::string& value) {
  try {
    const std::string v = trimAscii(value);
    size_t used = 0;
    const double d = std::stod(v, &used);
    if (used != v.size() || !std::isfinite(d)) throw std::invalid_argument(v);
    return d;
  } catch (const std::exception&) {
    bad(key, value, "is not a number");
  }
}

int64_t whole(const std::string& key, const std::string& value) {
  try {
    const std::string v = trimAscii(value);
    size_t used = 0;
    const long long i = std::stoll(v, &used);
    if (used != v.size()) throw std::invalid_argument(v);
    return i;
  } catch (const std::exception&) {
    bad(key, value, "is not a whole number");
  }
}

double probability(const std::string& key, const std::string& value) {
  const double p = value.empty() ? 0.0 : number(key, value);  // float(value or 0.0)
  if (p < 0.0 || p >= 1.0) bad(key, value, "is not in [0, 1)");
  return p;
}

// LyCORIS options this build does not train, and why.
const std::map<std::string, std::string>& refusedKeys() {
  static const std::map<std::string, std::string> why{
      {"wd_on_output", "DoRA with norms over input channels (wd_on_output=False) is not implemented in this build"},
      {"full_matrix", "LoKr's full_matrix mode is not implemented in this build"},
      {"rs_lora", "rank-stabilised scaling (rs_lora) is not implemented in this build"},
      {"unbalanced_factorization", "LoKr's unbalanced_factorization is not implemented in this build"},
      {"constraint", "belongs to algo=diag-oft/boft, which this build does not train"},
      {"constrain", "belongs to algo=diag-oft/boft, which this build does not train"},
      {"rescaled", "belongs to algo=diag-oft/boft, which this build does not train"},
      {"block_size", "belongs to algo=dylora, which this build does not train"},
      {"train_t5xxl", "LyCORIS modules on FLUX's T5-XXL are not implemented in this build (networks.lora_flux trains T5-XXL's LoRA)"},
  };
  return why;
}

}  // namespace

const std::vector<std::string>& supportedLycorisArgs() {
  static const std::vector<std::string> keys = {
      "algo", "preset", "conv_dim", "conv_alpha", "dropout", "rank_dropout", "module_dropout", "use_tucker", "use_cp",
      "use_conv_cp", "disable_conv_cp", "use_scalar", "decompose_both", "factor", "dora_wd", "bypass_mode", "train_norm",
      "rank_dropout_scale", "train_on_input", "loraplus_lr_ratio", "loraplus_unet_lr_ratio",
      "loraplus_text_encoder_lr_ratio"};
  return keys;
}

LycorisArgs parseLycorisArgs(const std::vector<std::pair<std::string, std::string>>& args) {
  LycorisArgs out;
  // create_network: deprecated names overwrite use_tucker; then the first set of use_conv_cp,
  // use_cp, use_tucker (a non-empty string) decides, through str_bool.
  std::map<std::string, std::string> given;
  for (const auto& [key, value] : args) {
    given[key] = value;
    if (key == "use_cp" || key == "use_conv_cp" || key == "disable_conv_cp") given["use_tucker"] = value;
  }
  for (const char* key : {"use_conv_cp", "use_cp", "use_tucker"}) {
    auto it = given.find(key);
    if (it != given.end() && !it->second.empty()) {
      out.useTucker = strBool(it->second);
      break;
    }
  }
  for (const auto& [key, value] : args) {
    if (key == "algo") {
      const std::string algo = lowerAscii(trimAscii(value));
      if (algo.empty() || algo == "lora" || algo == "locon") out.algo = models::LycorisAlgo::LoCon;
      else if (algo == "loha") out.algo = models::LycorisAlgo::LoHa;
      else if (algo == "lokr") out.algo = models::LycorisAlgo::LoKr;
      else if (algo == "ia3") out.algo = models::LycorisAlgo::IA3;
      else if (algo == "full") out.algo = models::LycorisAlgo::Full;
      else if (algo == "dylora" || algo == "glora" || algo == "diag-oft" || algo == "boft")
        bad(key, value, "is not trained by this build: of LyCORIS's algorithms it trains locon (lora), loha, lokr, ia3 and full");
      else
        bad(key, value, "is not one of LyCORIS's algorithms (lora, locon, loha, lokr, ia3, full, dylora, glora, diag-oft, boft)");
    } else if (key == "preset") {
      const std::optional<LycorisPreset> preset = parseLycorisPreset(trimAscii(value));
      if (preset) {
        out.preset = *preset;
      } else if (value == "ia3") {
        bad(key, value, "is not supported: LyCORIS's ia3 preset names modules by their last names (to_k, to_v, ff.net.2), "
                        "which its match against full module paths never finds in sd-scripts' SDXL and FLUX models; use "
                        "preset=attn-mlp or another with algo=ia3");
      } else {
        std::string names;
        for (const std::string& n : lycorisPresetNames()) names += (names.empty() ? "" : ", ") + n;
        bad(key, value, "is not a preset this build knows (" + names + "); preset files are not read");
      }
    } else if (key == "conv_dim") {
      if (!value.empty()) {
        out.convDim = whole(key, value);
        if (*out.convDim < 0) bad(key, value, "is negative");
      }
    } else if (key == "conv_alpha") {
      if (!value.empty()) out.convAlpha = number(key, value);
    } else if (key == "dropout") {
      out.dropout = probability(key, value);
    } else if (key == "rank_dropout") {
      out.rankDropout = probability(key, value);
    } else if (key == "module_dropout") {
      out.moduleDropout = probability(key, value);
    } else if (key == "use_tucker" || key == "use_cp" || key == "use_conv_cp" || key == "disable_conv_cp") {
      // read above
    } else if (key == "use_scalar") {
      out.useScalar = strBool(value);
    } else if (key == "decompose_both") {
      out.decomposeBoth = !value.empty();  // LyCORIS passes the string on and tests its truth
    } else if (key == "factor") {
      out.factor = whole(key, value);
      if (out.factor == 0) bad(key, value, "must be -1 (balanced) or a positive factor");
    } else if (key == "dora_wd") {
      out.doraWd = strBool(value);
    } else if (key == "bypass_mode") {
      out.bypassMode = strBool(value);
    } else if (key == "train_norm") {
      if (strBool(value))
        bad(key, value, "is not supported by this build: LyCORIS's norm modules (w_norm/b_norm on the GroupNorm and "
                        "LayerNorm layers) are not implemented; use train_norm=False");
    } else if (key == "rank_dropout_scale" || key == "train_on_input") {
      out.unread.push_back(key);
    } else if (key == "loraplus_lr_ratio" || key == "loraplus_unet_lr_ratio" || key == "loraplus_text_encoder_lr_ratio") {
      // the caller's
    } else if (auto refused = refusedKeys().find(key); refused != refusedKeys().end()) {
      bad(key, value, "is not supported: " + refused->second);
    } else {
      std::string keys;
      for (const std::string& k : supportedLycorisArgs()) keys += (keys.empty() ? "" : ", ") + k;
      throw std::invalid_argument("network_args: '" + key + "' is not an argument of lycoris.kohya this build reads (supported: " +
                                  keys + ")");
    }
  }
  if (out.algo == models::LycorisAlgo::Full && out.bypassMode)
    throw std::invalid_argument("network_args: bypass_mode=True with algo=full: LyCORIS refuses it (\"bypass mode is not "
                                "supported in Full algo\")");
  if (out.doraWd && out.bypassMode &&
      (out.algo == models::LycorisAlgo::LoCon || out.algo == models::LycorisAlgo::LoHa || out.algo == models::LycorisAlgo::LoKr))
    throw std::invalid_argument("network_args: dora_wd=True with bypass_mode=True: LyCORIS's bypass forward leaves the "
                                "weight decomposition out, so dora_scale would never train; choose one");
  return out;
}

std::string lycorisDimFromWeightsRefusal() {
  return "dim_from_weights is not supported with network_module = \"lycoris.kohya\" in this build: the module shapes come "
         "from network_dim, conv_dim and network_args, and network_weights loads into them";
}

}  // namespace sinter::network
