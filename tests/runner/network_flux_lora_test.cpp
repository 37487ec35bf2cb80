// FLUX LoRA as sd-scripts' networks.lora_flux makes it: which Linears of the transformer, under
// which kohya names and sizes, at full size (from the layout, nothing allocated) and attached to
// a tiny transformer.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "models/flux/flux_layout.h"
#include "models/flux/flux_transformer.h"
#include "models/layers/linear.h"
#include "models/text_encoders/t5_encoder.h"
#include "network/lora_network.h"
#include "network/lora_targets.h"

using namespace sinter;
using namespace sinter::network;

namespace {

std::vector<LinearShape> shapes(const std::vector<models::LinearInfo>& layers) {
  std::vector<LinearShape> out;
  for (const models::LinearInfo& l : layers) out.push_back({l.path, l.in, l.out});
  return out;
}

// A layout listing against the Linears a built model has, in module order.
void expectListsTheModelsLinears(const std::vector<models::LinearInfo>& listed, torch::nn::Module& model, const std::string& what) {
  std::vector<models::LinearInfo> actual;
  for (const auto& item : model.named_modules("", /*include_self=*/false))
    if (auto linear = std::dynamic_pointer_cast<models::LinearImpl>(item.value()))
      actual.push_back({item.key(), linear->inFeatures(), linear->outFeatures(), linear->bias.defined()});
  ASSERT_EQ(listed.size(), actual.size()) << what;
  for (size_t i = 0; i < listed.size(); ++i) {
    EXPECT_EQ(listed[i].path, actual[i].path) << what << " " << i;
    EXPECT_EQ(listed[i].in, actual[i].in) << listed[i].path;
    EXPECT_EQ(listed[i].out, actual[i].out) << listed[i].path;
    EXPECT_EQ(listed[i].bias, actual[i].bias) << listed[i].path;
  }
}

}  // namespace

TEST(FluxLoraTargets, LayoutListsTheTransformersLinearsInModuleOrder) {
  for (bool dev : {true, false}) {
    const models::FluxConfig config = models::FluxConfig::tiny(dev);
    models::FluxTransformer transformer(config);
    expectListsTheModelsLinears(models::fluxTransformerLinearLayers(config), *transformer, dev ? "dev" : "schnell");
  }
}

TEST(FluxLoraTargets, FullSizeDefaultsAre304BlockLinears) {
  const std::vector<LinearShape> dev = shapes(models::fluxTransformerLinearLayers(models::FluxConfig::dev()));
  const std::vector<LoraModuleShape> all = listLoraModules(fluxLoraRule(LoraComponent::Unet), dev);
  ASSERT_EQ(all.size(), 304u);  // 19 double blocks x 10 + 38 single blocks x 3
  auto find = [&](const std::string& name) {
    for (const LoraModuleShape& m : all)
      if (m.name == name) return m;
    ADD_FAILURE() << name << " not listed";
    return LoraModuleShape{};
  };
  EXPECT_EQ(all.front().name, "lora_unet_double_blocks_0_img_mod_lin");
  EXPECT_EQ(all.back().name, "lora_unet_single_blocks_37_modulation_lin");
  const LoraModuleShape qkv = find("lora_unet_double_blocks_0_img_attn_qkv");
  EXPECT_EQ(qkv.inFeatures, 3072);
  EXPECT_EQ(qkv.outFeatures, 9216);
  EXPECT_EQ(find("lora_unet_double_blocks_18_txt_mlp_2").inFeatures, 12288);
  const LoraModuleShape linear1 = find("lora_unet_single_blocks_0_linear1");
  EXPECT_EQ(linear1.outFeatures, 21504);  // 3 x 3072 + 12288
  EXPECT_EQ(find("lora_unet_single_blocks_0_linear2").inFeatures, 15360);
  for (const LoraModuleShape& m : all) EXPECT_TRUE(m.name.find("final_layer") == std::string::npos && m.name.find("_in_") == std::string::npos) << m.name;
  // train_blocks keeps one kind of block.
  EXPECT_EQ(listLoraModules(fluxLoraRule(LoraComponent::Unet, "double"), dev).size(), 190u);
  EXPECT_EQ(listLoraModules(fluxLoraRule(LoraComponent::Unet, "single"), dev).size(), 114u);
  EXPECT_THROW(fluxLoraRule(LoraComponent::Unet, "some"), std::invalid_argument);
  // schnell has the same blocks.
  EXPECT_EQ(listLoraModules(fluxLoraRule(LoraComponent::Unet),
                            shapes(models::fluxTransformerLinearLayers(models::FluxConfig::schnell())))
                .size(),
            304u);
}

// fp8_fast leaves out the Linears with one row per sample: the embedders and every modulation.
TEST(FluxLayout, LinearsTakingOneRowPerSampleAreTheEmbeddersAndModulations) {
  std::vector<std::string> perSample, textStream;
  for (const models::LinearInfo& l : models::fluxTransformerLinearLayers(models::FluxConfig::dev())) {
    if (models::fluxLinearTakesOneRowPerSample(l.path)) perSample.push_back(l.path);
    if (models::fluxLinearIsInTextStream(l.path)) textStream.push_back(l.path);
  }
  // time_in, vector_in, guidance_in (2 each), 19 x 2 block modulations, 38 single ones, adaLN.
  ASSERT_EQ(perSample.size(), 6u + 38u + 38u + 1u);
  EXPECT_EQ(perSample.front(), "time_in.in_layer");
  EXPECT_EQ(perSample[6], "double_blocks.0.img_mod.lin");
  EXPECT_EQ(perSample[7], "double_blocks.0.txt_mod.lin");
  EXPECT_EQ(perSample[44], "single_blocks.0.modulation.lin");
  EXPECT_EQ(perSample.back(), "final_layer.adaLN_modulation.1");
  for (const char* perToken : {"img_in", "txt_in", "double_blocks.3.img_attn.qkv", "double_blocks.3.txt_mlp.2",
                               "single_blocks.5.linear1", "single_blocks.5.linear2", "final_layer.linear"})
    EXPECT_FALSE(models::fluxLinearTakesOneRowPerSample(perToken)) << perToken;
  ASSERT_EQ(textStream.size(), 19u * 5u);  // txt_mod.lin, txt_attn.qkv/proj, txt_mlp.0/2 per double block
  EXPECT_EQ(textStream.front(), "double_blocks.0.txt_mod.lin");
  EXPECT_FALSE(models::fluxLinearIsInTextStream("txt_in"));
}

TEST(FluxLoraTargets, AttachedToATinyTransformerTheyStartAsTheBaseModel) {
  torch::manual_seed(4);
  const models::FluxConfig config = models::FluxConfig::tiny();
  models::FluxTransformer transformer(config);
  const torch::Tensor img = torch::randn({1, 4, 64}), txt = torch::randn({1, 3, config.contextInDim});
  const torch::Tensor ids = torch::zeros({1, 4, 3}), txtIds = torch::zeros({1, 3, 3}), t = torch::tensor({0.4});
  const torch::Tensor y = torch::randn({1, config.vecInDim}), g = torch::full({1}, 3.5);
  torch::NoGradGuard noGrad;
  const torch::Tensor base = transformer->forward(img, ids, txt, txtIds, t, y, g);

  LoraNetworkOptions options;
  options.dim = 4;
  LoraNetwork net(options);
  const size_t attached = net.attach(fluxLoraRule(LoraComponent::Unet), *transformer);
  EXPECT_EQ(attached, listLoraModules(fluxLoraRule(LoraComponent::Unet), shapes(models::fluxTransformerLinearLayers(config))).size());
  EXPECT_EQ(attached, 2u * 10 + 2u * 3);
  ASSERT_NE(net.find("lora_unet_single_blocks_1_linear2"), nullptr);
  EXPECT_TRUE(torch::equal(transformer->forward(img, ids, txt, txtIds, t, y, g), base));  // zero up
  net.find("lora_unet_double_blocks_0_img_attn_qkv")->adapter->up.normal_();
  EXPECT_FALSE(torch::allclose(transformer->forward(img, ids, txt, txtIds, t, y, g), base));
}

// train_t5xxl: networks.lora_flux's T5Attention and T5DenseGatedActDense targets, 7 per block,
// named lora_te3_ after the Hugging Face T5EncoderModel's paths; the listing matches the model's
// own Linears, and the adapters start as the base model.
TEST(FluxLoraTargets, T5xxlTargetsAreItsAttentionAndGatedFeedForwardLinears) {
  const std::vector<LoraModuleShape> xxl = listLoraModules(fluxT5LoraRule(), shapes(models::t5EncoderLinearLayers(models::T5EncoderConfig::xxl())));
  ASSERT_EQ(xxl.size(), 24u * 7);
  EXPECT_EQ(xxl.front().name, "lora_te3_encoder_block_0_layer_0_SelfAttention_q");
  EXPECT_EQ(xxl.front().inFeatures, 4096);
  EXPECT_EQ(xxl[4].name, "lora_te3_encoder_block_0_layer_1_DenseReluDense_wi_0");
  EXPECT_EQ(xxl[4].outFeatures, 10240);
  EXPECT_EQ(xxl.back().name, "lora_te3_encoder_block_23_layer_1_DenseReluDense_wo");
  EXPECT_EQ(xxl.back().component, LoraComponent::TextEncoder3);
  EXPECT_FALSE(isT5LoraTarget("shared"));

  torch::manual_seed(5);
  const models::T5EncoderConfig config = models::T5EncoderConfig::tiny();
  models::T5Encoder t5(config);
  expectListsTheModelsLinears(models::t5EncoderLinearLayers(config), *t5, "T5");
  const torch::Tensor ids = torch::randint(config.vocabSize, {1, 6});
  torch::Tensor base;
  {
    torch::NoGradGuard noGrad;
    base = t5->forward(ids);
  }
  LoraNetworkOptions options;
  options.dim = 2;
  LoraNetwork net(options);
  EXPECT_EQ(net.attach(fluxT5LoraRule(), *t5), 2u * 7);
  ASSERT_NE(net.find("lora_te3_encoder_block_1_layer_1_DenseReluDense_wi_1"), nullptr);
  // The adapters' gradients reach through T5's blocks (its outputs are the step's context).
  net.find("lora_te3_encoder_block_1_layer_0_SelfAttention_v")->adapter->up.data().normal_();
  const torch::Tensor out = t5->forward(ids);
  EXPECT_FALSE(torch::allclose(out, base));
  out.pow(2).sum().backward();
  const torch::Tensor grad = net.find("lora_te3_encoder_block_0_layer_0_SelfAttention_q")->adapter->up.grad();
  ASSERT_TRUE(grad.defined());
  EXPECT_GT(grad.abs().max().item<double>(), 0.0);
}
