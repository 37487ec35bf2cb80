// The option registry. One entry per option, in the order configs are written.
// Defaults are sd-scripts' unless DESIGN.md says otherwise; keys are sd-scripts' spelling.
#include "core/registry.h"

#include <algorithm>

#include "core/optimizer_table.h"

// lupdate extracts labels and tooltips from the QT_TRANSLATE_NOOP markers; core has no Qt, so the
// marker is only an identity here and the app translates with QCoreApplication::translate("Option", ...).
#ifndef QT_TRANSLATE_NOOP
#define QT_TRANSLATE_NOOP(context, text) text
#endif

namespace sinter {
namespace {

constexpr std::uint8_t LORA = 1, DB = 2, FT = 4, TI = 8;
// Every training tab but Textual Inversion (train_textual_inversion.py has no such option).
constexpr std::uint8_t NOT_TI = LORA | DB | FT;
constexpr std::uint8_t SDXL = 1, FLUX = 2, SD15 = 4, SD2 = 8, SD3 = 16;
// The noise-prediction (DDPM) families. FLUX.1 and SD 3.x train by flow matching: sd-scripts' noise
// offsets, SNR weightings and v-prediction do not apply to them.
constexpr std::uint8_t DDPM = SDXL | SD15 | SD2;
constexpr std::uint8_t SD1_2 = SD15 | SD2;
// The flow-matching families whose scripts take sd-scripts' add_dit_training_arguments and T5-XXL.
constexpr std::uint8_t FLUX_SD3 = FLUX | SD3;
// Every family but SD 3.x: fp8_base (not in Sinter's SD 3.x), ip_noise_gamma (sd3_train_utils'
// timesteps take no input perturbation).
constexpr std::uint8_t NOT_SD3 = SDXL | FLUX | SD15 | SD2;

// Builder so each entry reads as one line of facts.
class Opt {
 public:
  Opt(const char* key, OptionType type, Value def, Section section, const char* label, const char* tooltip) {
    s_.key = key;
    s_.type = type;
    s_.defaultValue = std::move(def);
    s_.section = section;
    s_.label = label;
    s_.tooltip = tooltip;
  }
  Opt& tabs(std::uint8_t t) { s_.tabs = t; return *this; }
  Opt& families(std::uint8_t f) { s_.families = f; return *this; }
  Opt& choices(std::vector<std::string> c) { s_.choices = std::move(c); return *this; }
  Opt& min(double v) { s_.minValue = v; return *this; }
  Opt& max(double v) { s_.maxValue = v; return *this; }
  Opt& zeroIsUnset() { s_.unset = UnsetRule::Zero; return *this; }
  Opt& autoIsUnset() { s_.unset = UnsetRule::Auto; return *this; }
  Opt& file() { s_.pathKind = PathKind::File; return *this; }
  Opt& dir() { s_.pathKind = PathKind::Directory; return *this; }
  Opt& secret() { s_.secret = true; return *this; }
  Opt& advanced() { s_.advanced = true; return *this; }
  Opt& unsetMeans(const char* meaning) { s_.unsetMeaning = meaning; return *this; }
  Opt& deprecated() { s_.deprecated = true; return *this; }
  Opt& firstOfSdScriptsList(const char* others) { s_.firstOfSdScriptsList = others; return *this; }
  Opt& laterOfSdScriptsList(std::vector<const char*> keys) { s_.laterOfSdScriptsList = std::move(keys); return *this; }
  Opt& suggestions(std::vector<std::string> v) { s_.suggestions = std::move(v); return *this; }
  operator OptionSpec() const { return s_; }

 private:
  OptionSpec s_;
};

const Value none{};
Value B(bool b) { return Value{b}; }
Value I(long long i) { return Value{i}; }
Value D(double d) { return Value{d}; }
Value S(const char* s) { return Value{std::string(s)}; }

using T = OptionType;
using Sec = Section;

std::vector<OptionSpec> buildRegistry() {
  return {
      // ---- model ----
      Opt("model_family", T::Enum, S("auto"), Sec::Model, QT_TRANSLATE_NOOP("Option", "Model family"),
          QT_TRANSLATE_NOOP("Option", "SDXL, FLUX.1, SD 1.5, SD 2.x or SD 3.x (SD 3 Medium, SD 3.5 Medium or Large). Auto detects it "
                                      "from the checkpoint's tensor names."))
          .choices({"auto", "sdxl", "flux", "sd15", "sd2", "sd3"}).autoIsUnset(),
      Opt("training_type", T::Enum, S("lora"), Sec::Model, QT_TRANSLATE_NOOP("Option", "Training type"),
          QT_TRANSLATE_NOOP("Option", "LoRA network, DreamBooth, full fine-tune or textual inversion (an embedding for a new token; SD 1.x, "
                                      "SD 2.x and SDXL). Sinter's own key; sd-scripts ignores it."))
          .choices({"lora", "dreambooth", "finetune", "textual_inversion"}),
      Opt("pretrained_model_name_or_path", T::Path, none, Sec::Model, QT_TRANSLATE_NOOP("Option", "Pretrained model"),
          QT_TRANSLATE_NOOP("Option", "The base checkpoint: a single .safetensors file (SDXL, SD, SD 3.x) or the FLUX transformer."))
          .file(),
      Opt("vae", T::Path, none, Sec::Model, QT_TRANSLATE_NOOP("Option", "VAE"),
          QT_TRANSLATE_NOOP("Option", "A separate VAE to use instead of the checkpoint's own.")).families(DDPM | SD3).file().advanced(),
      Opt("no_half_vae", T::Bool, B(false), Sec::Model, QT_TRANSLATE_NOOP("Option", "No half-precision VAE"),
          QT_TRANSLATE_NOOP("Option", "Keep the VAE (FLUX's autoencoder) in float32 under mixed precision (it is float32 under fp16 anyway)."))
          .advanced(),
      Opt("ae", T::Path, none, Sec::Model, QT_TRANSLATE_NOOP("Option", "Autoencoder (ae)"),
          QT_TRANSLATE_NOOP("Option", "FLUX autoencoder file, ae.safetensors.")).families(FLUX).file(),
      Opt("model_type", T::Enum, S("flux"), Sec::Model, QT_TRANSLATE_NOOP("Option", "Model type"),
          QT_TRANSLATE_NOOP("Option", "flux: FLUX.1; chroma: Chroma1-HD / Chroma1-Base, FLUX.1's blocks with T5-XXL alone (no "
                                      "CLIP-L; apply_t5_attn_mask required; sd-scripts suggests guidance_scale 0). A Chroma "
                                      "checkpoint is recognised from its keys either way."))
          .families(FLUX).choices({"flux", "chroma"}),
      Opt("clip_l", T::Path, none, Sec::Model, QT_TRANSLATE_NOOP("Option", "CLIP-L"),
          QT_TRANSLATE_NOOP("Option", "CLIP-L text encoder file: FLUX.1's (not used by Chroma), or SD 3.x's (unset: the "
                                      "checkpoint's own).")).families(FLUX_SD3).file(),
      Opt("clip_g", T::Path, none, Sec::Model, QT_TRANSLATE_NOOP("Option", "CLIP-G"),
          QT_TRANSLATE_NOOP("Option", "SD 3.x CLIP-G (OpenCLIP bigG) text encoder file; the checkpoint's own when unset.")).families(SD3).file(),
      Opt("t5xxl", T::Path, none, Sec::Model, QT_TRANSLATE_NOOP("Option", "T5-XXL"),
          QT_TRANSLATE_NOOP("Option", "T5-XXL text encoder file (FLUX.1, SD 3.x).")).families(FLUX_SD3).file(),
      Opt("clip_tokenizer", T::Path, none, Sec::Model, QT_TRANSLATE_NOOP("Option", "CLIP tokenizer"),
          QT_TRANSLATE_NOOP("Option", "Folder with the CLIP tokenizer (vocab.json and merges.txt, or tokenizer.json); unset: the CLIP "
                                      "tokenizer that ships with Sinter. Nothing is downloaded."))
          .dir().unsetMeans(QT_TRANSLATE_NOOP("Option", "bundled")),
      Opt("t5_tokenizer", T::Path, none, Sec::Model, QT_TRANSLATE_NOOP("Option", "T5 tokenizer"),
          QT_TRANSLATE_NOOP("Option", "Folder with T5's spiece.model. Unset: the copy sd-scripts downloaded (google/t5-v1_1-xxl in the Hugging Face cache)."))
          .families(FLUX_SD3).dir().unsetMeans(QT_TRANSLATE_NOOP("Option", "sd-scripts' download (Hugging Face cache)")),
      Opt("v2", T::Bool, B(false), Sec::Model, QT_TRANSLATE_NOOP("Option", "SD 2.x"),
          QT_TRANSLATE_NOOP("Option", "The checkpoint is SD 2.x (OpenCLIP ViT-H text encoder), as sd-scripts' --v2. With model_family auto "
                                      "the checkpoint's keys decide; v2 on an SD 1.x checkpoint is an error.")).families(SD1_2),
      Opt("v_parameterization", T::Bool, B(false), Sec::Model, QT_TRANSLATE_NOOP("Option", "V-parameterization"),
          QT_TRANSLATE_NOOP("Option", "Train with the v-prediction target (SD 2.x 768-v and v-pred SDXL models).")).families(DDPM).advanced(),
      Opt("output_dir", T::Path, none, Sec::Model, QT_TRANSLATE_NOOP("Option", "Output folder"),
          QT_TRANSLATE_NOOP("Option", "Where trained models, states and samples are written.")).dir(),
      Opt("output_name", T::String, none, Sec::Model, QT_TRANSLATE_NOOP("Option", "Output name"),
          QT_TRANSLATE_NOOP("Option", "Base name of the saved files; \"last\" when empty.")),
      Opt("save_model_as", T::Enum, S("safetensors"), Sec::Model, QT_TRANSLATE_NOOP("Option", "Save model as"),
          QT_TRANSLATE_NOOP("Option", "File format of saved models. This build writes safetensors.")).choices({"safetensors"}),
      Opt("save_precision", T::Enum, none, Sec::Model, QT_TRANSLATE_NOOP("Option", "Save precision"),
          QT_TRANSLATE_NOOP("Option", "Precision of the saved weights; the training precision when unset.")).choices({"float", "fp16", "bf16"}),
      Opt("training_comment", T::String, none, Sec::Model, QT_TRANSLATE_NOOP("Option", "Training comment"),
          QT_TRANSLATE_NOOP("Option", "Stored in the saved file's metadata (ss_training_comment).")).advanced(),
      Opt("metadata_title", T::String, none, Sec::Model, QT_TRANSLATE_NOOP("Option", "Metadata title"),
          QT_TRANSLATE_NOOP("Option", "Title stored in the saved file's metadata (modelspec.title); the output name when empty.")).advanced(),
      Opt("metadata_author", T::String, none, Sec::Model, QT_TRANSLATE_NOOP("Option", "Metadata author"),
          QT_TRANSLATE_NOOP("Option", "Author stored in the saved file's metadata (modelspec.author).")).advanced(),
      Opt("metadata_description", T::String, none, Sec::Model, QT_TRANSLATE_NOOP("Option", "Metadata description"),
          QT_TRANSLATE_NOOP("Option", "Description stored in the saved file's metadata (modelspec.description).")).advanced(),
      Opt("metadata_license", T::String, none, Sec::Model, QT_TRANSLATE_NOOP("Option", "Metadata license"),
          QT_TRANSLATE_NOOP("Option", "License stored in the saved file's metadata (modelspec.license).")).advanced(),
      Opt("metadata_tags", T::String, none, Sec::Model, QT_TRANSLATE_NOOP("Option", "Metadata tags"),
          QT_TRANSLATE_NOOP("Option", "Comma-separated tags stored in the saved file's metadata (modelspec.tags).")).advanced(),
      Opt("no_metadata", T::Bool, B(false), Sec::Model, QT_TRANSLATE_NOOP("Option", "No metadata"),
          QT_TRANSLATE_NOOP("Option", "Write only the minimum metadata into saved files.")).advanced(),

      // ---- dataset ----
      Opt("train_data_dir", T::Path, none, Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Image folder"),
          QT_TRANSLATE_NOOP("Option", "Folder whose subfolders are named <repeats>_<class tokens>, e.g. 10_sks dog.")).dir(),
      Opt("reg_data_dir", T::Path, none, Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Regularisation folder"),
          QT_TRANSLATE_NOOP("Option", "Regularisation images, in the same <repeats>_<class tokens> layout.")).tabs(LORA | DB | TI).dir(),
      Opt("in_json", T::Path, none, Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Metadata file"),
          QT_TRANSLATE_NOOP("Option", "Fine-tune captions: sd-scripts' metadata JSON (image key to caption and tags) for the images in the image folder.")).tabs(LORA | FT | TI).file(),
      Opt("dataset_repeats", T::Int, I(1), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Dataset repeats"),
          QT_TRANSLATE_NOOP("Option", "How many times each fine-tune image is used per epoch (with a metadata file).")).tabs(LORA | FT | TI).min(1).max(100000),
      Opt("dataset_config", T::Path, none, Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Dataset config"),
          QT_TRANSLATE_NOOP("Option", "A dataset TOML ([general], [[datasets]], [[datasets.subsets]]) instead of the folders.")).file().advanced(),
      Opt("resolution", T::String, none, Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Resolution"),
          QT_TRANSLATE_NOOP("Option", "Training resolution, \"1024,1024\" (width,height) or \"1024\".")),
      Opt("enable_bucket", T::Bool, B(false), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Enable buckets"),
          QT_TRANSLATE_NOOP("Option", "Group images by aspect ratio instead of cropping them all to one size.")),
      Opt("min_bucket_reso", T::Int, I(256), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Minimum bucket resolution"),
          QT_TRANSLATE_NOOP("Option", "Smallest bucket side in pixels.")).min(64).max(8192),
      Opt("max_bucket_reso", T::Int, I(1024), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Maximum bucket resolution"),
          QT_TRANSLATE_NOOP("Option", "Largest bucket side in pixels.")).min(64).max(8192),
      Opt("bucket_reso_steps", T::Int, I(64), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Bucket resolution steps"),
          QT_TRANSLATE_NOOP("Option", "Bucket sides are multiples of this; 64 is recommended.")).min(8).max(1024).advanced(),
      Opt("bucket_no_upscale", T::Bool, B(false), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "No upscaling in buckets"),
          QT_TRANSLATE_NOOP("Option", "Never enlarge an image to fill a bucket; small images get their own smaller bucket.")).advanced(),
      Opt("caption_extension", T::String, S(".caption"), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Caption extension"),
          QT_TRANSLATE_NOOP("Option", "Extension of the caption file beside each image.")).suggestions({".txt", ".caption"}),
      Opt("caption_separator", T::String, S(","), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Caption separator"),
          QT_TRANSLATE_NOOP("Option", "Separator between the tags of a caption, for shuffling and dropping tags.")).advanced(),
      Opt("shuffle_caption", T::Bool, B(false), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Shuffle captions"),
          QT_TRANSLATE_NOOP("Option", "Shuffle the comma-separated tags of each caption every time it is used.")),
      Opt("keep_tokens", T::Int, I(0), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Keep tokens"),
          QT_TRANSLATE_NOOP("Option", "Number of leading tags kept in place when shuffling or dropping tags.")).min(0).max(255),
      Opt("keep_tokens_separator", T::String, S(""), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Keep tokens separator"),
          QT_TRANSLATE_NOOP("Option", "A separator in the caption (e.g. |||): the tags before it are kept in place, as keep_tokens does."))
          .advanced(),
      Opt("secondary_separator", T::String, none, Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Secondary separator"),
          QT_TRANSLATE_NOOP("Option", "Joins tags that shuffle and drop together as one (e.g. ;;;), written as a comma in the caption."))
          .advanced(),
      Opt("enable_wildcard", T::Bool, B(false), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Wildcards"),
          QT_TRANSLATE_NOOP("Option", "{a|b|c} in a caption picks one at random; a multi-line caption file picks a random line.")).advanced(),
      Opt("caption_prefix", T::String, none, Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Caption prefix"),
          QT_TRANSLATE_NOOP("Option", "Text put before every caption.")).advanced(),
      Opt("caption_suffix", T::String, none, Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Caption suffix"),
          QT_TRANSLATE_NOOP("Option", "Text put after every caption.")).advanced(),
      Opt("token_warmup_min", T::Int, I(1), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Token warm-up minimum"),
          QT_TRANSLATE_NOOP("Option", "Tags used at the first step of the token warm-up.")).min(1).max(1000000).advanced(),
      Opt("token_warmup_step", T::Float, D(0.0), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Token warm-up steps"),
          QT_TRANSLATE_NOOP("Option", "Steps until all tags are used (below 1: a fraction of the training steps); 0: no warm-up."))
          .min(0).max(1e9).advanced(),
      Opt("caption_dropout_rate", T::Float, D(0.0), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Caption dropout rate"),
          QT_TRANSLATE_NOOP("Option", "Probability of training an image with an empty caption.")).tabs(NOT_TI).min(0).max(1).advanced(),
      Opt("caption_tag_dropout_rate", T::Float, D(0.0), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Tag dropout rate"),
          QT_TRANSLATE_NOOP("Option", "Probability of dropping each tag (after keep_tokens).")).tabs(NOT_TI).min(0).max(1).advanced(),
      Opt("caption_dropout_every_n_epochs", T::Int, I(0), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Caption dropout every N epochs"),
          QT_TRANSLATE_NOOP("Option", "Train every Nth epoch with empty captions; 0 never.")).tabs(NOT_TI).min(0).max(1000000).advanced(),
      Opt("flip_aug", T::Bool, B(false), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Flip augmentation"),
          QT_TRANSLATE_NOOP("Option", "Randomly mirror images horizontally.")).advanced(),
      Opt("random_crop", T::Bool, B(false), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Random crop"),
          QT_TRANSLATE_NOOP("Option", "Crop at a random position instead of the centre. Not with cached latents.")).advanced(),
      Opt("alpha_mask", T::Bool, B(false), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Alpha channel as loss mask"),
          QT_TRANSLATE_NOOP("Option", "Weight each pixel's loss by the image's alpha channel (transparent pixels are not learned). Images without alpha count as opaque.")).advanced(),
      Opt("masked_loss", T::Bool, B(false), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Masked loss"),
          QT_TRANSLATE_NOOP("Option", "Weight each pixel's loss by a mask image's red channel (white learned, black ignored), from conditioning_data_dir.")).advanced(),
      Opt("conditioning_data_dir", T::Path, none, Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Mask image folder"),
          QT_TRANSLATE_NOOP("Option", "With masked loss: a folder of mask images named as the training images, each of its image's size.")).dir().advanced(),
      Opt("color_aug", T::Bool, B(false), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Colour augmentation"),
          QT_TRANSLATE_NOOP("Option", "sd-scripts' weak colour jitter: a third of the images get a small hue shift or gamma. Not with cached latents.")).advanced(),
      Opt("resize_interpolation", T::Enum, none, Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Resize interpolation"),
          QT_TRANSLATE_NOOP("Option", "Filter used to resize images; area when shrinking and lanczos when enlarging when unset."))
          .choices({"lanczos", "nearest", "bilinear", "bicubic", "area"}).advanced(),
      Opt("cache_latents", T::Bool, B(false), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Cache latents"),
          QT_TRANSLATE_NOOP("Option", "Encode every image once with the VAE and keep the latents in memory.")),
      Opt("cache_latents_to_disk", T::Bool, B(false), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Cache latents to disk"),
          QT_TRANSLATE_NOOP("Option", "Keep cached latents in files beside the images, reused while image and settings match.")),
      Opt("cache_text_encoder_outputs", T::Bool, B(false), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Cache text encoder outputs"),
          QT_TRANSLATE_NOOP("Option", "Encode captions once. Needs frozen text encoders; not with caption shuffling or dropout."))
          .tabs(NOT_TI).families(SDXL | FLUX_SD3),
      Opt("cache_text_encoder_outputs_to_disk", T::Bool, B(false), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Cache text encoder outputs to disk"),
          QT_TRANSLATE_NOOP("Option", "Keep cached text encoder outputs in files beside the captions.")).tabs(NOT_TI).families(SDXL | FLUX_SD3),
      Opt("vae_batch_size", T::Int, I(1), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "VAE batch size"),
          QT_TRANSLATE_NOOP("Option", "Images encoded at once while caching latents.")).min(1).max(1024).advanced(),
      Opt("max_data_loader_n_workers", T::Int, I(8), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Data loader workers"),
          QT_TRANSLATE_NOOP("Option", "Threads that load and prepare images.")).min(0).max(256).advanced(),
      Opt("prior_loss_weight", T::Float, D(1.0), Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Prior loss weight"),
          QT_TRANSLATE_NOOP("Option", "Loss weight of regularisation images.")).tabs(LORA | DB | TI).min(0).max(1000),
      Opt("max_token_length", T::Int, none, Sec::Dataset, QT_TRANSLATE_NOOP("Option", "Max token length"),
          QT_TRANSLATE_NOOP("Option", "Caption length in tokens: 75 when unset, or 150 or 225 (encoded in 75-token chunks)."))
          .families(DDPM).choices({"75", "150", "225"}).advanced(),

      // ---- training ----
      Opt("train_batch_size", T::Int, I(1), Sec::Training, QT_TRANSLATE_NOOP("Option", "Batch size"),
          QT_TRANSLATE_NOOP("Option", "Images per step.")).min(1).max(4096),
      Opt("max_train_steps", T::Int, I(1600), Sec::Training, QT_TRANSLATE_NOOP("Option", "Max train steps"),
          QT_TRANSLATE_NOOP("Option", "Total optimisation steps; max_train_epochs overrides it.")).min(1).max(1e12),
      Opt("max_train_epochs", T::Int, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "Max train epochs"),
          QT_TRANSLATE_NOOP("Option", "Train for this many epochs instead of max_train_steps.")).min(1).max(1e9),
      Opt("gradient_accumulation_steps", T::Int, I(1), Sec::Training, QT_TRANSLATE_NOOP("Option", "Gradient accumulation steps"),
          QT_TRANSLATE_NOOP("Option", "Batches whose gradients are summed before each optimiser step.")).min(1).max(4096).advanced(),
      Opt("mixed_precision", T::Enum, S("no"), Sec::Training, QT_TRANSLATE_NOOP("Option", "Mixed precision"),
          QT_TRANSLATE_NOOP("Option", "Compute precision: no (fp32), fp16 or bf16.")).choices({"no", "fp16", "bf16"}),
      Opt("full_bf16", T::Bool, B(false), Sec::Training, QT_TRANSLATE_NOOP("Option", "Full bf16"),
          QT_TRANSLATE_NOOP("Option", "Keep trained weights and gradients in bf16 too (needs mixed_precision bf16).")).advanced(),
      Opt("full_fp16", T::Bool, B(false), Sec::Training, QT_TRANSLATE_NOOP("Option", "Full fp16"),
          QT_TRANSLATE_NOOP("Option", "Keep trained weights and gradients in fp16 too (needs mixed_precision fp16).")).advanced(),
      Opt("fp8_base", T::Bool, B(false), Sec::Training, QT_TRANSLATE_NOOP("Option", "fp8 base model"),
          QT_TRANSLATE_NOOP("Option", "Store the frozen base model in fp8 to save memory.")).advanced(),
      Opt("fp8_base_unet", T::Bool, B(false), Sec::Training, QT_TRANSLATE_NOOP("Option", "fp8 base U-Net/DiT only"),
          QT_TRANSLATE_NOOP("Option", "Store only the frozen U-Net/DiT in fp8; the text encoders stay in the training precision."))
          .tabs(LORA).advanced(),
      Opt("fp8_scaled", T::Bool, B(false), Sec::Training, QT_TRANSLATE_NOOP("Option", "fp8 scaled base"),
          QT_TRANSLATE_NOOP("Option", "With fp8_base, store each frozen Linear weight in fp8 with a scale from its largest value (musubi-tuner's fp8_scaled) instead of a plain cast. Sinter's own key; sd-scripts ignores it."))
          .families(FLUX).tabs(LORA).advanced(),
      Opt("fp8_fast", T::Bool, B(false), Sec::Training, QT_TRANSLATE_NOOP("Option", "fp8 fast compute"),
          QT_TRANSLATE_NOOP("Option", "With fp8_scaled, multiply the frozen base's weights on FP8 tensor cores (GPUs of compute capability 8.9 or higher) with the activations in fp8; LoRA stays in the training precision. Faster steps, slightly less exact. Sinter's own key; sd-scripts ignores it."))
          .families(FLUX).tabs(LORA).advanced(),
      Opt("fp8_fast_backward", T::Bool, B(true), Sec::Training, QT_TRANSLATE_NOOP("Option", "fp8 fast backward"),
          QT_TRANSLATE_NOOP("Option", "With fp8_fast, compute the base's input gradients on FP8 tensor cores too (the gradients in e4m3, scaled per token); off keeps them in the training precision. Sinter's own key; sd-scripts ignores it."))
          .families(FLUX).tabs(LORA).advanced(),
      Opt("gradient_checkpointing", T::Bool, B(false), Sec::Training, QT_TRANSLATE_NOOP("Option", "Gradient checkpointing"),
          QT_TRANSLATE_NOOP("Option", "Recompute activations in the backward pass: less memory, slower steps.")),
      Opt("cpu_offload_checkpointing", T::Bool, B(false), Sec::Training, QT_TRANSLATE_NOOP("Option", "Offload checkpoints to CPU"),
          QT_TRANSLATE_NOOP("Option", "With gradient checkpointing (turned on by this), keep the blocks' saved inputs in CPU memory until the backward pass. Not with blocks_to_swap."))
          .families(SDXL | FLUX_SD3).advanced(),
      Opt("seed", T::Int, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "Seed"),
          QT_TRANSLATE_NOOP("Option", "Random seed; the same seed gives the same run. Random when unset.")).min(0).max(4294967295.0),
      Opt("max_grad_norm", T::Float, D(1.0), Sec::Training, QT_TRANSLATE_NOOP("Option", "Max gradient norm"),
          QT_TRANSLATE_NOOP("Option", "Clip gradients to this global norm; 0 disables clipping.")).min(0).max(1e6).advanced(),
      Opt("noise_offset", T::Float, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "Noise offset"),
          QT_TRANSLATE_NOOP("Option", "Adds a per-channel offset to the noise (helps very dark or bright images), e.g. 0.0357."))
          .families(DDPM).min(0).max(1).advanced(),
      Opt("noise_offset_random_strength", T::Bool, B(false), Sec::Training, QT_TRANSLATE_NOOP("Option", "Random noise offset strength"),
          QT_TRANSLATE_NOOP("Option", "Draw the noise offset's strength uniformly between 0 and noise_offset at each step."))
          .families(DDPM).advanced(),
      Opt("adaptive_noise_scale", T::Float, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "Adaptive noise scale"),
          QT_TRANSLATE_NOOP("Option", "Adds this times each latent channel's mean magnitude to noise_offset (needs noise_offset), e.g. 0.00357."))
          .families(DDPM).min(-1).max(1).advanced(),
      Opt("multires_noise_iterations", T::Int, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "Multi-resolution noise iterations"),
          QT_TRANSLATE_NOOP("Option", "Pyramid noise levels, e.g. 6-10; 0 or unset: off, as in sd-scripts."))
          .families(DDPM).unsetMeans(QT_TRANSLATE_NOOP("Option", "off")).min(0).max(64).zeroIsUnset().advanced(),
      Opt("multires_noise_discount", T::Float, D(0.3), Sec::Training, QT_TRANSLATE_NOOP("Option", "Multi-resolution noise discount"),
          QT_TRANSLATE_NOOP("Option", "Weight of each coarser noise level.")).families(DDPM).min(0).max(1).advanced(),
      Opt("min_snr_gamma", T::Float, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "Min-SNR gamma"),
          QT_TRANSLATE_NOOP("Option", "Min-SNR loss weighting; 5 is the paper's recommendation.")).families(DDPM).min(0).max(1000).advanced(),
      Opt("zero_terminal_snr", T::Bool, B(false), Sec::Training, QT_TRANSLATE_NOOP("Option", "Zero terminal SNR"),
          QT_TRANSLATE_NOOP("Option", "Rescale the noise schedule so that the last timestep is pure noise (use with v-parameterization)."))
          .families(DDPM).advanced(),
      Opt("debiased_estimation_loss", T::Bool, B(false), Sec::Training, QT_TRANSLATE_NOOP("Option", "Debiased estimation loss"),
          QT_TRANSLATE_NOOP("Option", "Weight each sample's loss by 1/sqrt(SNR) of its timestep (capped at 1000)."))
          .families(DDPM).advanced(),
      Opt("scale_v_pred_loss_like_noise_pred", T::Bool, B(false), Sec::Training, QT_TRANSLATE_NOOP("Option", "Scale v-prediction loss like noise prediction"),
          QT_TRANSLATE_NOOP("Option", "Scale the v-prediction loss by SNR/(SNR+1), like a noise-prediction loss (needs v_parameterization)."))
          .families(DDPM).advanced(),
      Opt("v_pred_like_loss", T::Float, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "v-prediction-like loss"),
          QT_TRANSLATE_NOOP("Option", "Add this much of a v-prediction-like loss (the loss divided by SNR/(SNR+1)), e.g. 0.1."))
          .families(DDPM).min(0).max(100).advanced(),
      Opt("loss_type", T::Enum, S("l2"), Sec::Training, QT_TRANSLATE_NOOP("Option", "Loss type"),
          QT_TRANSLATE_NOOP("Option", "l2 (MSE), l1, huber or smooth_l1.")).choices({"l2", "l1", "huber", "smooth_l1"}).advanced(),
      Opt("huber_c", T::Float, D(0.1), Sec::Training, QT_TRANSLATE_NOOP("Option", "Huber c"),
          QT_TRANSLATE_NOOP("Option", "Huber loss parameter.")).min(0).max(100).advanced(),
      Opt("huber_schedule", T::Enum, S("snr"), Sec::Training, QT_TRANSLATE_NOOP("Option", "Huber schedule"),
          QT_TRANSLATE_NOOP("Option", "How the Huber parameter follows the timestep: constant, exponential or snr (not for FLUX)."))
          .choices({"constant", "exponential", "snr"}).advanced(),
      Opt("huber_scale", T::Float, D(1.0), Sec::Training, QT_TRANSLATE_NOOP("Option", "Huber scale"),
          QT_TRANSLATE_NOOP("Option", "Scale of the Huber parameter (constant and exponential schedules).")).min(0).max(100).advanced(),
      Opt("ip_noise_gamma", T::Float, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "Input perturbation noise gamma"),
          QT_TRANSLATE_NOOP("Option", "Input perturbation noise, e.g. 0.1.")).families(NOT_SD3).min(0).max(1).advanced(),
      Opt("ip_noise_gamma_random_strength", T::Bool, B(false), Sec::Training, QT_TRANSLATE_NOOP("Option", "Random input perturbation strength"),
          QT_TRANSLATE_NOOP("Option", "Draw the input perturbation's strength uniformly between 0 and ip_noise_gamma at each step."))
          .families(NOT_SD3).advanced(),
      Opt("min_timestep", T::Int, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "Min timestep"),
          QT_TRANSLATE_NOOP("Option", "Lowest timestep sampled (0 when unset).")).min(0).max(1000).advanced(),
      Opt("max_timestep", T::Int, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "Max timestep"),
          QT_TRANSLATE_NOOP("Option", "Timesteps are sampled below this (1000 when unset).")).min(1).max(1000).advanced(),
      // Validation (train_network.py): held-out images, their loss at fixed timesteps, no training.
      Opt("validation_split", T::Float, D(0.0), Sec::Training, QT_TRANSLATE_NOOP("Option", "Validation split"),
          QT_TRANSLATE_NOOP("Option", "Fraction of each dataset's images held out for validation (0: no validation), e.g. 0.1. "
                                      "Regularisation images are never held out."))
          .min(0).max(1).advanced(),
      Opt("validation_seed", T::Int, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "Validation seed"),
          QT_TRANSLATE_NOOP("Option", "Seed of which images are held out and of the validation noise.")).unsetMeans(QT_TRANSLATE_NOOP("Option", "the run's seed"))
          .min(0).max(4294967295.0).advanced(),
      Opt("validate_every_n_steps", T::Int, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "Validate every N steps"),
          QT_TRANSLATE_NOOP("Option", "Also compute the validation loss every N steps, besides at the end of epochs."))
          .min(1).max(1e12).advanced(),
      Opt("validate_every_n_epochs", T::Int, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "Validate every N epochs"),
          QT_TRANSLATE_NOOP("Option", "Compute the validation loss at the end of every Nth epoch.")).unsetMeans(QT_TRANSLATE_NOOP("Option", "every epoch"))
          .min(1).max(1e9).advanced(),
      Opt("max_validation_steps", T::Int, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "Max validation batches"),
          QT_TRANSLATE_NOOP("Option", "Validate on at most this many batches of the held-out images.")).unsetMeans(QT_TRANSLATE_NOOP("Option", "all of them"))
          .min(1).max(1e12).advanced(),
      // Sinter's own (issue 57): what the validation loss decides. Both need validation_split.
      Opt("save_best_k", T::Int, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "Keep best K by validation loss"),
          QT_TRANSLATE_NOOP("Option", "After each validation pass, keep the K files with the lowest validation loss so far "
                                      "(<output_name>-best-step<step>-loss<loss>.safetensors), deleting the one that drops out. "
                                      "Needs validation_split. Sinter's own key; sd-scripts ignores it."))
          .unsetMeans(QT_TRANSLATE_NOOP("Option", "off")).min(1).max(1000).advanced(),
      Opt("early_stop_patience", T::Int, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "Early stop patience"),
          QT_TRANSLATE_NOOP("Option", "End the run (saved as at its end) after this many validation passes in a row without a "
                                      "new lowest validation loss. Needs validation_split. Sinter's own key; sd-scripts ignores it."))
          .unsetMeans(QT_TRANSLATE_NOOP("Option", "off")).min(1).max(1e9).advanced(),
      Opt("early_stop_min_delta", T::Float, D(0.0), Sec::Training, QT_TRANSLATE_NOOP("Option", "Early stop min improvement"),
          QT_TRANSLATE_NOOP("Option", "How much lower than the best so far a validation loss must be to count as a new best for "
                                      "early_stop_patience (0: any decrease). Sinter's own key; sd-scripts ignores it."))
          .min(0).max(1e6).advanced(),
      // Sinter's own (issue 57): the EMA of the trained weights (runner/train/optim/weight_ema.h). OneTrainer's
      // ema / ema_decay / ema_update_step_interval, ai-toolkit's ema_config.
      Opt("ema_decay", T::Float, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "EMA decay"),
          QT_TRANSLATE_NOOP("Option", "Keep an exponential moving average (EMA) of the trained weights with this decay: saved beside "
                                      "every saved model as <name>-ema.safetensors and in the training state. 0.999 averages about the "
                                      "last 1,000 updates; below 1. Sinter's own key; sd-scripts ignores it."))
          .unsetMeans(QT_TRANSLATE_NOOP("Option", "off")).zeroIsUnset().min(0).max(1).advanced(),
      Opt("ema_update_every", T::Int, I(5), Sec::Training, QT_TRANSLATE_NOOP("Option", "EMA update every N steps"),
          QT_TRANSLATE_NOOP("Option", "Update the EMA after every N-th step (OneTrainer's update step interval). Sinter's own key; "
                                      "sd-scripts ignores it."))
          .min(1).max(1e9).advanced(),
      Opt("ema_device", T::Enum, S("gpu"), Sec::Training, QT_TRANSLATE_NOOP("Option", "EMA device"),
          QT_TRANSLATE_NOOP("Option", "Where the EMA is kept: gpu, beside the weights on the training device (as much memory as the "
                                      "trained weights in float32), or cpu, in host memory (the weights are copied there at each update "
                                      "and averaged while training goes on). Sinter's own key; sd-scripts ignores it."))
          .choices({"gpu", "cpu"}).advanced(),
      Opt("ema_warmup", T::Bool, B(true), Sec::Training, QT_TRANSLATE_NOOP("Option", "EMA warm-up"),
          QT_TRANSLATE_NOOP("Option", "Start with a smaller decay, the least of ema_decay and (1 + k) / (10 + k) at the k-th update (as "
                                      "OneTrainer does), so that the EMA soon leaves the starting weights (a new LoRA's are zero). Off: "
                                      "ema_decay from the first update. Sinter's own key; sd-scripts ignores it."))
          .advanced(),
      Opt("ema_for_samples", T::Bool, B(true), Sec::Training, QT_TRANSLATE_NOOP("Option", "Samples from the EMA"),
          QT_TRANSLATE_NOOP("Option", "Render sample images with the EMA's weights (the trained weights are put back after). Sinter's "
                                      "own key; sd-scripts ignores it."))
          .advanced(),
      Opt("sdpa", T::Bool, B(false), Sec::Training, QT_TRANSLATE_NOOP("Option", "Scaled dot-product attention"),
          QT_TRANSLATE_NOOP("Option", "Use fused scaled dot-product attention (Sinter uses the fastest attention it has either way).")).advanced(),
      Opt("xformers", T::Bool, B(false), Sec::Training, QT_TRANSLATE_NOOP("Option", "xformers"),
          QT_TRANSLATE_NOOP("Option", "sd-scripts' xformers switch; Sinter uses its own fused attention instead.")).advanced(),
      Opt("split_attn", T::Bool, B(false), Sec::Training, QT_TRANSLATE_NOOP("Option", "Split attention"),
          QT_TRANSLATE_NOOP("Option", "Compute attention one sample at a time to save memory. Not with fullgraph compile."))
          .families(SDXL | FLUX).advanced(),
      Opt("blocks_to_swap", T::Int, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "Blocks to swap"),
          QT_TRANSLATE_NOOP("Option", "FLUX or SD 3.x blocks kept in CPU memory and swapped in when needed (FLUX: 16/22/28 for 12/10/8 GB GPUs)."))
          .families(FLUX_SD3).min(0).max(57).advanced(),
      // flux_train_network.py's deprecated split mode: blocks_to_swap = 18 when that is unset (the preflight resolves it).
      Opt("split_mode", T::Bool, B(false), Sec::Training, QT_TRANSLATE_NOOP("Option", "Split mode (deprecated)"),
          QT_TRANSLATE_NOOP("Option", "sd-scripts' deprecated FLUX option: blocks to swap 18 when that is not set."))
          .families(FLUX).tabs(LORA).deprecated().advanced(),
      Opt("ddp_comm_hook", T::Enum, S("no"), Sec::Training, QT_TRANSLATE_NOOP("Option", "Gradient communication"),
          QT_TRANSLATE_NOOP("Option", "With several GPUs: the precision gradients are all-reduced in. no: their own (float32); bf16 or fp16: divided by the GPUs, rounded to 16 bits for the transfer and widened back, as DDP's compression hooks (accelerate's comm_hook). Half the traffic; the averaged gradient keeps 8 (bf16) or 11 (fp16) significant bits. Sinter's own key; sd-scripts has no such option."))
          .choices({"no", "fp16", "bf16"}).advanced(),
      Opt("vram_budget_gb", T::Float, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "VRAM budget (GiB)"),
          QT_TRANSLATE_NOOP("Option", "GPU memory the run may use: Sinter chooses fp8_base, blocks_to_swap, gradient checkpointing, "
                                      "checkpoint offload and (fine-tune) fused backward, the fastest plan that fits; options you set "
                                      "to other than their defaults are kept. 0 or unset: off. Sinter's own key; sd-scripts ignores it."))
          .families(SDXL | FLUX).unsetMeans(QT_TRANSLATE_NOOP("Option", "off")).min(0).max(4096).zeroIsUnset().advanced(),
      Opt("clip_skip", T::Int, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "CLIP skip"),
          QT_TRANSLATE_NOOP("Option", "Use the output of this many layers from the end of the text encoder.")).families(SD1_2).min(1).max(12),
      Opt("train_text_encoder", T::Bool, B(false), Sec::Training, QT_TRANSLATE_NOOP("Option", "Train text encoders"),
          QT_TRANSLATE_NOOP("Option", "Also train the text encoders (SDXL, SD 1.x/2.x and SD 3.x's CLIPs, DreamBooth and fine-tune).")).tabs(DB | FT).families(SDXL | SD1_2 | SD3),
      Opt("learning_rate_te1", T::Float, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "Learning rate TE1"),
          QT_TRANSLATE_NOOP("Option", "Learning rate of CLIP-L; learning_rate when unset.")).tabs(DB | FT).families(SDXL | SD3).min(0).max(1),
      Opt("learning_rate_te2", T::Float, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "Learning rate TE2"),
          QT_TRANSLATE_NOOP("Option", "Learning rate of the second text encoder (SDXL's OpenCLIP bigG, SD 3.x's CLIP-G); learning_rate when unset.")).tabs(DB | FT).families(SDXL | SD3).min(0).max(1),
      // sd3_train.py's: T5-XXL trained whole beside the CLIPs.
      Opt("train_t5xxl", T::Bool, B(false), Sec::Training, QT_TRANSLATE_NOOP("Option", "Train T5-XXL"),
          QT_TRANSLATE_NOOP("Option", "SD 3.x: also train T5-XXL whole, at learning_rate_te3 (with train_text_encoder; its outputs are not cached)."))
          .tabs(DB | FT).families(SD3).advanced(),
      Opt("learning_rate_te3", T::Float, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "Learning rate TE3"),
          QT_TRANSLATE_NOOP("Option", "Learning rate of SD 3.x's T5-XXL with train_t5xxl; learning_rate when unset, 0 leaves it as it is."))
          .tabs(DB | FT).families(SD3).min(0).max(1).advanced(),
      Opt("block_lr", T::String, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "U-Net block learning rates"),
          QT_TRANSLATE_NOOP("Option", "23 comma-separated learning rates for the U-Net's blocks (time/label embedding, 9 input, 3 middle, "
                                      "9 output, out), used instead of learning_rate for the U-Net; 0 freezes a block.")).tabs(DB | FT).families(SDXL).advanced(),
      Opt("guidance_scale", T::Float, D(3.5), Sec::Training, QT_TRANSLATE_NOOP("Option", "Guidance scale"),
          QT_TRANSLATE_NOOP("Option", "FLUX.1-dev guidance value fed to the model while training.")).families(FLUX).min(0).max(100),
      Opt("timestep_sampling", T::Enum, S("sigma"), Sec::Training, QT_TRANSLATE_NOOP("Option", "Timestep sampling"),
          QT_TRANSLATE_NOOP("Option", "How FLUX timesteps are drawn.")).families(FLUX).choices({"sigma", "uniform", "sigmoid", "shift", "flux_shift"}),
      Opt("sigmoid_scale", T::Float, D(1.0), Sec::Training, QT_TRANSLATE_NOOP("Option", "Sigmoid scale"),
          QT_TRANSLATE_NOOP("Option", "Scale for sigmoid and shift timestep sampling.")).families(FLUX).min(0).max(100).advanced(),
      Opt("discrete_flow_shift", T::Float, D(3.0), Sec::Training, QT_TRANSLATE_NOOP("Option", "Discrete flow shift"),
          QT_TRANSLATE_NOOP("Option", "Shift for the shift timestep sampling.")).families(FLUX).min(0).max(100).advanced(),
      Opt("model_prediction_type", T::Enum, S("sigma_scaled"), Sec::Training, QT_TRANSLATE_NOOP("Option", "Model prediction type"),
          QT_TRANSLATE_NOOP("Option", "How the FLUX model output is turned into the prediction.")).families(FLUX)
          .choices({"raw", "additive", "sigma_scaled"}).advanced(),
      Opt("weighting_scheme", T::Enum, S("uniform"), Sec::Training, QT_TRANSLATE_NOOP("Option", "Weighting scheme"),
          QT_TRANSLATE_NOOP("Option", "Density of the timesteps drawn and the loss weighting: FLUX.1's with sigma timestep sampling "
                                      "(and sigma_scaled predictions), SD 3.x's always."))
          .families(FLUX_SD3).choices({"uniform", "none", "logit_normal", "mode", "sigma_sqrt", "cosmap"}).advanced(),
      Opt("logit_mean", T::Float, D(0.0), Sec::Training, QT_TRANSLATE_NOOP("Option", "Logit mean"),
          QT_TRANSLATE_NOOP("Option", "Mean of the logit_normal weighting scheme.")).families(FLUX_SD3).min(-100).max(100).advanced(),
      Opt("logit_std", T::Float, D(1.0), Sec::Training, QT_TRANSLATE_NOOP("Option", "Logit std"),
          QT_TRANSLATE_NOOP("Option", "Standard deviation of the logit_normal weighting scheme.")).families(FLUX_SD3).min(0).max(100).advanced(),
      Opt("mode_scale", T::Float, D(1.29), Sec::Training, QT_TRANSLATE_NOOP("Option", "Mode scale"),
          QT_TRANSLATE_NOOP("Option", "Scale of the mode weighting scheme.")).families(FLUX_SD3).min(-100).max(100).advanced(),
      Opt("t5xxl_max_token_length", T::Int, none, Sec::Training, QT_TRANSLATE_NOOP("Option", "T5-XXL max token length"),
          QT_TRANSLATE_NOOP("Option", "T5 sequence length; when unset 512 for FLUX.1 dev, 256 for schnell and for SD 3.x."))
          .families(FLUX_SD3).min(1).max(512).advanced(),
      Opt("apply_t5_attn_mask", T::Bool, B(false), Sec::Training, QT_TRANSLATE_NOOP("Option", "Apply T5 attention mask"),
          QT_TRANSLATE_NOOP("Option", "Mask T5 padding tokens in attention.")).families(FLUX_SD3).advanced(),
      // SD 3.x (sd3_train_utils.add_sd3_training_arguments, for sd3_train_network.py and sd3_train.py).
      Opt("apply_lg_attn_mask", T::Bool, B(false), Sec::Training, QT_TRANSLATE_NOOP("Option", "Apply CLIP-L/G attention mask"),
          QT_TRANSLATE_NOOP("Option", "Mask the padding tokens in CLIP-L's and CLIP-G's attention.")).families(SD3).advanced(),
      Opt("training_shift", T::Float, D(1.0), Sec::Training, QT_TRANSLATE_NOOP("Option", "Training shift"),
          QT_TRANSLATE_NOOP("Option", "Discrete flow shift of the training timesteps, on top of the weighting scheme: above 1 toward "
                                      "noise (overall structure), below 1 toward detail; 1 no shift."))
          .families(SD3).min(0).max(100),
      Opt("clip_l_dropout_rate", T::Float, D(0.0), Sec::Training, QT_TRANSLATE_NOOP("Option", "CLIP-L dropout rate"),
          QT_TRANSLATE_NOOP("Option", "Probability of training an image with CLIP-L's output zeroed.")).families(SD3).min(0).max(1).advanced(),
      Opt("clip_g_dropout_rate", T::Float, D(0.0), Sec::Training, QT_TRANSLATE_NOOP("Option", "CLIP-G dropout rate"),
          QT_TRANSLATE_NOOP("Option", "Probability of training an image with CLIP-G's output zeroed.")).families(SD3).min(0).max(1).advanced(),
      Opt("t5_dropout_rate", T::Float, D(0.0), Sec::Training, QT_TRANSLATE_NOOP("Option", "T5 dropout rate"),
          QT_TRANSLATE_NOOP("Option", "Probability of training an image with T5-XXL's output zeroed.")).families(SD3).min(0).max(1).advanced(),
      Opt("enable_scaled_pos_embed", T::Bool, B(false), Sec::Training, QT_TRANSLATE_NOOP("Option", "Scaled position embeddings"),
          QT_TRANSLATE_NOOP("Option", "Scale the position embeddings to each training resolution (multi-resolution training). SD 3.5 Medium only."))
          .families(SD3).advanced(),
      Opt("pos_emb_random_crop_rate", T::Float, D(0.0), Sec::Training, QT_TRANSLATE_NOOP("Option", "Position embedding random crop rate"),
          QT_TRANSLATE_NOOP("Option", "Probability of cropping the position embeddings at a random place. SD 3.5 Medium only."))
          .families(SD3).min(0).max(1).advanced(),

      // ---- network ----
      Opt("network_module", T::Enum, none, Sec::Network, QT_TRANSLATE_NOOP("Option", "Network module"),
          QT_TRANSLATE_NOOP("Option", "networks.lora (SDXL, SD), networks.lora_flux (FLUX) or networks.lora_sd3 (SD 3.x); chosen from the family when unset. "
                                      "lycoris.kohya trains LyCORIS's LoCon, LoHa, LoKr, IA3 or full (network_args algo=...)."))
          .tabs(LORA).choices({"networks.lora", "networks.lora_flux", "networks.lora_sd3", "lycoris.kohya"}),
      Opt("network_dim", T::Int, none, Sec::Network, QT_TRANSLATE_NOOP("Option", "Network rank (dim)"),
          QT_TRANSLATE_NOOP("Option", "LoRA rank; 4 when unset. With LyCORIS's LoKr a rank of at least half a layer's size "
                                      "(kohya_ss's 100000) trains its second Kronecker factor whole."))
          .tabs(LORA).min(1).max(100000),
      Opt("network_alpha", T::Float, D(1.0), Sec::Network, QT_TRANSLATE_NOOP("Option", "Network alpha"),
          QT_TRANSLATE_NOOP("Option", "LoRA alpha; the update is scaled by alpha / rank.")).tabs(LORA).min(0).max(4096),
      Opt("network_args", T::List, none, Sec::Network, QT_TRANSLATE_NOOP("Option", "Network arguments"),
          QT_TRANSLATE_NOOP("Option", "Extra key=value arguments for the network module.")).tabs(LORA).advanced(),
      Opt("network_dropout", T::Float, none, Sec::Network, QT_TRANSLATE_NOOP("Option", "Network dropout"),
          QT_TRANSLATE_NOOP("Option", "Dropout on the LoRA input while training.")).tabs(LORA).min(0).max(1).advanced(),
      Opt("scale_weight_norms", T::Float, none, Sec::Network, QT_TRANSLATE_NOOP("Option", "Scale weight norms"),
          QT_TRANSLATE_NOOP("Option", "Max-norm of each LoRA module's update: scaled back to it after every step (1 is typical); 0 or unset: off."))
          .tabs(LORA).min(0).max(1e6).advanced(),
      Opt("network_weights", T::Path, none, Sec::Network, QT_TRANSLATE_NOOP("Option", "Network weights"),
          QT_TRANSLATE_NOOP("Option", "Continue training from this LoRA file.")).tabs(LORA).file().advanced(),
      Opt("dim_from_weights", T::Bool, B(false), Sec::Network, QT_TRANSLATE_NOOP("Option", "Rank from weights"),
          QT_TRANSLATE_NOOP("Option", "Take rank and alpha from network_weights.")).tabs(LORA).advanced(),
      Opt("network_weights_partial", T::Bool, B(false), Sec::Network, QT_TRANSLATE_NOOP("Option", "Partial network weights"),
          QT_TRANSLATE_NOOP("Option", "Let network_weights fill only some of the network's modules and train the others from scratch, as sd-scripts loads it (strict=False); off, such a file is refused. Sinter's own key; sd-scripts ignores it."))
          .tabs(LORA).advanced(),
      Opt("network_train_unet_only", T::Bool, B(false), Sec::Network, QT_TRANSLATE_NOOP("Option", "Train U-Net only"),
          QT_TRANSLATE_NOOP("Option", "Train only the LoRA modules of the U-Net / transformer.")).tabs(LORA),
      Opt("network_train_text_encoder_only", T::Bool, B(false), Sec::Network, QT_TRANSLATE_NOOP("Option", "Train text encoder only"),
          QT_TRANSLATE_NOOP("Option", "Train only the LoRA modules of the text encoders.")).tabs(LORA).advanced(),
      Opt("unet_lr", T::Float, none, Sec::Network, QT_TRANSLATE_NOOP("Option", "U-Net learning rate"),
          QT_TRANSLATE_NOOP("Option", "Learning rate of the U-Net / transformer LoRA; learning_rate when unset.")).tabs(LORA).min(0).max(1),
      Opt("text_encoder_lr", T::Float, none, Sec::Network, QT_TRANSLATE_NOOP("Option", "Text encoder learning rate"),
          QT_TRANSLATE_NOOP("Option", "Learning rate of the text encoder LoRA; learning_rate when unset.")).tabs(LORA).min(0).max(1)
          .firstOfSdScriptsList("a second value is T5-XXL's in networks.lora_flux and CLIP-G's and T5-XXL's in networks.lora_sd3, "
                                "t5xxl_lr here; a third lora_sd3's T5-XXL's alone, sd3_t5xxl_lr here; no network reads more")
          .laterOfSdScriptsList({"t5xxl_lr", "sd3_t5xxl_lr"}),
      Opt("t5xxl_lr", T::Float, none, Sec::Network, QT_TRANSLATE_NOOP("Option", "T5-XXL learning rate"),
          QT_TRANSLATE_NOOP("Option", "Learning rate of T5-XXL's LoRA (network_args train_t5xxl=True), and of CLIP-G's for SD 3.x; "
                                      "text_encoder_lr when unset. sd-scripts reads it as text_encoder_lr's second value."))
          .tabs(LORA).families(FLUX_SD3).min(0).max(1).advanced(),
      Opt("sd3_t5xxl_lr", T::Float, none, Sec::Network, QT_TRANSLATE_NOOP("Option", "SD 3.x T5-XXL learning rate"),
          QT_TRANSLATE_NOOP("Option", "Learning rate of SD 3.x's T5-XXL LoRA alone (network_args train_t5xxl=True); t5xxl_lr when "
                                      "unset. sd-scripts reads it as text_encoder_lr's third value (networks.lora_sd3)."))
          .tabs(LORA).families(SD3).min(0).max(1).advanced(),

      // Pivotal tuning (runner/data/pivotal_embedding_specs.h reads the items). Every family, so that
      // FLUX and SD 3.x configs get the runner's refusal by name (not "ignored").
      Opt("embeddings", T::List, none, Sec::Network, QT_TRANSLATE_NOOP("Option", "Pivotal embeddings"),
          QT_TRANSLATE_NOOP("Option", "Pivotal tuning: embeddings for new tokens trained with the LoRA, one item each: "
                                      "token_string=... init_word=... num_vectors_per_token=... weights=... learning_rate=... "
                                      "(text_encoder_lr, else learning_rate, when unset). Saved in the LoRA file (bundle_emb) and apart. Sinter's "
                                      "own key; sd-scripts ignores it."))
          .tabs(LORA).advanced(),

      // ---- textual inversion (sd-scripts' train_textual_inversion.py and sdxl_train_textual_inversion.py) ----
      Opt("token_string", T::String, none, Sec::Network, QT_TRANSLATE_NOOP("Option", "Token string"),
          QT_TRANSLATE_NOOP("Option", "The new token the embedding is trained for; it must not be in the tokenizer's vocabulary. "
                                      "Captions and sample prompts use it; the output name when that is unset."))
          .tabs(TI).families(DDPM),
      Opt("init_word", T::String, none, Sec::Network, QT_TRANSLATE_NOOP("Option", "Initial word"),
          QT_TRANSLATE_NOOP("Option", "Words whose token embeddings the new vectors start from (repeated or cut to the number of "
                                      "vectors); unset: the mean of the vocabulary's embeddings."))
          .tabs(TI).families(DDPM),
      Opt("num_vectors_per_token", T::Int, I(1), Sec::Network, QT_TRANSLATE_NOOP("Option", "Vectors per token"),
          QT_TRANSLATE_NOOP("Option", "How many token embeddings the embedding holds: the token string and token_string1, "
                                      "token_string2, ... take one each."))
          .tabs(TI).families(DDPM).min(1).max(75),
      Opt("weights", T::Path, none, Sec::Network, QT_TRANSLATE_NOOP("Option", "Embedding weights"),
          QT_TRANSLATE_NOOP("Option", "An embedding file to continue training from: emb_params (SD 1.x/2.x) or clip_l and clip_g "
                                      "(SDXL), as A1111, Forge and ComfyUI load them."))
          .tabs(TI).families(DDPM).file(),
      Opt("use_object_template", T::Bool, B(false), Sec::Network, QT_TRANSLATE_NOOP("Option", "Object templates"),
          QT_TRANSLATE_NOOP("Option", "Ignore the captions: each image is captioned with one of sd-scripts' object templates "
                                      "(\"a photo of a {}\", ...) holding the token."))
          .tabs(TI).families(DDPM),
      Opt("use_style_template", T::Bool, B(false), Sec::Network, QT_TRANSLATE_NOOP("Option", "Style templates"),
          QT_TRANSLATE_NOOP("Option", "Ignore the captions: each image is captioned with one of sd-scripts' style templates "
                                      "(\"a painting in the style of {}\", ...) holding the token. The object templates win "
                                      "when both are set, as in sd-scripts."))
          .tabs(TI).families(DDPM),

      // ---- optimizer ----
      Opt("optimizer_type", T::String, none, Sec::Optimizer, QT_TRANSLATE_NOOP("Option", "Optimizer"),
          QT_TRANSLATE_NOOP("Option", "Optimizer name as in sd-scripts; AdamW when empty."))
          .suggestions(optimizerNames()),
      Opt("use_8bit_adam", T::Bool, B(false), Sec::Optimizer, QT_TRANSLATE_NOOP("Option", "Use 8-bit Adam"),
          QT_TRANSLATE_NOOP("Option", "sd-scripts' older switch for optimizer_type = AdamW8bit; only with an empty optimizer_type.")).advanced(),
      Opt("use_lion_optimizer", T::Bool, B(false), Sec::Optimizer, QT_TRANSLATE_NOOP("Option", "Use Lion"),
          QT_TRANSLATE_NOOP("Option", "sd-scripts' older switch for optimizer_type = Lion; only with an empty optimizer_type.")).advanced(),
      Opt("optimizer_args", T::List, none, Sec::Optimizer, QT_TRANSLATE_NOOP("Option", "Optimizer arguments"),
          QT_TRANSLATE_NOOP("Option", "key=value pairs, e.g. weight_decay=0.01 betas=0.9,0.999.")).advanced(),
      Opt("fused_backward_pass", T::Bool, B(false), Sec::Optimizer, QT_TRANSLATE_NOOP("Option", "Fused backward pass"),
          QT_TRANSLATE_NOOP("Option", "Step each weight as soon as its gradient is computed, so that the whole model's gradients never exist at once (Adafactor, no gradient accumulation).")).tabs(DB | FT).advanced(),
      Opt("fused_optimizer_groups", T::Int, none, Sec::Optimizer, QT_TRANSLATE_NOOP("Option", "Fused optimizer groups"),
          QT_TRANSLATE_NOOP("Option", "sd-scripts' N optimizers stepped as their gradients complete: here each weight is stepped as soon as its gradient is (per-weight optimizers, no gradient accumulation)."))
          .tabs(DB | FT).families(SDXL | FLUX).min(1).max(100000).advanced(),
      Opt("blockwise_fused_optimizers", T::Bool, B(false), Sec::Optimizer, QT_TRANSLATE_NOOP("Option", "Blockwise fused optimizers"),
          QT_TRANSLATE_NOOP("Option", "flux_train.py's optimizer per block, stepped as its gradients complete: here each weight is stepped as soon as its gradient is (per-weight optimizers, no gradient accumulation)."))
          .tabs(DB | FT).families(FLUX).advanced(),
      Opt("learning_rate", T::Float, D(2e-6), Sec::Optimizer, QT_TRANSLATE_NOOP("Option", "Learning rate"),
          QT_TRANSLATE_NOOP("Option", "Base learning rate.")).min(0).max(1),
      Opt("lr_scheduler", T::Enum, S("constant"), Sec::Optimizer, QT_TRANSLATE_NOOP("Option", "LR scheduler"),
          QT_TRANSLATE_NOOP("Option", "Learning-rate schedule (diffusers/transformers names, as sd-scripts); lr_scheduler_type replaces it."))
          .choices({"constant", "constant_with_warmup", "linear", "cosine", "cosine_with_restarts", "polynomial", "adafactor",
                    "inverse_sqrt", "cosine_with_min_lr", "warmup_stable_decay", "piecewise_constant"}),
      Opt("lr_scheduler_type", T::String, none, Sec::Optimizer, QT_TRANSLATE_NOOP("Option", "LR scheduler class"),
          QT_TRANSLATE_NOOP("Option", "A torch.optim.lr_scheduler class (short or full name) used instead of lr_scheduler, with "
                                      "lr_scheduler_args as its arguments (e.g. T_max=1000), stepped once per optimizer step."))
          .suggestions({"CosineAnnealingLR", "CosineAnnealingWarmRestarts", "StepLR", "MultiStepLR", "ExponentialLR", "LinearLR",
                        "ConstantLR", "PolynomialLR", "OneCycleLR"})
          .advanced(),
      Opt("lr_scheduler_args", T::List, none, Sec::Optimizer, QT_TRANSLATE_NOOP("Option", "LR scheduler arguments"),
          QT_TRANSLATE_NOOP("Option", "key=value pairs with Python values for the schedule, e.g. T_max=1000 eta_min=1e-6, "
                                      "milestones=[500,800], step_rules='1:10,0.1:20,0.01', warmup_type='linear'."))
          .advanced(),
      Opt("lr_warmup_steps", T::Float, I(0), Sec::Optimizer, QT_TRANSLATE_NOOP("Option", "LR warmup steps"),
          QT_TRANSLATE_NOOP("Option", "Warm-up steps, or a ratio of the total steps when below 1.")).min(0).max(1e12),
      Opt("lr_scheduler_num_cycles", T::Int, I(1), Sec::Optimizer, QT_TRANSLATE_NOOP("Option", "LR cycles"),
          QT_TRANSLATE_NOOP("Option", "Restarts of cosine_with_restarts.")).min(1).max(1000).advanced(),
      Opt("lr_scheduler_power", T::Float, D(1.0), Sec::Optimizer, QT_TRANSLATE_NOOP("Option", "LR power"),
          QT_TRANSLATE_NOOP("Option", "Power of the polynomial schedule.")).min(0).max(100).advanced(),
      Opt("lr_decay_steps", T::Float, I(0), Sec::Optimizer, QT_TRANSLATE_NOOP("Option", "LR decay steps"),
          QT_TRANSLATE_NOOP("Option", "Decay steps of warmup_stable_decay, or a ratio of the total steps when below 1.")).min(0).max(1e12).advanced(),
      Opt("lr_scheduler_min_lr_ratio", T::Float, none, Sec::Optimizer, QT_TRANSLATE_NOOP("Option", "LR minimum ratio"),
          QT_TRANSLATE_NOOP("Option", "Lowest learning rate as a ratio of the initial one, for cosine_with_min_lr and "
                                      "warmup_stable_decay.")).min(0).max(1).advanced(),
      Opt("lr_scheduler_timescale", T::Int, none, Sec::Optimizer, QT_TRANSLATE_NOOP("Option", "LR timescale"),
          QT_TRANSLATE_NOOP("Option", "Timescale of inverse_sqrt; the warmup steps when unset (10000 without warmup).")).min(1).max(1e12).advanced(),

      // ---- compile (SDXL and FLUX only) ----
      Opt("compile", T::Bool, B(false), Sec::Compile, QT_TRANSLATE_NOOP("Option", "Enable torch.compile"),
          QT_TRANSLATE_NOOP("Option", "Accelerate the training step natively: fused kernels, and with the matching mode, CUDA graphs."))
          .families(SDXL | FLUX).advanced(),
      Opt("compile_backend", T::Enum, S("inductor"), Sec::Compile, QT_TRANSLATE_NOOP("Option", "Backend"),
          QT_TRANSLATE_NOOP("Option", "inductor: fused kernels; cudagraphs: graph capture with stock kernels; eager: nothing captured; "
             "aot_eager: eager, with the capture-safety checks reported."))
          .families(SDXL | FLUX).choices({"inductor", "cudagraphs", "eager", "aot_eager"}).advanced(),
      Opt("compile_mode", T::Enum, S("default"), Sec::Compile, QT_TRANSLATE_NOOP("Option", "Mode"),
          QT_TRANSLATE_NOOP("Option", "default: fused kernels; reduce-overhead: + CUDA graphs; max-autotune: + graphs and autotuning; "
             "max-autotune-no-cudagraphs: + autotuning."))
          .families(SDXL | FLUX).choices({"default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"}).advanced(),
      Opt("compile_dynamic", T::Enum, S("auto"), Sec::Compile, QT_TRANSLATE_NOOP("Option", "Dynamic shapes"),
          QT_TRANSLATE_NOOP("Option", "false: a graph per shape; auto: pre-capture the most frequent bucket shapes; true: nothing shape-specialised."))
          .families(SDXL | FLUX).choices({"auto", "true", "false"}).autoIsUnset().advanced(),
      Opt("compile_fullgraph", T::Bool, B(false), Sec::Compile, QT_TRANSLATE_NOOP("Option", "Full graph"),
          QT_TRANSLATE_NOOP("Option", "Capture forward, backward and optimizer step as one graph; anything that prevents it is an error."))
          .families(SDXL | FLUX).advanced(),
      Opt("compile_cache_size_limit", T::Int, I(0), Sec::Compile, QT_TRANSLATE_NOOP("Option", "Cache size limit"),
          QT_TRANSLATE_NOOP("Option", "Captured shape signatures per region; 0 uses the default of 8."))
          .families(SDXL | FLUX).min(0).max(100000).zeroIsUnset().advanced(),
      Opt("compile_args", T::List, none, Sec::Compile, QT_TRANSLATE_NOOP("Option", "Compile arguments (deprecated)"),
          QT_TRANSLATE_NOOP("Option", "BACKEND MODE DYNAMIC FULLGRAPH; overrides the settings above and sets the cache limit to 32."))
          .families(SDXL | FLUX).deprecated().advanced(),
      Opt("compile_text_encoders", T::Bool, B(false), Sec::Compile, QT_TRANSLATE_NOOP("Option", "Compile text encoders"),
          QT_TRANSLATE_NOOP("Option", "Also accelerate text encoding.")).families(SDXL | FLUX).advanced(),
      Opt("compile_vae", T::Bool, B(false), Sec::Compile, QT_TRANSLATE_NOOP("Option", "Compile VAE"),
          QT_TRANSLATE_NOOP("Option", "Also accelerate latent caching (the VAE encoder as CUDA graphs); sample images decode uncaptured.")).families(SDXL | FLUX).advanced(),
      Opt("cuda_allow_tf32", T::Bool, B(false), Sec::Compile, QT_TRANSLATE_NOOP("Option", "Allow TF32"),
          QT_TRANSLATE_NOOP("Option", "TF32 matrix and convolution math on CUDA, with or without compile.")).families(SDXL | FLUX).advanced(),
      Opt("cuda_cudnn_benchmark", T::Bool, B(false), Sec::Compile, QT_TRANSLATE_NOOP("Option", "cuDNN benchmark"),
          QT_TRANSLATE_NOOP("Option", "Let cuDNN pick the fastest convolution algorithms, with or without compile.")).families(SDXL | FLUX).advanced(),

      // ---- saving ----
      Opt("save_every_n_epochs", T::Int, none, Sec::Saving, QT_TRANSLATE_NOOP("Option", "Save every N epochs"),
          QT_TRANSLATE_NOOP("Option", "Save the model every N epochs.")).min(1).max(1e9),
      Opt("save_every_n_steps", T::Int, none, Sec::Saving, QT_TRANSLATE_NOOP("Option", "Save every N steps"),
          QT_TRANSLATE_NOOP("Option", "Save the model every N steps.")).min(1).max(1e12),
      Opt("save_last_n_epochs", T::Int, none, Sec::Saving, QT_TRANSLATE_NOOP("Option", "Keep last N epochs"),
          QT_TRANSLATE_NOOP("Option", "Delete older per-epoch saves, keeping the last N.")).min(1).max(1e9).advanced(),
      Opt("save_last_n_steps", T::Int, none, Sec::Saving, QT_TRANSLATE_NOOP("Option", "Keep last N steps"),
          QT_TRANSLATE_NOOP("Option", "Delete per-step saves older than N steps.")).min(1).max(1e12).advanced(),
      Opt("save_last_n_epochs_state", T::Int, none, Sec::Saving, QT_TRANSLATE_NOOP("Option", "Keep last N epoch states"),
          QT_TRANSLATE_NOOP("Option", "Delete older per-epoch states, keeping the last N (instead of save_last_n_epochs for states).")).min(1).max(1e9).advanced(),
      Opt("save_last_n_steps_state", T::Int, none, Sec::Saving, QT_TRANSLATE_NOOP("Option", "Keep last N step states"),
          QT_TRANSLATE_NOOP("Option", "Delete per-step states older than N steps (instead of save_last_n_steps for states).")).min(1).max(1e12).advanced(),
      Opt("save_state", T::Bool, B(false), Sec::Saving, QT_TRANSLATE_NOOP("Option", "Save training state"),
          QT_TRANSLATE_NOOP("Option", "Save optimizer, scheduler and data position with each save, for resuming.")),
      Opt("save_state_on_train_end", T::Bool, B(false), Sec::Saving, QT_TRANSLATE_NOOP("Option", "Save state at the end"),
          QT_TRANSLATE_NOOP("Option", "Save the training state once training ends.")).advanced(),
      Opt("resume", T::Path, none, Sec::Saving, QT_TRANSLATE_NOOP("Option", "Resume from state"),
          QT_TRANSLATE_NOOP("Option", "A saved state folder to continue from.")).dir(),
      Opt("initial_step", T::Int, none, Sec::Saving, QT_TRANSLATE_NOOP("Option", "Initial step"),
          QT_TRANSLATE_NOOP("Option", "Start the step count here (all epochs counted; overrides initial_epoch and a resumed state's step). "
                                      "The lr schedule keeps its own count: from 0, or from the resumed state.")).min(0).max(1e12).advanced(),
      Opt("initial_epoch", T::Int, none, Sec::Saving, QT_TRANSLATE_NOOP("Option", "Initial epoch"),
          QT_TRANSLATE_NOOP("Option", "Start at this epoch (1 is the first): the step count starts at its first step.")).min(1).max(1e9).advanced(),
      Opt("skip_until_initial_step", T::Bool, B(false), Sec::Saving, QT_TRANSLATE_NOOP("Option", "Skip data until initial step"),
          QT_TRANSLATE_NOOP("Option", "With initial_step or initial_epoch, continue the data from that step's batch instead of the start of its epoch.")).advanced(),
      Opt("huggingface_token", T::String, none, Sec::Saving, QT_TRANSLATE_NOOP("Option", "Hugging Face token"),
          QT_TRANSLATE_NOOP("Option", "Token for uploads. Never written to configs or presets.")).secret().advanced(),

      // ---- sample ----
      Opt("sample_prompts", T::Path, none, Sec::Sample, QT_TRANSLATE_NOOP("Option", "Sample prompts"),
          QT_TRANSLATE_NOOP("Option", "A text file of prompts (one per line, with --w --h --d --l --s --n).")).file(),
      Opt("sample_every_n_steps", T::Int, none, Sec::Sample, QT_TRANSLATE_NOOP("Option", "Sample every N steps"),
          QT_TRANSLATE_NOOP("Option", "Generate samples every N steps.")).min(1).max(1e12),
      Opt("sample_every_n_epochs", T::Int, none, Sec::Sample, QT_TRANSLATE_NOOP("Option", "Sample every N epochs"),
          QT_TRANSLATE_NOOP("Option", "Generate samples every N epochs.")).min(1).max(1e9),
      Opt("sample_sampler", T::Enum, S("ddim"), Sec::Sample, QT_TRANSLATE_NOOP("Option", "Sampler"),
          QT_TRANSLATE_NOOP("Option", "Sampler used for samples.")).choices({"ddim", "pndm", "lms", "euler", "euler_a", "heun", "dpm_2", "dpm_2_a",
                                                  "dpmsolver", "dpmsolver++", "dpmsingle", "k_lms", "k_euler",
                                                  "k_euler_a", "k_dpm_2", "k_dpm_2_a"}),
      Opt("sample_at_first", T::Bool, B(false), Sec::Sample, QT_TRANSLATE_NOOP("Option", "Sample before training"),
          QT_TRANSLATE_NOOP("Option", "Generate samples before the first step.")),

      // ---- logging ----
      Opt("logging_dir", T::Path, none, Sec::Logging, QT_TRANSLATE_NOOP("Option", "Logging folder"),
          QT_TRANSLATE_NOOP("Option", "Folder for TensorBoard logs.")).dir(),
      Opt("log_with", T::Enum, none, Sec::Logging, QT_TRANSLATE_NOOP("Option", "Log with"),
          QT_TRANSLATE_NOOP("Option", "tensorboard, wandb or all; TensorBoard when only a logging folder is set."))
          .choices({"tensorboard", "wandb", "all"}),
      Opt("log_prefix", T::String, none, Sec::Logging, QT_TRANSLATE_NOOP("Option", "Log prefix"),
          QT_TRANSLATE_NOOP("Option", "Prefix for the log folder name.")).advanced(),
      Opt("log_tracker_name", T::String, none, Sec::Logging, QT_TRANSLATE_NOOP("Option", "Tracker name"),
          QT_TRANSLATE_NOOP("Option", "Folder of the TensorBoard log inside the run's log folder."))
          .unsetMeans(QT_TRANSLATE_NOOP("Option", "network_train for LoRA, finetuning otherwise")).advanced(),
      Opt("log_tracker_config", T::Path, none, Sec::Logging, QT_TRANSLATE_NOOP("Option", "Tracker settings"),
          QT_TRANSLATE_NOOP("Option", "A TOML file whose [tensorboard] table sets flush_secs, max_queue, filename_suffix and purge_step.")).file().advanced(),
      Opt("log_config", T::Bool, B(false), Sec::Logging, QT_TRANSLATE_NOOP("Option", "Log the config"),
          QT_TRANSLATE_NOOP("Option", "Write the training settings into the TensorBoard log (paths and secrets left out).")).advanced(),
      Opt("wandb_api_key", T::String, none, Sec::Logging, QT_TRANSLATE_NOOP("Option", "W&B API key"),
          QT_TRANSLATE_NOOP("Option", "Weights & Biases key. Never written to configs or presets.")).secret().advanced(),
      Opt("profile_steps", T::Int, none, Sec::Logging, QT_TRANSLATE_NOOP("Option", "Profile steps"),
          QT_TRANSLATE_NOOP("Option", "Record this many steps after warm-up with the profiler into a Chrome/Perfetto trace (<output_name>-profile.json in the output folder).")).min(1).max(1e6).advanced(),
  };
}

std::size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

const std::vector<OptionSpec>& optionRegistry() {
  static const std::vector<OptionSpec> registry = buildRegistry();
  return registry;
}

const OptionSpec* findOption(const std::string& key) {
  for (const auto& spec : optionRegistry())
    if (key == spec.key) return &spec;
  return nullptr;
}

std::string suggestKey(const std::string& unknownKey) {
  std::string best;
  std::size_t bestDistance = std::string::npos;
  for (const auto& spec : optionRegistry()) {
    std::size_t d = editDistance(unknownKey, spec.key);
    if (d < bestDistance) {
      bestDistance = d;
      best = spec.key;
    }
  }
  // Close enough to be a typo: at most a third of the key's length, or a prefix/suffix match.
  if (bestDistance <= std::max<std::size_t>(2, unknownKey.size() / 3)) return best;
  for (const auto& spec : optionRegistry()) {
    std::string k = spec.key;
    if (unknownKey.size() >= 4 && (k.find(unknownKey) != std::string::npos || unknownKey.find(k) != std::string::npos))
      return k;
  }
  return "";
}

bool isCompileKey(const std::string& key) {
  const OptionSpec* spec = findOption(key);
  return spec && spec->section == Section::Compile;
}

}  // namespace sinter
