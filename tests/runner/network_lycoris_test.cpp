// lycoris.kohya: the modules each preset puts on the full-size SDXL, FLUX and SD 3.x models, network_args
// read as LyCORIS reads them, and files written and read back with LyCORIS's keys.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <unistd.h>

#include "io/safetensors.h"
#include "models/text_encoders/clip_text_model.h"
#include "models/flux/flux_layout.h"
#include "models/sd3/sd3_mmdit_config.h"
#include "models/sd3/sd3_mmdit_layout.h"
#include "models/text_encoders/t5_encoder.h"
#include "models/unet/sdxl_unet_layout.h"
#include "network/lora_file.h"
#include "network/lora_network.h"
#include "network/lycoris_targets.h"
#include "unet_layer_paths.h"

namespace fs = std::filesystem;
using namespace sinter;
using namespace sinter::network;
using sinter::test::linearsOf;
using sinter::test::unetLayerPaths;

namespace {

std::vector<LayerPath> sdxlUnetLayers() { return unetLayerPaths(models::SdxlUnetConfig::full()); }

std::set<std::string> names(LycorisPreset preset, LoraNetworkModule module, LoraComponent component, const std::vector<LayerPath>& layers,
                            int64_t convDim = 4) {
  const std::vector<bool> chosen = lycorisSelect(preset, module, component, layers, convDim);
  std::set<std::string> out;
  for (size_t i = 0; i < layers.size(); ++i)
    if (chosen[i]) out.insert(kohyaLoraName(component, layers[i].path));
  return out;
}

}  // namespace

// Counts derived from lycoris/config.py's PRESET and the classes of sd-scripts' models
// (library/sdxl_original_unet.py, flux_models.py, transformers' CLIP): the SDXL UNet has 70
// BasicTransformerBlocks in 11 Transformer2DModels (722 Linears, attn1/attn2 560 of them), 17
// ResnetBlock2Ds (17 emb_layers.1 Linears, 34 3x3 convs, 11 1x1 skip convs), 2 Downsample2Ds and
// 2 Upsample2Ds; CLIP-L 12 and bigG 32 layers of 4 attention and 2 MLP Linears; FLUX.1 19
// DoubleStreamBlocks (10 Linears, 4 in SelfAttentions) and 38 SingleStreamBlocks (3 Linears).
TEST(LycorisTargets, FullSizeModuleSetsPerPreset) {
  const std::vector<LayerPath> unet = sdxlUnetLayers();
  const std::vector<LayerPath> clipL = linearsOf(models::clipTextLinearLayers(models::ClipTextConfig::sdxlClipL()));
  const std::vector<LayerPath> bigG = linearsOf(models::clipTextLinearLayers(models::ClipTextConfig::sdxlOpenClipBigG()));
  const std::vector<LayerPath> flux = linearsOf(models::fluxTransformerLinearLayers(models::FluxConfig::dev()));
  struct Row {
    LycorisPreset preset;
    size_t sdxlUnet, te1, te2, fluxUnet;
  };
  const std::vector<Row> rows{{LycorisPreset::Full, 788, 72, 192, 304},
                              {LycorisPreset::FullLin, 750, 72, 192, 304},
                              {LycorisPreset::AttnMlp, 722, 72, 192, 304},
                              {LycorisPreset::AttnOnly, 560, 48, 128, 76},
                              {LycorisPreset::UnetTransformerOnly, 722, 0, 0, 304},
                              {LycorisPreset::UnetConvblockOnly, 66, 0, 0, 0}};
  for (const Row& r : rows) {
    SCOPED_TRACE(lycorisPresetNames()[static_cast<size_t>(r.preset)]);
    EXPECT_EQ(names(r.preset, LoraNetworkModule::Lora, LoraComponent::Unet, unet).size(), r.sdxlUnet);
    EXPECT_EQ(names(r.preset, LoraNetworkModule::Lora, LoraComponent::TextEncoder1, clipL).size(), r.te1);
    EXPECT_EQ(names(r.preset, LoraNetworkModule::Lora, LoraComponent::TextEncoder2, bigG).size(), r.te2);
    EXPECT_EQ(names(r.preset, LoraNetworkModule::LoraFlux, LoraComponent::Unet, flux).size(), r.fluxUnet);
    EXPECT_EQ(names(r.preset, LoraNetworkModule::LoraFlux, LoraComponent::TextEncoder1, clipL).size(), r.te1);
  }
  const std::set<std::string> full = names(LycorisPreset::Full, LoraNetworkModule::Lora, LoraComponent::Unet, unet);
  for (const char* n : {"lora_unet_input_blocks_1_0_in_layers_2", "lora_unet_input_blocks_1_0_emb_layers_1",
                        "lora_unet_input_blocks_4_0_skip_connection", "lora_unet_input_blocks_3_0_op",
                        "lora_unet_output_blocks_2_2_conv", "lora_unet_middle_block_1_transformer_blocks_9_ff_net_2",
                        "lora_unet_output_blocks_8_0_out_layers_3"})
    EXPECT_TRUE(full.count(n)) << n;
  for (const char* n : {"lora_unet_input_blocks_0_0", "lora_unet_out_2", "lora_unet_time_embed_0", "lora_unet_label_emb_0_0"})
    EXPECT_FALSE(full.count(n)) << n;  // conv_in, conv_out and the embeddings are no target class's
  // full-lin keeps the ResBlocks' Linears and 1x1 convs, not their 3x3 convs; conv_dim 0 does the same to full.
  const std::set<std::string> lin = names(LycorisPreset::FullLin, LoraNetworkModule::Lora, LoraComponent::Unet, unet);
  EXPECT_TRUE(lin.count("lora_unet_input_blocks_4_0_skip_connection"));
  EXPECT_FALSE(lin.count("lora_unet_input_blocks_1_0_in_layers_2"));
  EXPECT_EQ(names(LycorisPreset::Full, LoraNetworkModule::Lora, LoraComponent::Unet, unet, 0).size(), 750u);
  const std::set<std::string> attn = names(LycorisPreset::AttnOnly, LoraNetworkModule::LoraFlux, LoraComponent::Unet, flux);
  EXPECT_TRUE(attn.count("lora_unet_double_blocks_0_img_attn_qkv"));
  EXPECT_TRUE(attn.count("lora_unet_double_blocks_18_txt_attn_proj"));
  EXPECT_FALSE(attn.count("lora_unet_double_blocks_0_img_mlp_0"));
  EXPECT_FALSE(attn.count("lora_unet_single_blocks_0_linear1"));
}

// The module lists LyCORIS's own create_network makes on sd-scripts' models, per preset, as
// tests/gpu/lycoris_module_lists.py wrote them (LyCORIS f49d30d; sd-scripts' SDXL UNet, CLIP-L,
// bigG, FLUX.1-dev and the SD 3 Medium, SD 3.5 Medium and SD 3.5 Large MMDiTs with CLIP-L, CLIP-G
// and T5-XXL, built on the meta device; CLIP under its text_model level, as sd-scripts'
// transformers names it): "<lora name> <kernel>" per line, 0 for a Linear.
TEST(LycorisTargets, ModuleListsEqualLycorisOwn) {
  const std::vector<LayerPath> clipL = linearsOf(models::clipTextLinearLayers(models::ClipTextConfig::sdxlClipL()));
  const std::vector<LayerPath> bigG = linearsOf(models::clipTextLinearLayers(models::ClipTextConfig::sdxlOpenClipBigG()));
  const std::vector<LayerPath> t5 = linearsOf(models::t5EncoderLinearLayers(models::T5EncoderConfig::xxl()));
  struct Listed {
    std::string file;  // the files' prefix
    LoraNetworkModule module;
    std::vector<std::pair<LoraComponent, std::vector<LayerPath>>> models;
    bool everyPreset;  // else "full" only
  };
  using C = LoraComponent;
  auto sd3 = [&](const char* file, const models::Sd3MmditConfig& config, bool everyPreset) {
    return Listed{file, LoraNetworkModule::LoraSd3,
                  {{C::Unet, linearsOf(models::sd3MmditLinearLayers(config))}, {C::TextEncoder1, clipL}, {C::TextEncoder2, bigG},
                   {C::TextEncoder3, t5}},
                  everyPreset};
  };
  const std::vector<Listed> listed{
      {"sdxl", LoraNetworkModule::Lora, {{C::Unet, sdxlUnetLayers()}, {C::TextEncoder1, clipL}, {C::TextEncoder2, bigG}}, true},
      {"flux", LoraNetworkModule::LoraFlux,
       {{C::Unet, linearsOf(models::fluxTransformerLinearLayers(models::FluxConfig::dev()))}, {C::TextEncoder1, clipL}}, true},
      sd3("sd3_medium", models::Sd3MmditConfig::sd3Medium(), false),
      sd3("sd35_medium", models::Sd3MmditConfig::sd35Medium(), true),
      sd3("sd35_large", models::Sd3MmditConfig::sd35Large(), false)};
  size_t files = 0;
  for (const Listed& l : listed) {
    for (size_t p = 0; p < lycorisPresetNames().size(); ++p) {
      for (const int64_t convDim : {int64_t{4}, int64_t{0}}) {
        const LycorisPreset preset = static_cast<LycorisPreset>(p);
        if ((preset != LycorisPreset::Full && !l.everyPreset) || (convDim == 0 && (preset != LycorisPreset::Full || !l.everyPreset)) ||
            (convDim == 0 && l.module == LoraNetworkModule::LoraSd3))
          continue;
        const std::string name = l.file + "_" + lycorisPresetNames()[p] + (convDim == 0 ? "_conv_dim_0" : "");
        SCOPED_TRACE(name);
        const fs::path file = fs::path(SINTER_TEST_DATA_DIR) / "lycoris" / (name + ".txt");
        std::ifstream in(file);
        ASSERT_TRUE(in) << file;
        std::set<std::string> theirs;
        for (std::string line; std::getline(in, line);)
          if (!line.empty()) theirs.insert(line);
        std::set<std::string> ours;
        for (const auto& [component, layers] : l.models) {
          const std::vector<bool> chosen = lycorisSelect(preset, l.module, component, layers, convDim);
          for (size_t i = 0; i < layers.size(); ++i)
            if (chosen[i]) ours.insert(kohyaLoraName(component, layers[i].path) + " " + std::to_string(layers[i].kernel));
        }
        std::vector<std::string> onlyOurs, onlyTheirs;
        std::set_difference(ours.begin(), ours.end(), theirs.begin(), theirs.end(), std::back_inserter(onlyOurs));
        std::set_difference(theirs.begin(), theirs.end(), ours.begin(), ours.end(), std::back_inserter(onlyTheirs));
        EXPECT_TRUE(onlyOurs.empty()) << onlyOurs.size() << " not LyCORIS's, first " << onlyOurs.front();
        EXPECT_TRUE(onlyTheirs.empty()) << onlyTheirs.size() << " missing, first " << onlyTheirs.front();
        ++files;
      }
    }
  }
  EXPECT_EQ(files, 22u);
}

TEST(LycorisArgs, ReadAsLycorisReadsThem) {
  auto parse = [](std::vector<std::string> args) { return parseNetworkArgs(args, "lycoris.kohya"); };
  LoraNetworkArgs a = parse({"algo=LoKr", "factor=8", "use_tucker=False", "use_cp=True", "decompose_both=False",
                             "preset=attn-mlp", "rank_dropout=0.1", "loraplus_lr_ratio=4", "rank_dropout_scale=False"});
  ASSERT_TRUE(a.lycoris);
  EXPECT_EQ(a.lycoris->algo, models::LycorisAlgo::LoKr);
  EXPECT_EQ(a.lycoris->factor, 8);
  EXPECT_TRUE(a.lycoris->useTucker);      // use_cp, the deprecated name, wins
  EXPECT_TRUE(a.lycoris->decomposeBoth);  // the string "False" is true to LyCORIS
  EXPECT_EQ(a.lycoris->preset, LycorisPreset::AttnMlp);
  EXPECT_DOUBLE_EQ(a.lycoris->rankDropout, 0.1);
  EXPECT_EQ(a.loraplusLrRatio, 4.0);
  EXPECT_EQ(a.lycoris->unread, std::vector<std::string>{"rank_dropout_scale"});
  EXPECT_EQ(a.raw.size(), 9u);
  a = parse({"algo=lora", "use_scalar=0", "dora_wd=false", "bypass_mode=FALSE"});
  EXPECT_EQ(a.lycoris->algo, models::LycorisAlgo::LoCon);
  EXPECT_TRUE(a.lycoris->useScalar);  // str_bool: only "false" is false
  EXPECT_FALSE(a.lycoris->doraWd);
  EXPECT_FALSE(a.lycoris->bypassMode);
  EXPECT_EQ(a.lycoris->preset, LycorisPreset::Full);
  for (const std::string bad : {"algo=dylora", "algo=boft", "algo=glora", "algo=diag-oft", "algo=nope", "train_norm=True",
                                "preset=ia3", "preset=my.toml", "conv_dim=x", "rank_dropout=1.5", "block_dims=1", "rs_lora=True"})
    EXPECT_THROW(parse({bad}), LoraError) << bad;
  EXPECT_THROW(parse({"algo=full", "bypass_mode=True"}), LoraError);
  try {
    parse({"algo=dylora"});
  } catch (const LoraError& e) {
    EXPECT_NE(std::string(e.what()).find("algo=dylora"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(parse({"train_norm=False", "train_on_input=True"}));
  // networks.lora still refuses LyCORIS's keys.
  EXPECT_THROW(parseNetworkArgs({"algo=loha"}), LoraError);
}

namespace {

// A module tree with a transformer block's Linears, a ResBlock's convs and a CLIP-like layer.
std::shared_ptr<torch::nn::Module> tinyUnet() {
  auto root = std::make_shared<torch::nn::Module>();
  auto block = root->register_module("input_blocks", std::make_shared<torch::nn::Module>());
  auto one = block->register_module("1", std::make_shared<torch::nn::Module>());
  auto res = one->register_module("0", std::make_shared<torch::nn::Module>());
  auto inLayers = res->register_module("in_layers", std::make_shared<torch::nn::Module>());
  inLayers->register_module("2", models::Conv2d(8, 12, 3, 1, 1));
  auto emb = res->register_module("emb_layers", std::make_shared<torch::nn::Module>());
  emb->register_module("1", models::Linear(16, 12));
  res->register_module("skip_connection", models::Conv2d(8, 12, 1));
  auto tr = one->register_module("1", std::make_shared<torch::nn::Module>());
  tr->register_module("proj_in", models::Linear(12, 12));
  auto tb = tr->register_module("transformer_blocks", std::make_shared<torch::nn::Module>());
  auto b0 = tb->register_module("0", std::make_shared<torch::nn::Module>());
  auto attn = b0->register_module("attn1", std::make_shared<torch::nn::Module>());
  attn->register_module("to_q", models::Linear(12, 12, false));
  tr->register_module("proj_out", models::Linear(12, 12));
  root->register_module("time_embed", models::Linear(4, 16));
  return root;
}

// Runs every adapted layer on fixed inputs: the network's outputs, to compare two networks.
std::vector<torch::Tensor> outputs(torch::nn::Module& root) {
  std::vector<torch::Tensor> out;
  torch::manual_seed(11);
  torch::NoGradGuard noGrad;
  for (const auto& item : root.named_modules("", false)) {
    if (auto l = std::dynamic_pointer_cast<models::LinearImpl>(item.value())) out.push_back(l->forward(torch::randn({2, l->inFeatures()})));
    if (auto c = std::dynamic_pointer_cast<models::Conv2dImpl>(item.value())) out.push_back(c->forward(torch::randn({1, c->inChannels(), 5, 5})));
  }
  return out;
}

}  // namespace

// LoKr at kohya_ss's network_dim = 100000: w2 is kept whole (lokr_w2) wherever the dim is at
// least half the layer's larger factor, as LyCORIS decides per layer; w1 is whole anyway.
TEST(LycorisNetwork, LokrAtFullRankDimKeepsW2Whole) {
  auto root = tinyUnet();
  LoraNetworkOptions o;
  o.dim = 100000;
  o.alpha = 1.0;
  o.args = parseNetworkArgs({"algo=lokr", "factor=4", "conv_dim=100000"}, "lycoris.kohya");
  LoraNetwork net(o);
  ASSERT_GT(net.attach(sdxlLoraRule(LoraComponent::Unet), *root), 0u);
  for (const LoraModule& m : net.modules()) {
    EXPECT_TRUE(m.lycoris->tensors.has("lokr_w1")) << m.name;
    EXPECT_TRUE(m.lycoris->tensors.has("lokr_w2")) << m.name;
    EXPECT_FALSE(m.lycoris->tensors.has("lokr_w2_a")) << m.name;
    EXPECT_EQ(m.lycoris->scale, 1.0) << m.name;  // both factors whole: LyCORIS's scale is 1
  }
}

TEST(LycorisNetwork, EachAlgorithmSavesLycorisKeysAndLoadsBack) {
  const fs::path dir = fs::temp_directory_path() / ("sinter_lycoris_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  struct Algo {
    std::vector<std::string> args;
    std::set<std::string> keysOfToQ;  // what lora_unet_input_blocks_1_1_transformer_blocks_0_attn1_to_q has in the file
  };
  const std::vector<Algo> algos{
      {{"algo=locon"}, {"alpha", "lora_up.weight", "lora_down.weight"}},
      {{"algo=locon", "dora_wd=True", "use_scalar=True"}, {"alpha", "dora_scale", "lora_up.weight", "lora_down.weight"}},
      {{"algo=loha"}, {"alpha", "hada_w1_a", "hada_w1_b", "hada_w2_a", "hada_w2_b"}},
      {{"algo=lokr", "factor=4"}, {"alpha", "lokr_w1", "lokr_w2"}},  // 12 = 3 x 4: dim 2 is not below 4 / 2
      {{"algo=lokr", "use_tucker=True"}, {"alpha", "lokr_w1", "lokr_w2"}},
      {{"algo=ia3"}, {"weight", "on_input"}},
      {{"algo=full"}, {"diff"}},
  };
  for (const Algo& algo : algos) {
    SCOPED_TRACE(algo.args.front());
    auto root = tinyUnet();
    LoraNetworkOptions o;
    o.dim = 2;
    o.alpha = 1.0;
    o.args = parseNetworkArgs(algo.args, "lycoris.kohya");
    LoraNetwork net(o);
    // preset full: the ResBlock's 3x3 (conv_dim = network_dim), its 1x1 and Linear, the transformer's three.
    EXPECT_EQ(net.attach(sdxlLoraRule(LoraComponent::Unet), *root), 6u);
    EXPECT_FALSE(net.find("lora_unet_time_embed"));
    {
      torch::NoGradGuard noGrad;
      for (torch::Tensor& p : net.parameters()) p.add_(0.05 * torch::randn_like(p));
    }
    const fs::path file = dir / "net.safetensors";
    saveLoraFile(net, file.string(), torch::kFloat16, {{"ss_network_module", "lycoris.kohya"}});
    io::SafetensorsFile saved(file.string());
    std::set<std::string> toQ;
    const std::string prefix = "lora_unet_input_blocks_1_1_transformer_blocks_0_attn1_to_q.";
    for (const std::string& key : saved.keys()) {
      EXPECT_EQ(saved.tensor(key).scalar_type(), torch::kFloat16) << key;  // every value in the save dtype
      if (key.rfind(prefix, 0) == 0) toQ.insert(key.substr(prefix.size()));
    }
    EXPECT_EQ(toQ, algo.keysOfToQ);
    EXPECT_EQ(saved.metadata().at("ss_network_module"), "lycoris.kohya");

    auto again = tinyUnet();
    {  // the same base weights
      torch::NoGradGuard noGrad;
      auto src = root->named_parameters(), dst = again->named_parameters();
      for (const auto& item : src) dst[item.key()].copy_(item.value());
    }
    LoraNetwork loaded(o);
    loaded.attach(sdxlLoraRule(LoraComponent::Unet), *again);
    const LoraLoadReport r = loadLoraFile(loaded, file.string());
    EXPECT_EQ(r.loadedModules, 6u);
    EXPECT_TRUE(r.missing.empty());
    EXPECT_TRUE(r.unexpected.empty());
    // fp16 in the file: outputs agree to fp16 rounding of the adapter tensors.
    const auto a = outputs(*root), b = outputs(*again);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::allclose(a[i], b[i], 1e-2, 1e-2)) << i << " " << (a[i] - b[i]).abs().max().item<double>();
    // A training state's tensors restore the network exactly.
    LoraNetwork resumed(o);
    auto third = tinyUnet();
    {
      torch::NoGradGuard noGrad;
      auto src = root->named_parameters(), dst = third->named_parameters();
      for (const auto& item : src) dst[item.key()].copy_(item.value());
    }
    resumed.attach(sdxlLoraRule(LoraComponent::Unet), *third);
    const auto state = net.resumeTensors();
    EXPECT_EQ(resumed.loadResumeTensors({state.begin(), state.end()}, "state").loadedModules, 6u);
    const auto c = outputs(*third);
    for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], c[i])) << i;
  }
  fs::remove_all(dir);
}

TEST(LycorisNetwork, LoraPlusAndGroupsTakeLycorisTensors) {
  auto root = tinyUnet();
  LoraNetworkOptions o;
  o.dim = 2;
  o.args = parseNetworkArgs({"algo=locon", "loraplus_lr_ratio=16"}, "lycoris.kohya");
  LoraNetwork net(o);
  net.attach(sdxlLoraRule(LoraComponent::Unet), *root);
  const auto groups = net.parameterGroups(std::nullopt, 1e-4, 1e-4);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].label, "unet");
  EXPECT_EQ(groups[1].label, "unet plus");
  EXPECT_DOUBLE_EQ(groups[1].lr, 1.6e-3);
  EXPECT_EQ(groups[0].params.size(), 6u);  // lora_down of each module
  EXPECT_EQ(groups[1].params.size(), 6u);  // lora_up
}
