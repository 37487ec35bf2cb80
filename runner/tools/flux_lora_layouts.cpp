#include "tools/flux_lora_layouts.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>
#include <stdexcept>

#include "network/lora_targets.h"

namespace sinter::tools {

namespace {

// One kohya module and the diffusers modules it stands for (several where BFL fuses them).
struct ModuleMap {
  std::string kohya;
  std::vector<std::string> diffusers;
};

// convert_flux_lora.py's table, for the blocks the file has (sd-scripts fixes 19 and 38), and the
// embedders' one-to-one modules.
std::vector<ModuleMap> moduleMaps(int64_t doubles, int64_t singles) {
  std::vector<ModuleMap> maps;
  for (int64_t i = 0; i < doubles; ++i) {
    const std::string k = "lora_unet_double_blocks_" + std::to_string(i) + "_", d = "transformer_blocks." + std::to_string(i) + ".";
    maps.push_back({k + "img_attn_proj", {d + "attn.to_out.0"}});
    maps.push_back({k + "img_attn_qkv", {d + "attn.to_q", d + "attn.to_k", d + "attn.to_v"}});
    maps.push_back({k + "img_mlp_0", {d + "ff.net.0.proj"}});
    maps.push_back({k + "img_mlp_2", {d + "ff.net.2"}});
    maps.push_back({k + "img_mod_lin", {d + "norm1.linear"}});
    maps.push_back({k + "txt_attn_proj", {d + "attn.to_add_out"}});
    maps.push_back({k + "txt_attn_qkv", {d + "attn.add_q_proj", d + "attn.add_k_proj", d + "attn.add_v_proj"}});
    maps.push_back({k + "txt_mlp_0", {d + "ff_context.net.0.proj"}});
    maps.push_back({k + "txt_mlp_2", {d + "ff_context.net.2"}});
    maps.push_back({k + "txt_mod_lin", {d + "norm1_context.linear"}});
  }
  for (int64_t i = 0; i < singles; ++i) {
    const std::string k = "lora_unet_single_blocks_" + std::to_string(i) + "_", d = "single_transformer_blocks." + std::to_string(i) + ".";
    maps.push_back({k + "linear1", {d + "attn.to_q", d + "attn.to_k", d + "attn.to_v", d + "proj_mlp"}});
    maps.push_back({k + "linear2", {d + "proj_out"}});
    maps.push_back({k + "modulation_lin", {d + "norm.linear"}});
  }
  maps.push_back({"lora_unet_img_in", {"x_embedder"}});
  maps.push_back({"lora_unet_txt_in", {"context_embedder"}});
  maps.push_back({"lora_unet_time_in_in_layer", {"time_text_embed.timestep_embedder.linear_1"}});
  maps.push_back({"lora_unet_time_in_out_layer", {"time_text_embed.timestep_embedder.linear_2"}});
  maps.push_back({"lora_unet_vector_in_in_layer", {"time_text_embed.text_embedder.linear_1"}});
  maps.push_back({"lora_unet_vector_in_out_layer", {"time_text_embed.text_embedder.linear_2"}});
  maps.push_back({"lora_unet_guidance_in_in_layer", {"time_text_embed.guidance_embedder.linear_1"}});
  maps.push_back({"lora_unet_guidance_in_out_layer", {"time_text_embed.guidance_embedder.linear_2"}});
  return maps;
}

// The number of blocks named after `marker` + index in any key (the largest index + 1); "single_"
// before a marker makes it another marker's.
int64_t blockCount(const std::map<std::string, torch::Tensor>& tensors, const std::string& marker, bool excludeSingle) {
  int64_t count = 0;
  for (const auto& [key, value] : tensors) {
    for (size_t at = key.find(marker); at != std::string::npos; at = key.find(marker, at + 1)) {
      if (excludeSingle && at >= 7 && key.compare(at - 7, 7, "single_") == 0) continue;
      size_t end = at + marker.size();
      int64_t index = 0;
      bool digits = false;
      while (end < key.size() && std::isdigit(static_cast<unsigned char>(key[end]))) {
        index = index * 10 + (key[end++] - '0');
        digits = true;
      }
      if (digits) count = std::max(count, index + 1);
    }
  }
  return count;
}

std::string underscored(std::string path) {
  std::replace(path.begin(), path.end(), '.', '_');
  return path;
}

// A module's factors: delta = scale · up·down.
struct Factors {
  torch::Tensor down, up;
  double scale = 1.0;
};

class LayoutReader {
 public:
  LayoutReader(const std::map<std::string, torch::Tensor>& tensors, FluxLoraLayout layout) : tensors_(tensors), layout_(layout) {
    if (layout == FluxLoraLayout::Diffusers) {
      for (const auto& kv : tensors)
        if (kv.first.rfind("transformer.", 0) == 0) prefix_ = "transformer.";
    }
  }

  // The transformer's module `name` (a kohya name, or a diffusers path) in the reader's layout.
  std::optional<Factors> read(const std::string& name) {
    if (layout_ == FluxLoraLayout::Diffusers) return readAt(prefix_ + name);
    return readAt(layout_ == FluxLoraLayout::OneTrainer ? "lora_transformer_" + underscored(name) : name);
  }

  // The module whose keys start with `base` (lora_A/lora_B in diffusers' layout, else lora_down/lora_up;
  // alpha where there is one).
  std::optional<Factors> readAt(const std::string& base) {
    const bool diffusers = layout_ == FluxLoraLayout::Diffusers;
    const std::string down = base + (diffusers ? ".lora_A.weight" : ".lora_down.weight");
    const std::string up = base + (diffusers ? ".lora_B.weight" : ".lora_up.weight");
    const auto d = tensors_.find(down), u = tensors_.find(up);
    if (d == tensors_.end() || u == tensors_.end()) return std::nullopt;
    Factors f{d->second, u->second, 1.0};
    used_.insert({down, up});
    if (const auto a = tensors_.find(base + ".alpha"); a != tensors_.end()) {
      f.scale = a->second.to(torch::kFloat64).item<double>() / static_cast<double>(f.down.size(0));
      used_.insert(a->first);
    }
    return f;
  }

  std::vector<std::string> unused() const {
    std::vector<std::string> out;
    for (const auto& kv : tensors_)
      if (!used_.count(kv.first)) out.push_back(kv.first);
    return out;
  }

 private:
  const std::map<std::string, torch::Tensor>& tensors_;
  FluxLoraLayout layout_;
  std::string prefix_;
  std::set<std::string> used_;
};

// Separate modules into kohya's fused one: downs stacked, ups block-diagonal (each with its own
// scale folded in), alpha = the summed rank, so the scale is 1.
void writeKohya(std::map<std::string, torch::Tensor>& out, const std::string& name, const std::vector<Factors>& parts) {
  const torch::Tensor& first = parts.front().down;
  if (parts.size() == 1 && parts.front().scale == 1.0) {
    out[name + ".lora_down.weight"] = parts.front().down;
    out[name + ".lora_up.weight"] = parts.front().up;
    out[name + ".alpha"] = torch::scalar_tensor(static_cast<double>(first.size(0)), first.options());
    return;
  }
  int64_t rows = 0, rank = 0;
  std::vector<torch::Tensor> downs;
  for (const Factors& f : parts) {
    rows += f.up.size(0);
    rank += f.down.size(0);
    downs.push_back(f.down);
  }
  torch::Tensor up = torch::zeros({rows, rank}, parts.front().up.options());
  int64_t row = 0, column = 0;
  for (const Factors& f : parts) {
    up.narrow(0, row, f.up.size(0)).narrow(1, column, f.down.size(0)).copy_(f.up.to(torch::kFloat64).mul(f.scale));
    row += f.up.size(0);
    column += f.down.size(0);
  }
  out[name + ".lora_down.weight"] = torch::cat(downs, 0);
  out[name + ".lora_up.weight"] = up;
  out[name + ".alpha"] = torch::scalar_tensor(static_cast<double>(rank), first.options());
}

// A layout without alpha takes kohya's scale alpha/rank into the factors: split between down and up
// by powers of two, as convert_flux_lora.py's loop does (it leaves scale < 1 on down).
std::pair<double, double> foldedScale(double scale) {
  double scaleDown = scale, scaleUp = 1.0;
  while (scaleDown * 2 < scaleUp) {
    scaleDown *= 2;
    scaleUp /= 2;
  }
  return {scaleDown, scaleUp};
}

// Kohya's module into the separate ones, as convert_flux_lora.py's convert_to_ai_toolkit(_cat):
// the scale alpha/rank split between down and up by powers of two (for a layout without alpha),
// and a fused module's up split by rows: block-diagonal ones split their rank too, others repeat
// the down for every part. `keepAlpha` (OneTrainer) writes alpha instead of folding the scale.
void writeSeparate(std::map<std::string, torch::Tensor>& out, const ModuleMap& map, const Factors& f, FluxLoraLayout layout) {
  const bool keepAlpha = layout == FluxLoraLayout::OneTrainer;
  const int64_t rank = f.down.size(0);
  const auto [scaleDown, scaleUp] = foldedScale(keepAlpha ? 1.0 : f.scale);
  const torch::Tensor down = scaleDown == 1.0 ? f.down : f.down * scaleDown;
  const torch::Tensor up = scaleUp == 1.0 ? f.up : f.up * scaleUp;
  const int64_t parts = static_cast<int64_t>(map.diffusers.size());
  std::vector<int64_t> dims(parts, up.size(0) / parts);
  if (parts == 4) {  // linear1: q, k, v at the hidden size, then the MLP's input
    const int64_t hidden = down.size(1);
    dims = {hidden, hidden, hidden, up.size(0) - 3 * hidden};
  }
  bool sparse = parts > 1 && rank % parts == 0;
  const int64_t partRank = sparse ? rank / parts : rank;
  if (sparse) {
    int64_t row = 0;
    for (int64_t j = 0; j < parts; ++j) {
      for (int64_t k = 0; k < parts; ++k)
        if (j != k) sparse = sparse && up.narrow(0, row, dims[j]).narrow(1, k * partRank, partRank).eq(0).all().item<bool>();
      row += dims[j];
    }
  }
  int64_t row = 0;
  for (int64_t j = 0; j < parts; ++j) {
    const std::string& path = map.diffusers[j];
    const std::string base = keepAlpha ? "lora_transformer_" + underscored(path) : "transformer." + path;
    const std::string downKey = base + (keepAlpha ? ".lora_down.weight" : ".lora_A.weight");
    const std::string upKey = base + (keepAlpha ? ".lora_up.weight" : ".lora_B.weight");
    const torch::Tensor rows = up.narrow(0, row, dims[j]);
    if (sparse) {
      out[downKey] = down.narrow(0, j * partRank, partRank).contiguous();
      out[upKey] = rows.narrow(1, j * partRank, partRank).contiguous();
    } else {
      out[downKey] = down.contiguous();
      out[upKey] = rows.contiguous();
    }
    if (keepAlpha) {
      const int64_t written = out[downKey].size(0);
      out[base + ".alpha"] = torch::scalar_tensor(f.scale * static_cast<double>(written), f.down.options());
    }
    row += dims[j];
  }
}

// The text encoders' modules, one to one in every layout, only named apart: kohya's lora_te1_ (CLIP-L)
// and lora_te3_ (T5-XXL, networks.lora_flux), OneTrainer's lora_te1_ and lora_te2_, both with the
// module path's '.' as '_' and lora_down / lora_up / alpha; diffusers' "text_encoder." and
// "text_encoder_2." with the path itself and lora_A / lora_B (alpha optional).
struct TextEncoderModule {
  bool t5 = false;
  std::string path;  // dotted: text_model.encoder.layers.0.self_attn.q_proj, encoder.block.0.layer.0.SelfAttention.q
};

// A '_' name's dotted path: CLIP-L's and T5's Linears are the only modules any of the trainers targets.
std::optional<std::string> dottedTextEncoderPath(bool t5, const std::string& name) {
  static const std::regex clip("text_model_encoder_layers_(\\d+)_(self_attn_(q|k|v|out)_proj|mlp_(fc1|fc2))");
  static const std::regex t5Attention("encoder_block_(\\d+)_layer_0_SelfAttention_(q|k|v|o)");
  static const std::regex t5Mlp("encoder_block_(\\d+)_layer_1_DenseReluDense_(wi_0|wi_1|wo)");
  std::smatch m;
  if (!t5 && std::regex_match(name, m, clip)) {
    const std::string child = m[3].matched ? "self_attn." + m[3].str() + "_proj" : "mlp." + m[4].str();
    return "text_model.encoder.layers." + m[1].str() + "." + child;
  }
  if (t5 && std::regex_match(name, m, t5Attention)) return "encoder.block." + m[1].str() + ".layer.0.SelfAttention." + m[2].str();
  if (t5 && std::regex_match(name, m, t5Mlp)) return "encoder.block." + m[1].str() + ".layer.1.DenseReluDense." + m[2].str();
  return std::nullopt;
}

std::string textEncoderBase(const TextEncoderModule& module, FluxLoraLayout layout) {
  switch (layout) {
    case FluxLoraLayout::Kohya:
      return network::kohyaLoraName(module.t5 ? network::LoraComponent::TextEncoder3 : network::LoraComponent::TextEncoder1, module.path);
    case FluxLoraLayout::OneTrainer: return (module.t5 ? "lora_te2_" : "lora_te1_") + underscored(module.path);
    case FluxLoraLayout::Diffusers: return (module.t5 ? "text_encoder_2." : "text_encoder.") + module.path;
  }
  return module.path;
}

// The text-encoder module a key of `layout` belongs to (any of its tensors), or nullopt.
std::optional<TextEncoderModule> textEncoderModule(const std::string& key, FluxLoraLayout layout) {
  if (layout == FluxLoraLayout::Diffusers) {
    for (const bool t5 : {true, false}) {
      const std::string prefix = t5 ? "text_encoder_2." : "text_encoder.";
      if (key.rfind(prefix, 0) != 0) continue;
      for (const char* suffix : {".lora_A.weight", ".lora_B.weight", ".alpha"}) {
        const std::string tail(suffix);
        if (key.size() > prefix.size() + tail.size() && key.compare(key.size() - tail.size(), tail.size(), tail) == 0) {
          const std::string path = key.substr(prefix.size(), key.size() - prefix.size() - tail.size());
          if (dottedTextEncoderPath(t5, underscored(path)) == path) return TextEncoderModule{t5, path};
        }
      }
    }
    return std::nullopt;
  }
  const std::string module = key.substr(0, key.find('.'));
  for (const bool t5 : {false, true}) {
    const std::string prefix = !t5 ? "lora_te1_" : layout == FluxLoraLayout::Kohya ? "lora_te3_" : "lora_te2_";
    if (module.rfind(prefix, 0) != 0) continue;
    if (std::optional<std::string> path = dottedTextEncoderPath(t5, module.substr(prefix.size()))) return TextEncoderModule{t5, *path};
  }
  return std::nullopt;
}

// The text encoders' modules among the keys the transformer's conversion left, read by the same
// reader (so its unused() is what neither took), renamed from `from` to `to`; alpha kept, or folded
// into the factors for diffusers' layout as writeSeparate does.
void convertTextEncoderModules(LayoutReader& reader, FluxLoraLayout from, FluxLoraLayout to, ConvertedLora& out) {
  std::map<std::string, TextEncoderModule> modules;  // by their base name in `from`
  for (const std::string& key : reader.unused())
    if (std::optional<TextEncoderModule> module = textEncoderModule(key, from)) modules.emplace(textEncoderBase(*module, from), *module);
  for (const auto& [base, module] : modules) {
    const std::optional<Factors> f = reader.readAt(base);
    if (!f) continue;
    const std::string target = textEncoderBase(module, to);
    if (to == FluxLoraLayout::Diffusers) {
      const auto [scaleDown, scaleUp] = foldedScale(f->scale);
      out.tensors[target + ".lora_A.weight"] = scaleDown == 1.0 ? f->down : f->down * scaleDown;
      out.tensors[target + ".lora_B.weight"] = scaleUp == 1.0 ? f->up : f->up * scaleUp;
    } else {
      out.tensors[target + ".lora_down.weight"] = f->down;
      out.tensors[target + ".lora_up.weight"] = f->up;
      out.tensors[target + ".alpha"] = torch::scalar_tensor(f->scale * static_cast<double>(f->down.size(0)), f->down.options());
    }
  }
}

}  // namespace

FluxLoraLayout parseFluxLoraLayout(const std::string& name) {
  if (name == "sd-scripts" || name == "kohya") return FluxLoraLayout::Kohya;
  if (name == "ai-toolkit" || name == "diffusers") return FluxLoraLayout::Diffusers;
  if (name == "onetrainer") return FluxLoraLayout::OneTrainer;
  throw std::invalid_argument("'" + name + "' is no FLUX LoRA layout: sd-scripts, ai-toolkit (or diffusers), onetrainer");
}

const char* fluxLoraLayoutName(FluxLoraLayout layout) {
  switch (layout) {
    case FluxLoraLayout::Kohya: return "sd-scripts";
    case FluxLoraLayout::Diffusers: return "ai-toolkit/diffusers";
    case FluxLoraLayout::OneTrainer: return "OneTrainer";
  }
  return "sd-scripts";
}

std::optional<FluxLoraLayout> detectOtherFluxLoraLayout(const std::map<std::string, torch::Tensor>& tensors) {
  for (const auto& [key, value] : tensors) {
    if (key.rfind("lora_transformer_", 0) == 0) return FluxLoraLayout::OneTrainer;
    if (key.find("transformer_blocks.") != std::string::npos && key.find(".lora_A.") != std::string::npos)
      return FluxLoraLayout::Diffusers;
  }
  return std::nullopt;
}

ConvertedLora convertFluxLora(const std::map<std::string, torch::Tensor>& tensors, FluxLoraLayout from, FluxLoraLayout to) {
  torch::NoGradGuard noGrad;
  if (from == to) return {tensors, {}};
  if (from != FluxLoraLayout::Kohya && to != FluxLoraLayout::Kohya) {
    ConvertedLora kohya = convertFluxLora(tensors, from, FluxLoraLayout::Kohya);
    ConvertedLora out = convertFluxLora(kohya.tensors, FluxLoraLayout::Kohya, to);
    out.unconverted.insert(out.unconverted.end(), kohya.unconverted.begin(), kohya.unconverted.end());
    return out;
  }
  // Block counts from any of the three namings (kohya's, diffusers' with '.', OneTrainer's with '_').
  const int64_t doubles = std::max({blockCount(tensors, "double_blocks_", false), blockCount(tensors, "transformer_blocks.", true),
                                    blockCount(tensors, "transformer_blocks_", true)});
  const int64_t singles = std::max({blockCount(tensors, "single_blocks_", false), blockCount(tensors, "single_transformer_blocks.", false),
                                    blockCount(tensors, "single_transformer_blocks_", false)});
  LayoutReader reader(tensors, from);
  ConvertedLora out;
  for (const ModuleMap& map : moduleMaps(doubles, singles)) {
    if (to == FluxLoraLayout::Kohya) {
      std::vector<Factors> parts;
      for (const std::string& path : map.diffusers)
        if (std::optional<Factors> f = reader.read(path)) parts.push_back(*f);
      if (parts.empty()) continue;
      if (parts.size() != map.diffusers.size())
        throw std::invalid_argument(map.kohya + ": the file has " + std::to_string(parts.size()) + " of the " +
                                    std::to_string(map.diffusers.size()) + " modules it fuses (" + map.diffusers.front() + ", ...)");
      writeKohya(out.tensors, map.kohya, parts);
    } else if (std::optional<Factors> f = reader.read(map.kohya)) {
      writeSeparate(out.tensors, map, *f, to);
    }
  }
  convertTextEncoderModules(reader, from, to, out);
  out.unconverted = reader.unused();
  return out;
}

}  // namespace sinter::tools
