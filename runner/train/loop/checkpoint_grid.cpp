#include "train/loop/checkpoint_grid.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <regex>
#include <tuple>

#include "core/exit_codes.h"
#include "core/model_family_detect.h"
#include "io/safetensors.h"
#include "sample/png_file.h"
#include "sample/sample_grid.h"
#include "sample/sample_prompts.h"
#include "train/base/device_info.h"
#include "train/base/mixed_precision.h"
#include "train/base/run_errors.h"
#include "train/methods/applied_lora.h"
#include "train/methods/embedding_file.h"
#include "train/methods/pivotal_embeddings.h"
#include "train/methods/textual_inversion_method.h"
#include "train/parts/family_registration.h"

#include "core/ascii_text.h"
#include "train/loop/run_ema.h"
#include "train/loop/sample_images.h"
namespace sinter::train {

namespace fs = std::filesystem;

namespace {

double gridSecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::optional<long long> metadataNumber(const std::map<std::string, std::string>& metadata, const char* key) {
  const auto it = metadata.find(key);
  if (it == metadata.end()) return std::nullopt;
  try {
    size_t used = 0;
    const long long n = std::stoll(it->second, &used);
    if (used == it->second.size()) return n;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// The step and epoch a saved file was saved at: a LoRA's ss_steps and ss_epoch, else what the run's
// names for its saves say (save_schedule.h: <name>-step00000012, <name>-000003; best_checkpoints.h:
// <name>-best-step00000012-loss0.123456). The final save's name says neither.
sample::GridRow gridRowOf(const std::string& path) {
  sample::GridRow row;
  row.path = fs::absolute(path).lexically_normal().string();
  const io::SafetensorsFile file(path);
  row.step = metadataNumber(file.metadata(), "ss_steps");
  row.epoch = metadataNumber(file.metadata(), "ss_epoch");
  // An EMA file (run_ema.h) is named after its model file.
  std::string stem = fs::path(path).stem().string();
  if (endsWith(stem, kEmaStemSuffix)) stem.resize(stem.size() - std::string(kEmaStemSuffix).size());
  static const std::regex stepName(R"(-step(\d{8})(-loss\d+\.\d+)?$)"), epochName(R"(-(\d{6})$)");
  std::smatch m;
  if (!row.step && std::regex_search(stem, m, stepName)) row.step = std::stoll(m[1].str());
  if (!row.epoch && std::regex_search(stem, m, epochName)) row.epoch = std::stoll(m[1].str());
  return row;
}

// Why `path` cannot be a row of this run's grid, or "": it exists, and it is what the run saves (a
// LoRA run's LoRA files; a full-weight run's checkpoints of the run's model family; a textual
// inversion run's embedding files, whose keys and widths are checked once the models are loaded).
std::string fileRefusal(const std::string& path, const Config& config, Family family) {
  if (!fs::exists(path)) return "--sample_grid: '" + path + "' does not exist";
  if (!fs::is_regular_file(path)) return "--sample_grid: '" + path + "' is not a file";
  try {
    if (config.tab() == Tab::TextualInversion) {
      if (isKohyaLoraFile(path))
        return "--sample_grid: '" + path + "' holds LoRA modules (lora_unet_*, lora_te*_*): a textual inversion run's grid takes "
               "the embedding files it saved";
      if (const std::optional<Family> fileFamily = detectModelFamily(path))
        return "--sample_grid: '" + path + "' is a " + toString(*fileFamily) + " checkpoint: a textual inversion run's grid takes "
               "the embedding files it saved";
      return "";
    }
    if (config.tab() == Tab::LoRA) {
      if (!isKohyaLoraFile(path))
        return "--sample_grid: '" + path + "' holds no LoRA modules (lora_unet_*, lora_te*_*): a LoRA run's grid takes the LoRA files "
               "it saved (a checkpoint is a DreamBooth or fine-tune run's)";
      return "";
    }
    const std::optional<Family> fileFamily = detectModelFamily(path);
    if (!fileFamily)
      return "--sample_grid: '" + path + "' is no checkpoint of a model family Sinter knows: a " + toString(config.tab()) +
             " run's grid takes the checkpoints it saved (a LoRA file is a LoRA run's)";
    if (*fileFamily != family)
      return "--sample_grid: '" + path + "' is a " + toString(*fileFamily) + " checkpoint; this run's model is " + toString(family);
  } catch (const std::exception& e) {
    return "--sample_grid: '" + path + "': " + userMessage(e);
  }
  return "";
}

int gridFailed(EventSink& events, int code, const std::string& message) {
  spdlog::error("{}", message);
  events.emit(events::Error{message});
  events.emit(events::Done{"failed", 0, 0});
  return code;
}

// The run's model as a family part, placed for sampling: the family's own loading and its staged
// start (buildCaches on no images: nothing is cached, every model goes where a run's samples find
// it). `checkpoint` replaces the run's model file (a full-weight row); empty: the run's own.
class GridModel {
 public:
  GridModel(const Config& config, const FamilyRegistration& family, const std::string& checkpoint, torch::Device device,
            const PrecisionPlan& precision, std::uint64_t seed, EventSink& events, const compile::CompilePlan& compile)
      : config_(config) {
    if (!checkpoint.empty()) config_.set("pretrained_model_name_or_path", checkpoint);
    run_ = std::make_unique<RunContext>(RunContext{config_, device, precision, seed, events, std::chrono::steady_clock::now(), compile, nullptr});
    torch::manual_seed(seed);
    part_ = family.make(*run_);
    spdlog::info("placing the models for sampling (the run's staged start on no images: nothing is cached)");
    part_->buildCaches(data::Dataset{}, 1);
  }
  ~GridModel() { part_.reset(); }  // before the context it was made with
  FamilyPart& part() { return *part_; }
  const RunContext& run() const { return *run_; }

 private:
  Config config_;
  std::unique_ptr<RunContext> run_;
  std::unique_ptr<FamilyPart> part_;
};

}  // namespace

int renderCheckpointGrid(const RunPreflight& preflight, const CheckpointGridRequest& request, EventSink& events) {
  const auto start = std::chrono::steady_clock::now();
  const Config& config = preflight.resolved;
  const std::optional<Family> family = config.family();
  const FamilyRegistration* registration = family ? findRegisteredFamily(*family) : nullptr;
  if (!registration) return gridFailed(events, kExitBadInput, "--sample_grid: the config's model family is not known");

  // Everything that can be checked before a model loads.
  const std::string promptFile = config.getString("sample_prompts");
  if (promptFile.empty())
    return gridFailed(events, kExitBadInput, "--sample_grid renders the config's sample_prompts, and the config sets none: set sample_prompts");
  std::vector<sample::SamplePrompt> prompts;
  try {
    prompts = sample::loadSamplePrompts(promptFile);
  } catch (const std::exception& e) {
    return gridFailed(events, kExitBadInput, std::string("sample_prompts: ") + e.what());
  }
  if (prompts.empty()) return gridFailed(events, kExitBadInput, "--sample_grid: sample_prompts '" + promptFile + "' holds no prompts");
  std::string extension = fs::path(request.output).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(), [](unsigned char c) { return std::tolower(c); });
  if (extension != ".png") return gridFailed(events, kExitBadInput, "--sample_grid writes a PNG: name it *.png, not '" + request.output + "'");
  std::vector<sample::GridRow> rows(1);
  rows[0].base = true;
  rows[0].step = 0;
  for (const std::string& file : request.files) {
    if (const std::string why = fileRefusal(file, config, *family); !why.empty()) return gridFailed(events, kExitBadInput, why);
    try {
      rows.push_back(gridRowOf(file));
    } catch (const std::exception& e) {
      return gridFailed(events, kExitBadInput, "--sample_grid: '" + file + "': " + userMessage(e));
    }
  }
  try {
    if (const fs::path folder = fs::absolute(request.output).parent_path(); !fs::is_directory(folder)) fs::create_directories(folder);
  } catch (const std::exception& e) {
    return gridFailed(events, kExitBadInput, "--sample_grid: cannot make the folder of '" + request.output + "': " + e.what());
  }

  const torch::Device device = trainingDevice(0);
  // A prompt without --d takes the run's seed, or one drawn for the whole grid: every row of a
  // column starts from the same noise, and the layout records the seed, so the grid can be repeated.
  const std::uint64_t seed =
      isUnset(config.get("seed")) ? (std::random_device{}() & 0x7fffffffu) : static_cast<std::uint64_t>(config.getInt("seed"));
  if (std::string flags = applyCudaMathFlags(device, config.getBool("cuda_allow_tf32"), config.getBool("cuda_cudnn_benchmark")); !flags.empty())
    spdlog::info("{}", flags);
  PrecisionPlan precision = planPrecision(parseMixedPrecision(config.getString("mixed_precision")), config.getBool("full_fp16"),
                                          config.getBool("full_bf16"), trainsFullWeights(config.tab()));
  precision.noHalfVae = config.getBool("no_half_vae");
  const compile::CompilePlan compile = preflight.compilePlan ? *preflight.compilePlan : compilePlanFor(config, family);
  const bool loraRows = config.tab() == Tab::LoRA;
  const bool embeddingRows = config.tab() == Tab::TextualInversion;
  spdlog::info("checkpoint grid: {} rows (the base model and {} saved file{}) x {} prompts on {}", rows.size(), request.files.size(),
               request.files.size() == 1 ? "" : "s", prompts.size(), describeDevice(device));

  sample::GridLayout layout;
  std::vector<std::vector<torch::Tensor>> cells(rows.size());
  bool loading = true;  // a model or a file loading (what fails then is bad input), not rendering
  try {
    std::unique_ptr<GridModel> model =
        std::make_unique<GridModel>(config, *registration, "", device, precision, seed, events, compile);
    // Textual inversion: the run's tokens and rows on the model, as the run's own samples have them;
    // the first row renders the rows the run starts from (init_word's, weights', or the vocabulary's
    // mean: its step 0), each other row a saved file's rows in their place. Every file is read
    // before the first image: one of another model family or run (its keys, its vectors, the
    // encoders' widths) is refused now.
    std::unique_ptr<TextualInversionMethod> embedding;
    std::vector<std::vector<torch::Tensor>> embeddingFileRows(rows.size());
    if (embeddingRows) {
      embedding = std::make_unique<TextualInversionMethod>(model->run());
      embedding->attach(model->part());
      for (size_t r = 1; r < rows.size(); ++r)
        embeddingFileRows[r] = readEmbeddingFile(rows[r].path, embedding->fileLayout(), EmbeddingFileReading{"--sample_grid", false});
    }
    // Pivotal tuning (a LoRA run's `embeddings`): the run's tokens and rows on the model as the run
    // attaches them, the first row its start; each LoRA file's row has the rows it bundles
    // (bundle_emb.*) beside its modules, read below once the file's modules are known to fit.
    std::unique_ptr<PivotalEmbeddings> pivotal;
    std::vector<std::string> bundleKeys;
    if (loraRows)
      if (std::vector<data::PivotalEmbeddingSpec> specs = data::pivotalEmbeddingSpecs(model->run().config); !specs.empty()) {
        pivotal = std::make_unique<PivotalEmbeddings>(model->run(), std::move(specs));
        pivotal->attach(model->part());
        for (const ExpectedEmbedding& e : pivotal->bundleLayout()) bundleKeys.push_back(e.key);
      }
    loading = false;
    layout.model = model->part().facts().checkpointFile;
    const std::vector<data::CaptionReplacement> replacements =
        embedding ? embedding->samplePromptReplacements()
                  : pivotal ? pivotal->promptReplacements() : std::vector<data::CaptionReplacement>{};
    for (const sample::SamplePrompt& p : prompts)
      layout.columns.push_back(sample::resolveSample(model->part().sampleDefaults(), replacedPrompt(p, replacements), seed));
    // Every LoRA file is put on the model once before the first image: one that does not fit it, or
    // (pivotal tuning) lacks the run's bundled rows or holds them in other shapes, is refused now,
    // not after the rows before it were rendered.
    if (loraRows) {
      loading = true;
      for (size_t r = 1; r < rows.size(); ++r) {
        const AppliedLora fits(model->run(), model->part(), rows[r].path, bundleKeys);
        if (pivotal)
          embeddingFileRows[r] = readEmbeddingFile(rows[r].path, pivotal->bundleLayout(), EmbeddingFileReading{"--sample_grid", false});
      }
      loading = false;
    }
    for (size_t r = 0; r < rows.size(); ++r) {
      const std::string& file = rows[r].path;
      std::unique_ptr<AppliedLora> lora;
      if (r > 0 && embeddingRows) {
        embedding->putRows(embeddingFileRows[r]);
        spdlog::info("{}: its embedding's rows in the text encoders", file);
      } else if (r > 0 && loraRows) {
        loading = true;
        lora = std::make_unique<AppliedLora>(model->run(), model->part(), file, bundleKeys);
        loading = false;
        if (pivotal) pivotal->putRows(embeddingFileRows[r]);
        spdlog::info("{}: {} LoRA modules on the base model{}", file, lora->moduleCount(),
                     pivotal ? ", its bundled embeddings' rows in the text encoders" : "");
        for (const std::string& w : lora->warnings()) {
          spdlog::warn("{}", w);
          events.emit(events::Warning{w});
        }
      } else if (r > 0) {
        loading = true;
        model.reset();  // one model in memory at a time
        model = std::make_unique<GridModel>(config, *registration, file, device, precision, seed, events, compile);
        loading = false;
      }
      for (size_t c = 0; c < layout.columns.size(); ++c) {
        const auto imageStart = std::chrono::steady_clock::now();
        sample::ResolvedSample s = layout.columns[c];
        const torch::Tensor image = model->part().renderSample(s, makeGenerator(device, s.seed));
        cells[r].push_back(sample::imageToRgb8(image));
        if (r == 0) layout.columns[c] = s;  // the size and sampler the family used
        const double seconds = gridSecondsSince(imageStart);
        spdlog::info("grid row {}/{} ({}), prompt {}/{} ({:.1f} s): {}", r + 1, rows.size(), r == 0 ? "base model" : file, c + 1,
                     layout.columns.size(), seconds, s.prompt);
        events.emit(events::GridCell{static_cast<long long>(r), static_cast<long long>(rows.size()), static_cast<long long>(c),
                                     static_cast<long long>(layout.columns.size()), file, s.prompt, seconds});
      }
    }
  } catch (const std::exception& e) {
    // A file that does not load (another model's LoRA, a damaged file) is bad input; so is a model
    // that does not load. What fails while rendering is a failure.
    return gridFailed(events, loading ? kExitBadInput : kExitTrainingFailed, (loading ? "" : "checkpoint grid failed: ") + userMessage(e));
  }

  try {
    std::vector<torch::Tensor> all;
    for (const auto& row : cells) all.insert(all.end(), row.begin(), row.end());
    std::tie(layout.cellWidth, layout.cellHeight) = sample::gridCellSize(all);
    layout.rows = rows;
    const torch::Tensor grid = sample::composeGrid(cells, layout.cellWidth, layout.cellHeight);
    sample::writePng(request.output, grid, {{sample::kGridLayoutKey, sample::gridLayoutJson(layout)}});
  } catch (const std::exception& e) {
    return gridFailed(events, kExitTrainingFailed, "checkpoint grid: " + userMessage(e));
  }
  const double seconds = gridSecondsSince(start);
  spdlog::info("checkpoint grid written to {} ({} x {} images of {}x{}, {:.1f} s)", request.output, rows.size(), layout.columns.size(),
               layout.cellWidth, layout.cellHeight, seconds);
  events.emit(events::Saved{request.output, "grid"});
  events.emit(events::Done{"completed", 0, seconds});
  return kExitOk;
}

}  // namespace sinter::train
