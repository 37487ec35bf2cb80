// LoRA network: sd-scripts' default SDXL targets and names (full size, from listings), attaching
// to a module tree, the forward, parameter groups, kohya files and their metadata.
#include <gtest/gtest.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/torch.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include "io/safetensors.h"
#include "models/layers/linear.h"
#include "network/lora_file.h"
#include "network/lora_metadata.h"
#include "network/lora_network.h"
#include "network/lora_targets.h"
#include "network/python_format.h"

namespace fs = std::filesystem;
using namespace sinter;
using namespace sinter::network;

namespace {

// ---- Full-size SDXL Linear listings, written from the architecture (SAI / HF layouts) ----

void addTransformer(std::vector<LinearShape>& out, const std::string& p, int64_t c, int depth) {
  out.push_back({p + ".proj_in", c, c});
  for (int i = 0; i < depth; ++i) {
    const std::string b = p + ".transformer_blocks." + std::to_string(i);
    for (const char* attn : {".attn1", ".attn2"}) {
      const int64_t ctx = std::string(attn) == ".attn2" ? 2048 : c;
      out.push_back({b + attn + ".to_q", c, c});
      out.push_back({b + attn + ".to_k", ctx, c});
      out.push_back({b + attn + ".to_v", ctx, c});
      out.push_back({b + attn + ".to_out.0", c, c});
    }
    out.push_back({b + ".ff.net.0.proj", c, 8 * c});
    out.push_back({b + ".ff.net.2", 4 * c, c});
  }
  out.push_back({p + ".proj_out", c, c});
}

void addResBlock(std::vector<LinearShape>& out, const std::string& p, int64_t c) {
  out.push_back({p + ".emb_layers.1", 1280, c});
}

std::vector<LinearShape> sdxlUnetLinears() {
  std::vector<LinearShape> l = {{"time_embed.0", 320, 1280}, {"time_embed.2", 1280, 1280},
                                {"label_emb.0.0", 2816, 1280}, {"label_emb.0.2", 1280, 1280}};
  addResBlock(l, "input_blocks.1.0", 320);
  addResBlock(l, "input_blocks.2.0", 320);
  for (int b : {4, 5}) addResBlock(l, "input_blocks." + std::to_string(b) + ".0", 640),
      addTransformer(l, "input_blocks." + std::to_string(b) + ".1", 640, 2);
  for (int b : {7, 8}) addResBlock(l, "input_blocks." + std::to_string(b) + ".0", 1280),
      addTransformer(l, "input_blocks." + std::to_string(b) + ".1", 1280, 10);
  addResBlock(l, "middle_block.0", 1280);
  addTransformer(l, "middle_block.1", 1280, 10);
  addResBlock(l, "middle_block.2", 1280);
  for (int b : {0, 1, 2}) addResBlock(l, "output_blocks." + std::to_string(b) + ".0", 1280),
      addTransformer(l, "output_blocks." + std::to_string(b) + ".1", 1280, 10);
  for (int b : {3, 4, 5}) addResBlock(l, "output_blocks." + std::to_string(b) + ".0", 640),
      addTransformer(l, "output_blocks." + std::to_string(b) + ".1", 640, 2);
  for (int b : {6, 7, 8}) addResBlock(l, "output_blocks." + std::to_string(b) + ".0", 320);
  return l;
}

std::vector<LinearShape> clipLinears(int layers, int64_t width, int64_t mlp, bool projection) {
  std::vector<LinearShape> l;
  for (int i = 0; i < layers; ++i) {
    const std::string p = "text_model.encoder.layers." + std::to_string(i);
    for (const char* n : {".self_attn.k_proj", ".self_attn.v_proj", ".self_attn.q_proj", ".self_attn.out_proj"})
      l.push_back({p + n, width, width});
    l.push_back({p + ".mlp.fc1", width, mlp});
    l.push_back({p + ".mlp.fc2", mlp, width});
  }
  if (projection) l.push_back({"text_projection", width, width});
  return l;
}

// ---- A module tree built from a listing: plain modules as parents, models::Linear as leaves ----

std::shared_ptr<torch::nn::Module> buildTree(const std::vector<LinearShape>& linears) {
  auto root = std::make_shared<torch::nn::Module>();
  for (const LinearShape& l : linears) {
    torch::nn::Module* node = root.get();
    size_t start = 0;
    while (true) {
      const size_t dot = l.path.find('.', start);
      const std::string seg = l.path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (dot == std::string::npos) {
        node->register_module(seg, models::Linear(l.inFeatures, l.outFeatures));
        break;
      }
      auto children = node->named_children();
      if (!children.contains(seg)) node->register_module(seg, std::make_shared<torch::nn::Module>());
      node = node->named_children()[seg].get();
      start = dot + 1;
    }
  }
  return root;
}

models::Linear linearAt(torch::nn::Module& root, const std::string& path) {
  for (const auto& item : root.named_modules("", false))
    if (item.key() == path) return models::Linear(std::dynamic_pointer_cast<models::LinearImpl>(item.value()));
  throw std::runtime_error("no module " + path);
}

// A tiny SDXL-like UNet listing: one transformer parent with 1 block, plus non-target Linears.
std::vector<LinearShape> tinyUnet() {
  std::vector<LinearShape> l = {{"time_embed.0", 8, 16}, {"time_embed.2", 16, 16}};
  addResBlock(l, "input_blocks.1.0", 8);
  l.back().inFeatures = 16;
  addTransformer(l, "input_blocks.1.1", 8, 1);
  for (auto& s : l)  // context width 2048 -> 12 for the tiny one
    if (s.inFeatures == 2048) s.inFeatures = 12;
  return l;
}

fs::path tempDir() {
  fs::path dir = fs::temp_directory_path() / ("sinter_lora_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

nlohmann::ordered_json noOptions(const std::string&) { return nullptr; }

}  // namespace

TEST(LoraTargets, FullSizeSdxlCountsMatchSdScripts) {
  // sd-scripts logs "create LoRA for U-Net: 722 modules." and 264 text encoder modules
  // (72 for CLIP-L, 192 for bigG) with the default targets.
  const auto unet = listLoraModules(sdxlLoraRule(LoraComponent::Unet), sdxlUnetLinears());
  const auto te1 = listLoraModules(sdxlLoraRule(LoraComponent::TextEncoder1), clipLinears(12, 768, 3072, false));
  const auto te2 = listLoraModules(sdxlLoraRule(LoraComponent::TextEncoder2), clipLinears(32, 1280, 5120, true));
  EXPECT_EQ(unet.size(), 722u);
  EXPECT_EQ(te1.size(), 72u);
  EXPECT_EQ(te2.size(), 192u);

  std::set<std::string> names;
  for (const auto* list : {&unet, &te1, &te2})
    for (const auto& m : *list) EXPECT_TRUE(names.insert(m.name).second) << m.name;
  EXPECT_TRUE(names.count("lora_unet_input_blocks_4_1_transformer_blocks_0_attn1_to_q"));
  EXPECT_TRUE(names.count("lora_unet_input_blocks_4_1_proj_in"));
  EXPECT_TRUE(names.count("lora_unet_middle_block_1_transformer_blocks_9_ff_net_0_proj"));
  EXPECT_TRUE(names.count("lora_unet_output_blocks_5_1_transformer_blocks_1_attn2_to_out_0"));
  EXPECT_TRUE(names.count("lora_te1_text_model_encoder_layers_0_self_attn_q_proj"));
  EXPECT_TRUE(names.count("lora_te2_text_model_encoder_layers_31_mlp_fc2"));
  // Outside the transformers and attention/MLP: never targeted by default.
  for (const char* n : {"lora_unet_time_embed_0", "lora_unet_label_emb_0_0", "lora_unet_input_blocks_4_0_emb_layers_1",
                        "lora_te2_text_projection"})
    EXPECT_FALSE(names.count(n)) << n;

  for (const auto& m : unet)
    if (m.name == "lora_unet_input_blocks_7_1_transformer_blocks_3_attn2_to_k") {
      EXPECT_EQ(m.inFeatures, 2048);
      EXPECT_EQ(m.outFeatures, 1280);
    }
  // Parameter count at rank 4: sum of 4*(in+out) over modules.
  int64_t params = 0;
  for (const auto* list : {&unet, &te1, &te2})
    for (const auto& m : *list) params += 4 * (m.inFeatures + m.outFeatures);
  EXPECT_GT(params, 0);
}

TEST(LoraTargets, TransformerParentsAreFoundSegmentWise) {
  const auto parents = unetTransformerParents({"a.transformer_blocks.0.attn1.to_q", "b.mytransformer_blocks.x",
                                               "c.1.transformer_blocks", "transformer_blocks.0.ff.net.2"});
  EXPECT_EQ(parents, (std::vector<std::string>{"", "a", "c.1"}));
  EXPECT_TRUE(isTextEncoderLoraTarget("text_model.encoder.layers.3.self_attn.out_proj"));
  EXPECT_FALSE(isTextEncoderLoraTarget("text_model.encoder.layers.3.layer_norm1"));
  EXPECT_FALSE(isTextEncoderLoraTarget("text_projection"));
}

TEST(LoraNetwork, AttachFindsTheSameModulesAsTheListing) {
  auto unet = buildTree(tinyUnet());
  auto te = buildTree(clipLinears(2, 8, 16, true));
  LoraNetwork net(LoraNetworkOptions{});
  EXPECT_EQ(net.attach(sdxlLoraRule(LoraComponent::Unet), *unet), listLoraModules(sdxlLoraRule(LoraComponent::Unet), tinyUnet()).size());
  EXPECT_EQ(net.attach(sdxlLoraRule(LoraComponent::TextEncoder1), *te), 12u);
  EXPECT_EQ(net.moduleCount(LoraComponent::Unet), 12u);  // proj_in, 8 attn, 2 ff, proj_out
  const LoraModule* q = net.find("lora_unet_input_blocks_1_1_transformer_blocks_0_attn2_to_k");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->adapter->down.sizes(), (std::vector<int64_t>{4, 12}));
  EXPECT_EQ(q->adapter->up.sizes(), (std::vector<int64_t>{8, 4}));
  EXPECT_DOUBLE_EQ(q->adapter->scale(), 0.25);  // alpha 1 / dim 4
  EXPECT_TRUE(q->adapter->down.requires_grad());
  EXPECT_EQ(linearAt(*unet, "time_embed.0")->lora, nullptr);
  EXPECT_EQ(linearAt(*unet, "input_blocks.1.1.proj_in")->lora.get(),
            net.find("lora_unet_input_blocks_1_1_proj_in")->adapter.get());
  // Kaiming-uniform(a=sqrt(5)) down: bound 1/sqrt(in); zero up.
  EXPECT_LE(q->adapter->down.abs().max().item<float>(), 1.0f / std::sqrt(12.0f) + 1e-6f);
  EXPECT_GT(q->adapter->down.abs().max().item<float>(), 0.0f);
  EXPECT_EQ(q->adapter->up.abs().max().item<float>(), 0.0f);
  net.detach();
  EXPECT_EQ(linearAt(*unet, "input_blocks.1.1.proj_in")->lora, nullptr);
}

TEST(LoraNetwork, ForwardEqualsBaseWithZeroUpAndAddsTheScaledDelta) {
  torch::manual_seed(0);
  auto te = buildTree(clipLinears(1, 8, 16, false));
  models::Linear fc1 = linearAt(*te, "text_model.encoder.layers.0.mlp.fc1");
  const torch::Tensor x = torch::randn({2, 3, 8});
  const torch::Tensor base = fc1->forward(x).detach();
  LoraNetworkOptions opt;
  opt.dim = 2;
  opt.alpha = 4.0;
  LoraNetwork net(opt);
  net.attach(sdxlLoraRule(LoraComponent::TextEncoder1), *te);
  EXPECT_TRUE(torch::equal(fc1->forward(x), base));
  auto& a = *net.find("lora_te1_text_model_encoder_layers_0_mlp_fc1")->adapter;
  {
    torch::NoGradGuard g;
    a.up.normal_();
  }
  const torch::Tensor expected = base + torch::matmul(torch::matmul(x, a.down.t()), a.up.t()) * 2.0;  // 4/2
  EXPECT_TRUE(torch::allclose(fc1->forward(x), expected, 1e-5, 1e-5));
  net.setMultiplier(0.0);
  EXPECT_TRUE(torch::allclose(fc1->forward(x), base));
}

TEST(LoraNetwork, GradientsReachOnlyTheAdapters) {
  auto te = buildTree(clipLinears(1, 8, 16, false));
  LoraNetwork net(LoraNetworkOptions{});
  net.attach(sdxlLoraRule(LoraComponent::TextEncoder1), *te);
  for (auto& p : te->parameters()) p.set_requires_grad(false);
  models::Linear q = linearAt(*te, "text_model.encoder.layers.0.self_attn.q_proj");
  q->forward(torch::randn({4, 8})).pow(2).sum().backward();
  auto& a = *net.find("lora_te1_text_model_encoder_layers_0_self_attn_q_proj")->adapter;
  ASSERT_TRUE(a.up.grad().defined());
  EXPECT_GT(a.up.grad().abs().sum().item<float>(), 0.0f);
  EXPECT_FALSE(q->weight.grad().defined());
}

// The adapted Linear of a frozen base and a contiguous matrix or [B, L, C] input is one autograd
// function whose GEMMs accumulate into each other's outputs (frozen_linear_lora.h); other layouts, a
// trained base weight and LoRA dropout go through autograd. Every way gives the formula
// y = x W^T + b + s (x D^T) U^T and its gradients, also where the input takes none.
TEST(LoraNetwork, AdaptedLinearMatchesTheFormulaForEveryInputLayout) {
  torch::manual_seed(3);
  for (bool withBias : {true, false}) {
    for (bool baseTrained : {false, true}) {
      models::Linear fc(models::LinearImpl(6, 5, withBias));
      fc->weight.set_requires_grad(baseTrained);
      if (withBias) fc->bias.set_requires_grad(false);
      auto lora = std::make_shared<models::LoraAdapter>();
      lora->down = torch::randn({2, 6}).requires_grad_(true);
      lora->up = torch::randn({5, 2}).requires_grad_(true);
      lora->alpha = 1.0;  // scale 1/2
      lora->multiplier = 0.75;
      fc->lora = lora;
      const torch::Tensor source = torch::randn({4, 3, 6}, torch::kFloat64);
      const std::vector<std::pair<const char*, std::function<torch::Tensor(const torch::Tensor&)>>> layouts = {
          {"[B, L, C]", [](const torch::Tensor& t) { return t; }},
          {"matrix", [](const torch::Tensor& t) { return t.reshape({-1, 6}); }},
          {"transposed [L, B, C]", [](const torch::Tensor& t) { return t.transpose(0, 1); }},
          {"[2, 2, 3, C]", [](const torch::Tensor& t) { return t.reshape({2, 2, 3, 6}); }}};
      for (const auto& [layoutName, layout] : layouts) {
        for (bool inputGrad : {true, false}) {
          const std::string name = std::string(layoutName) + (withBias ? ", bias" : "") +
                                   (baseTrained ? ", base trained" : "") + (inputGrad ? "" : ", input without grad");
          for (torch::Tensor* p : {&lora->down, &lora->up, &fc->weight}) p->mutable_grad() = torch::Tensor();
          const torch::Tensor x = layout(source).to(torch::kFloat32).detach().requires_grad_(inputGrad);
          const torch::Tensor y = fc->forward(x);
          const torch::Tensor grad = torch::randn(y.sizes());
          y.backward(grad);
          // The formula in float64.
          const torch::Tensor x64 = layout(source).detach().requires_grad_(true);
          const torch::Tensor w64 = fc->weight.detach().to(torch::kFloat64).requires_grad_(true);
          const torch::Tensor d64 = lora->down.detach().to(torch::kFloat64).requires_grad_(true);
          const torch::Tensor u64 = lora->up.detach().to(torch::kFloat64).requires_grad_(true);
          torch::Tensor ref = torch::matmul(x64, w64.t()) + torch::matmul(torch::matmul(x64, d64.t()), u64.t()) * (0.5 * 0.75);
          if (withBias) ref = ref + fc->bias.to(torch::kFloat64);
          ref.backward(grad.to(torch::kFloat64));
          auto close = [](const torch::Tensor& a, const torch::Tensor& b) {
            return a.defined() && ((a.to(torch::kFloat64) - b).abs().max() / b.abs().max()).item<double>() < 1e-6;
          };
          EXPECT_EQ(y.sizes(), ref.sizes()) << name;
          EXPECT_TRUE(close(y.detach(), ref.detach())) << name;
          if (inputGrad) EXPECT_TRUE(close(x.grad(), x64.grad())) << name;
          else EXPECT_FALSE(x.grad().defined()) << name;
          EXPECT_TRUE(close(lora->down.grad(), d64.grad())) << name;
          EXPECT_TRUE(close(lora->up.grad(), u64.grad())) << name;
          if (baseTrained) EXPECT_TRUE(close(fc->weight.grad(), w64.grad())) << name;
          else EXPECT_FALSE(fc->weight.grad().defined()) << name;
        }
      }
    }
  }
}

// Counts the runs of the accumulator it hooks (as data parallel's readiness and
// fused_backward_pass hook them).
struct CountRuns : torch::autograd::FunctionPostHook {
  explicit CountRuns(int* runs) : runs_(runs) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                            const torch::autograd::variable_list& /*inputs*/) override {
    ++*runs_;
    return outputs;
  }
  int* runs_;
};

// Counts the gradients handed to the accumulator it hooks (AccumulateGrad's own additions).
struct CountHandedGradients : torch::autograd::FunctionPreHook {
  explicit CountHandedGradients(int* handed) : handed_(handed) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& grads) override {
    if (!grads.empty() && grads[0].defined()) ++*handed_;
    return grads;
  }
  int* handed_;
};

// Where a trained adapter tensor keeps its gradient buffer (the compute copies' flat buffer), the
// frozen base's backward pass adds into that buffer itself: the same tensor, the sum of what it
// held and the formula's gradient, with no gradient left for the accumulator to add, whose hooks still run; torch::autograd::grad (per-block
// capture) gets the gradients returned and leaves the buffers as they were.
TEST(LoraNetwork, AdaptedLinearAddsIntoKeptGradientBuffers) {
  torch::manual_seed(4);
  models::Linear fc(models::LinearImpl(6, 5, /*withBias=*/true));
  fc->weight.set_requires_grad(false);
  fc->bias.set_requires_grad(false);
  auto lora = std::make_shared<models::LoraAdapter>();
  lora->down = torch::randn({2, 6}, torch::kFloat64).requires_grad_(true);
  lora->up = torch::randn({5, 2}, torch::kFloat64).requires_grad_(true);
  lora->alpha = 1.0;  // scale 1/2
  fc->lora = lora;
  fc->to(torch::kFloat64);
  const torch::Tensor x = torch::randn({4, 3, 6}, torch::kFloat64);
  const torch::Tensor g = torch::randn({4, 3, 5}, torch::kFloat64);
  const torch::Tensor dDown = torch::matmul((g * 0.5).matmul(lora->up.detach()).reshape({-1, 2}).t(), x.reshape({-1, 6}));
  const torch::Tensor dUp = torch::matmul((g * 0.5).reshape({-1, 5}).t(), x.reshape({-1, 6}).matmul(lora->down.detach().t()));

  const torch::Tensor downBuffer = torch::randn({2, 6}, torch::kFloat64), upBuffer = torch::randn({5, 2}, torch::kFloat64);
  const torch::Tensor downBefore = downBuffer.clone(), upBefore = upBuffer.clone();
  lora->down.mutable_grad() = downBuffer;
  lora->up.mutable_grad() = upBuffer;
  int downRuns = 0;
  // Held, as its hookers hold it: the tensor itself keeps only a weak reference.
  const std::shared_ptr<torch::autograd::Node> accumulator = torch::autograd::impl::grad_accumulator(lora->down);
  accumulator->add_post_hook(std::make_unique<CountRuns>(&downRuns));
  int handed = 0;  // the addition the buffer spares: none reaches the accumulator
  accumulator->add_pre_hook(std::make_unique<CountHandedGradients>(&handed));

  const torch::autograd::variable_list returned = torch::autograd::grad({fc->forward(x)}, {lora->down, lora->up}, {g});
  EXPECT_TRUE(torch::allclose(returned[0], dDown, 1e-12, 1e-12));
  EXPECT_TRUE(torch::allclose(returned[1], dUp, 1e-12, 1e-12));
  EXPECT_TRUE(torch::equal(downBuffer, downBefore));
  EXPECT_TRUE(torch::equal(upBuffer, upBefore));

  for (int pass = 1; pass <= 2; ++pass) {
    fc->forward(x).backward(g);
    EXPECT_TRUE(lora->down.grad().is_same(downBuffer));
    EXPECT_TRUE(lora->up.grad().is_same(upBuffer));
    EXPECT_TRUE(torch::allclose(downBuffer, downBefore + pass * dDown, 1e-12, 1e-12)) << "pass " << pass;
    EXPECT_TRUE(torch::allclose(upBuffer, upBefore + pass * dUp, 1e-12, 1e-12)) << "pass " << pass;
    EXPECT_EQ(downRuns, pass);
    EXPECT_EQ(handed, 0);
  }
}

TEST(LoraNetwork, ParameterGroupsFollowPrepareOptimizerParams) {
  auto unet = buildTree(tinyUnet());
  auto te = buildTree(clipLinears(1, 8, 16, false));
  LoraNetwork net(LoraNetworkOptions{});
  net.attach(sdxlLoraRule(LoraComponent::TextEncoder1), *te);
  net.attach(sdxlLoraRule(LoraComponent::Unet), *unet);
  auto groups = net.parameterGroups(std::nullopt, 1e-3, 1e-4);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].label, "textencoder");
  EXPECT_DOUBLE_EQ(groups[0].lr, 1e-4);  // falls back to learning_rate
  EXPECT_EQ(groups[0].params.size(), 12u);
  EXPECT_EQ(groups[1].label, "unet");
  EXPECT_DOUBLE_EQ(groups[1].lr, 1e-3);
  // text_encoder_lr 0: the text encoders are not trained.
  groups = net.parameterGroups(0.0, std::nullopt, 1e-4);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].label, "unet");

  LoraNetworkOptions plus;
  plus.args = parseNetworkArgs({"loraplus_lr_ratio=16"});
  LoraNetwork net2(plus);
  net2.attach(sdxlLoraRule(LoraComponent::Unet), *buildTree(tinyUnet()));
  groups = net2.parameterGroups(std::nullopt, std::nullopt, 1e-4);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[1].label, "unet plus");
  EXPECT_DOUBLE_EQ(groups[1].lr, 16e-4);
  EXPECT_EQ(groups[0].params.size(), groups[1].params.size());
}

TEST(LoraNetwork, UnsupportedNetworkArgsListWhatIsSupported) {
  try {
    parseNetworkArgs({"conv_dimension=4"});
    FAIL();
  } catch (const LoraError& e) {
    EXPECT_NE(std::string(e.what()).find("conv_dimension"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("loraplus_lr_ratio"), std::string::npos);
  }
  EXPECT_THROW(parseNetworkArgs({"loraplus_lr_ratio"}), LoraError);
  EXPECT_THROW(parseNetworkArgs({"loraplus_lr_ratio=abc"}), LoraError);
  LoraNetworkOptions bad;
  bad.dim = 0;
  EXPECT_THROW(LoraNetwork{bad}, LoraError);
}

TEST(LoraFile, SaveLoadRoundTripWithMetadata) {
  const fs::path dir = tempDir();
  const std::string path = (dir / "net.safetensors").string();
  torch::manual_seed(1);
  LoraNetwork net(LoraNetworkOptions{});
  net.attach(sdxlLoraRule(LoraComponent::Unet), *buildTree(tinyUnet()));
  for (const auto& m : net.modules()) {
    torch::NoGradGuard g;
    m.adapter->up.normal_();
  }
  LoraRunFacts facts;
  facts.sessionId = "12345";
  facts.resolution = std::make_pair(1024, 1024);
  facts.maxTrainSteps = 100;
  auto option = [](const std::string& key) -> nlohmann::ordered_json {
    if (key == "learning_rate") return 1e-4;
    if (key == "network_module") return "networks.lora";
    if (key == "network_dim") return 4;
    if (key == "network_alpha") return 1.0;
    if (key == "output_name") return "mylora";
    if (key == "mixed_precision") return "bf16";
    return nullptr;
  };
  Metadata ss = buildSsMetadata(option, facts);
  stampSave(ss, 1700000000.5, 100, 1);
  const Metadata meta = metadataForSave(ss, buildModelSpec(option, facts, 1700000000.0), false);
  saveLoraFile(net, path, torch::kBFloat16, meta);

  io::SafetensorsFile file(path);
  EXPECT_EQ(file.keys().size(), net.modules().size() * 3);
  EXPECT_EQ(file.info("lora_unet_input_blocks_1_1_proj_in.lora_down.weight").dtype, "BF16");
  EXPECT_TRUE(file.info("lora_unet_input_blocks_1_1_proj_in.alpha").shape.empty());
  const auto& md = file.metadata();
  for (const char* key : {"ss_network_module", "ss_network_dim", "ss_network_alpha", "ss_learning_rate", "ss_unet_lr",
                          "ss_text_encoder_lr", "ss_output_name", "ss_max_train_steps", "ss_num_epochs", "ss_epoch",
                          "ss_steps", "ss_resolution", "ss_mixed_precision", "ss_seed", "ss_base_model_version",
                          "ss_optimizer", "ss_lr_scheduler", "ss_training_started_at", "ss_training_finished_at",
                          "ss_session_id", "ss_training_comment", "ss_dataset_dirs", "ss_tag_frequency",
                          "ss_bucket_info", "modelspec.sai_model_spec", "modelspec.architecture",
                          "modelspec.implementation", "modelspec.title", "modelspec.date", "modelspec.resolution",
                          "modelspec.prediction_type"})
    EXPECT_TRUE(md.count(key)) << key;
  EXPECT_EQ(md.at("ss_network_module"), "networks.lora");
  EXPECT_EQ(md.at("ss_network_alpha"), "1.0");
  EXPECT_EQ(md.at("ss_learning_rate"), "0.0001");
  EXPECT_EQ(md.at("ss_unet_lr"), "None");
  EXPECT_EQ(md.at("ss_resolution"), "(1024, 1024)");
  EXPECT_EQ(md.at("ss_base_model_version"), "sdxl_base_v1-0");
  EXPECT_EQ(md.at("ss_steps"), "100");
  EXPECT_EQ(md.at("ss_gradient_checkpointing"), "False");
  EXPECT_EQ(md.at("modelspec.sai_model_spec"), "1.0.1");
  EXPECT_EQ(md.at("modelspec.architecture"), "stable-diffusion-xl-v1-base/lora");
  EXPECT_EQ(md.at("modelspec.title"), "mylora");
  EXPECT_EQ(md.at("modelspec.resolution"), "1024x1024");
  EXPECT_EQ(md.at("modelspec.prediction_type"), "epsilon");

  // Round trip into a fresh network: equal up to bf16 rounding of the saved weights.
  LoraNetwork again(LoraNetworkOptions{});
  again.attach(sdxlLoraRule(LoraComponent::Unet), *buildTree(tinyUnet()));
  const LoraLoadReport report = loadLoraFile(again, path);
  EXPECT_EQ(report.loadedModules, net.modules().size());
  EXPECT_TRUE(report.missing.empty());
  EXPECT_TRUE(report.unexpected.empty());
  for (size_t i = 0; i < net.modules().size(); ++i) {
    const auto& a = *net.modules()[i].adapter;
    const auto& b = *again.modules()[i].adapter;
    EXPECT_TRUE(torch::equal(a.up.to(torch::kBFloat16).to(torch::kFloat32), b.up));
    EXPECT_TRUE(torch::equal(a.down.to(torch::kBFloat16).to(torch::kFloat32), b.down));
  }

  // no_metadata keeps the minimum set (and modelspec).
  const Metadata minimum = metadataForSave(ss, {}, true);
  EXPECT_EQ(minimum.size(), 5u);  // no ss_network_args without network_args
  EXPECT_TRUE(minimum.count("ss_network_dim"));
  EXPECT_FALSE(minimum.count("ss_learning_rate"));
  fs::remove_all(dir);
}

TEST(LoraFile, ContinuationChecksShapesAndDimFromWeightsTakesThem) {
  const fs::path dir = tempDir();
  const std::string path = (dir / "rank8.safetensors").string();
  LoraNetworkOptions r8;
  r8.dim = 8;
  r8.alpha = 4.0;
  LoraNetwork net8(r8);
  net8.attach(sdxlLoraRule(LoraComponent::TextEncoder2), *buildTree(clipLinears(1, 8, 16, false)));
  saveLoraFile(net8, path, torch::kFloat32, {});

  LoraNetwork net4(LoraNetworkOptions{});
  net4.attach(sdxlLoraRule(LoraComponent::TextEncoder2), *buildTree(clipLinears(1, 8, 16, false)));
  try {
    loadLoraFile(net4, path);
    FAIL();
  } catch (const LoraError& e) {
    EXPECT_NE(std::string(e.what()).find("rank8.safetensors"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("dim_from_weights"), std::string::npos);
  }

  const auto tensors = readLoraTensors(path);
  LoraNetworkOptions fromFile;
  fromFile.moduleRanks = readLoraModuleRanks(tensors);
  ASSERT_EQ(fromFile.moduleRanks->size(), 6u);
  EXPECT_EQ(fromFile.moduleRanks->begin()->second.rank, 8);
  EXPECT_DOUBLE_EQ(fromFile.moduleRanks->begin()->second.alpha, 4.0);
  LoraNetwork same(fromFile);
  // A model with two layers: only the file's modules (layer 0) get adapters.
  same.attach(sdxlLoraRule(LoraComponent::TextEncoder2), *buildTree(clipLinears(2, 8, 16, false)));
  EXPECT_EQ(same.modules().size(), 6u);
  const auto report = same.loadStateDict(tensors, path);
  EXPECT_EQ(report.loadedModules, 6u);
  EXPECT_TRUE(torch::equal(same.modules()[0].adapter->down, net8.modules()[0].adapter->down));

  // Keys the network lacks are reported, never fatal (sd-scripts loads non-strictly).
  LoraNetwork unetOnly(LoraNetworkOptions{});
  unetOnly.attach(sdxlLoraRule(LoraComponent::Unet), *buildTree(tinyUnet()));
  const auto r = loadLoraFile(unetOnly, path);
  EXPECT_EQ(r.loadedModules, 0u);
  EXPECT_EQ(r.unexpected.size(), 18u);
  EXPECT_EQ(r.missing.size(), unetOnly.modules().size());
  // A run refuses such a file all the same (checkWeightsMatch): it fills none of the network's modules.
  EXPECT_THROW(checkWeightsMatch(r, unetOnly.modules().size(), path, /*partialAllowed=*/true), LoraError);
  // One that fills every module loads, its extra keys a warning.
  const std::vector<std::string> warnings = checkWeightsMatch(report, same.modules().size(), path, false);
  EXPECT_TRUE(warnings.empty()) << ::testing::PrintToString(warnings);
  fs::remove_all(dir);
}

TEST(LoraFile, ReadsKeysCarryingOrigMod) {
  // A file as a torch.compile'd Python network would write it, built byte by byte.
  const fs::path dir = tempDir();
  const std::string path = (dir / "compiled.safetensors").string();
  const std::string name = "lora_te1_text_model_encoder_layers_0_mlp_fc1";
  const std::string header = "{\"_orig_mod." + name + ".lora_down.weight\":{\"dtype\":\"F32\",\"shape\":[1,2],"
                             "\"data_offsets\":[0,8]},\"_orig_mod." + name + ".alpha\":{\"dtype\":\"F32\",\"shape\":[],"
                             "\"data_offsets\":[8,12]}}";
  std::ofstream out(path, std::ios::binary);
  const uint64_t n = header.size();
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << header;
  const float data[3] = {1.5f, -2.0f, 3.0f};
  out.write(reinterpret_cast<const char*>(data), sizeof data);
  out.close();
  const auto tensors = readLoraTensors(path);
  ASSERT_TRUE(tensors.count(name + ".lora_down.weight"));
  EXPECT_FLOAT_EQ(tensors.at(name + ".alpha").item<float>(), 3.0f);
  const auto ranks = readLoraModuleRanks(tensors);
  EXPECT_EQ(ranks.at(name).rank, 1);
  EXPECT_THROW(readLoraTensors((dir / "missing.safetensors").string()), LoraError);
  fs::remove_all(dir);
}

TEST(PythonFormat, FloatsAndJsonAsPythonWritesThem) {
  EXPECT_EQ(pythonFloatRepr(1e-4), "0.0001");
  EXPECT_EQ(pythonFloatRepr(1e-5), "1e-05");
  EXPECT_EQ(pythonFloatRepr(1.0), "1.0");
  EXPECT_EQ(pythonFloatRepr(0.1), "0.1");
  EXPECT_EQ(pythonFloatRepr(128.0), "128.0");
  EXPECT_EQ(pythonFloatRepr(1700000000.5), "1700000000.5");
  EXPECT_EQ(pythonFloatRepr(1e16), "1e+16");
  EXPECT_EQ(pythonFloatRepr(-2.5e-7), "-2.5e-07");
  EXPECT_EQ(pythonFloatRepr(0.3), "0.3");
  EXPECT_EQ(pythonStr(nullptr), "None");
  EXPECT_EQ(pythonStr(true), "True");
  nlohmann::ordered_json j = {{"b", {{"n_repeats", 10}, {"img_count", 3}}}, {"a", "é"}};
  EXPECT_EQ(pythonJsonDumps(j), "{\"b\": {\"n_repeats\": 10, \"img_count\": 3}, \"a\": \"\\u00e9\"}");
}
