#pragma once
// The runner's event protocol (DESIGN.md §4): one JSON object per line on stdout.
// Writers produce every field; the reader is tolerant: unknown fields are ignored and unknown
// event types come back as UnknownEvent, so the protocol can grow.
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace sinter::events {

struct Start {
  std::string version, device, model_family, training_mode;
  long long total_steps = 0;
  long long epochs = 0;
  std::vector<std::string> tokenizers;  // "clip_tokenizer: bundled with Sinter (<folder>)", ...
  long long images = 0;   // the dataset's image files in use (each once, whatever its repeats)
  long long skipped = 0;  // files in its folders that were left out (each named in a warning)
};
struct CompilePlan {
  bool enabled = false;
  std::string backend, mode, dynamic;
  bool fullgraph = false;
  long long cache_size_limit = 0;
  std::vector<std::string> mechanisms;   // what is actually on
  std::vector<std::string> regions;      // captured regions
  std::vector<std::string> unavailable;  // "what: why"
};
struct Warmup {
  std::string signature;
  double seconds = 0;
};
struct Step {
  long long step = 0, total = 0, epoch = 0;
  double loss = 0, avg_loss = 0, lr = 0, it_per_s = 0, eta_s = 0, step_ms = 0, peak_mem_mb = 0;
  // The method's figures of the step, by sd-scripts' log names (scale_weight_norms:
  // "max_norm/keys_scaled", "norm/avg_key_norm", "max_norm/max_key_norm"); written as extra keys.
  std::vector<std::pair<std::string, double>> figures;
};
struct Epoch {
  long long epoch = 0, epochs = 0, step = 0;
  double avg_loss = 0;
};
// The loss on the images validation_split holds out (sd-scripts' "loss/validation/step_average" and
// "loss/validation/epoch_average"): the mean over the pass's batches and fixed timesteps, after
// optimizer step `step`. `kind`: "step" (validate_every_n_steps) or "epoch" (at an epoch's end).
struct Validation {
  long long step = 0, epoch = 0;
  double loss = 0;
  std::string kind;
};
struct Saved {
  std::string path, kind;  // kind: lora, state, final, ..., best (save_best_k), ema (ema_decay)
  // kind "best" only: the step and validation loss the file was saved at, and the save_best_k
  // files kept after this save (lowest loss first; `path` is among them). Written only for "best".
  long long step = 0;
  double loss = 0;
  std::vector<std::string> best;
};
// One sample image written during training (issue 11): the PNG, its prompt, the step it shows and
// the epoch when made at an epoch's end (0 otherwise), its position in the prompt file, and how
// long it took to render (time that is not training time).
struct Sample {
  std::string path, prompt;
  long long step = 0, epoch = 0;
  int index = 0;
  double seconds = 0;
};
struct Warning {
  std::string message;
};
struct Error {
  std::string message;
};
// The dataset check (runner/data/dataset_check.h; `--check_dataset`, and at a run's start): what
// the run's own reading of the dataset found. Each finding names a file and says why.
struct DatasetFile {
  std::string path, reason;
};
struct DatasetBucket {
  long long width = 0, height = 0;
  long long images = 0;        // image files in this bucket, each once
  long long with_repeats = 0;  // what an epoch draws from it (sd-scripts' bucket counts)
};
struct DatasetFolder {
  std::string path;  // image_dir, or the metadata_file of a fine-tuning subset
  long long images = 0;  // usable image files
  long long repeats = 0;  // num_repeats
  long long with_repeats = 0;  // what an epoch draws from it (regularisation: after balancing)
  long long validation = 0;  // of `images`, held out by validation_split
  bool regularization = false;
};
struct DatasetCheck {
  long long images = 0;  // image files in use
  bool contents_compared = false;  // duplicates were looked for (content hashes)
  bool pixels_decoded = false;     // every image was decoded, not only its header read
  std::vector<std::string> refusals;  // why a run would refuse this dataset; empty: it trains
  std::vector<std::string> warnings;  // what reading the dataset said (folders skipped, ...)
  std::vector<DatasetFile> missing_captions, empty_captions, too_small, unreadable;
  std::vector<std::vector<std::string>> duplicates;  // each: the files with one content
  std::vector<DatasetBucket> buckets;
  std::vector<DatasetFolder> folders;
};
// A command of the run's control channel (`--control stdin`, DESIGN.md §3) acknowledged at the step
// boundary it acted at: `command` as given (sample, save, stop_after_epoch, pause, resume); `result`
// done (it acted), pending (stop_after_epoch: the run ends after epoch `epoch`) or ignored (nothing
// to do; `message` says why); `seconds` what it took (the samples, the save, the pause's length);
// `message` what it did, in words. `epoch` is the step's (1-based), or for stop_after_epoch the
// epoch the run ends after.
struct Control {
  std::string command;
  long long step = 0, epoch = 0;
  std::string result;
  double seconds = 0;
  std::string message;
};
// One cell of a checkpoint grid rendered (`--sample_grid`, DESIGN.md §3): `row` of `rows` (0: the
// base model), `column` of `columns` (the prompt's position in sample_prompts), the saved file of
// the row (empty for the base model), the prompt, and how long the image took.
// The PNG text chunk that holds a checkpoint grid's layout (rows, columns, cell size): the runner
// writes it (sample/sample_grid.h), the app reads it (gui/checkpoint_grid_layout.h).
inline constexpr const char* kGridLayoutPngKey = "sinter_grid";
struct GridCell {
  long long row = 0, rows = 0, column = 0, columns = 0;
  std::string file, prompt;
  double seconds = 0;
};
struct Done {
  std::string status;  // completed | stopped | failed
  long long steps = 0;
  double seconds = 0;
  // Why a completed run ended before its last step: "early_stop" (early_stop_patience), with
  // `message` saying why in words; both empty (and not written) otherwise.
  std::string reason, message;
};
struct Unknown {
  std::string type;
};

using Event = std::variant<Start, CompilePlan, Warmup, Step, Epoch, Validation, Saved, Sample, Warning, Error, DatasetCheck, Control,
                           GridCell, Done, Unknown>;

std::string typeName(const Event& e);
// One line of JSON, without the trailing newline.
std::string toJsonLine(const Event& e);
// nullopt for a line that is not a JSON object with a string "type".
std::optional<Event> parseJsonLine(const std::string& line);

}  // namespace sinter::events
