#include "models/flux/flux_double_block.h"

namespace sinter::models {

FluxDoubleBlockImpl::FluxDoubleBlockImpl(const FluxConfig& c) {
  if (!c.chroma()) img_mod = register_module("img_mod", FluxModulation(c.hiddenSize, /*isDouble=*/true));
  img_attn = register_module("img_attn", FluxSelfAttention(c.hiddenSize, c.numHeads, c.qkvBias));
  img_mlp = register_module("img_mlp", FluxMlp(c.hiddenSize, c.mlpHiddenDim()));
  if (!c.chroma()) txt_mod = register_module("txt_mod", FluxModulation(c.hiddenSize, /*isDouble=*/true));
  txt_attn = register_module("txt_attn", FluxSelfAttention(c.hiddenSize, c.numHeads, c.qkvBias));
  txt_mlp = register_module("txt_mlp", FluxMlp(c.hiddenSize, c.mlpHiddenDim()));
}

std::pair<torch::Tensor, torch::Tensor> FluxDoubleBlockImpl::forward(const torch::Tensor& img, const torch::Tensor& txt,
                                                                     const torch::Tensor& vec,
                                                                     const torch::Tensor& rotations,
                                                                     const torch::Tensor& mask) {
  // [0]: attention, [1]: MLP
  const std::vector<FluxModulationOut> imgMod = img_mod ? img_mod(vec) : fluxModulationFromVectors(vec.narrow(1, 0, 6));
  const std::vector<FluxModulationOut> txtMod = txt_mod ? txt_mod(vec) : fluxModulationFromVectors(vec.narrow(1, 6, 6));

  const int64_t t = txt.size(1);
  // One attention over [txt, img] (rotations are the joint sequence's), then each stream takes back
  // its own tokens: a split, whose backward writes the joint gradient once.
  const FluxQkv joint = jointRotatedQkv(*txt_attn, txtMod[0].normModulate(txt, fused), *img_attn,
                                        imgMod[0].normModulate(img, fused), rotations, fused);
  const std::vector<torch::Tensor> attended = fluxAttention(joint, mask).split_with_sizes({t, img.size(1)}, 1);
  const torch::Tensor &txtAttended = attended[0], &imgAttended = attended[1];

  torch::Tensor imgOut = imgMod[0].gatedAdd(img, img_attn->proj(imgAttended), fused);
  imgOut = imgMod[1].gatedAdd(imgOut, img_mlp(imgMod[1].normModulate(imgOut, fused)), fused);
  torch::Tensor txtOut = txtMod[0].gatedAdd(txt, txt_attn->proj(txtAttended), fused);
  txtOut = txtMod[1].gatedAdd(txtOut, txt_mlp(txtMod[1].normModulate(txtOut, fused)), fused);
  return {imgOut, txtOut};
}

}  // namespace sinter::models
