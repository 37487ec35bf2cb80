#pragma once
// The folders a run writes into and makes when they are not there yet: output_dir, and logging_dir
// (sd-scripts' TensorBoard writer makes it; kohya_ss presets name ones that do not exist yet). The
// preflight checks that each can be made and written, creating nothing (--dry_run leaves no trace);
// the run makes them when it starts.
#include <optional>
#include <string>
#include <vector>

namespace sinter::train {

// The path options whose folder the run creates.
const std::vector<std::string>& foldersTheRunCreates();

// Why option `key`'s folder `dir` cannot be made or written, judged by the folder or, while it is
// not there, the nearest one above it that is; nullopt when it can. Makes nothing.
std::optional<std::string> whyFolderCannotBeCreated(const std::string& key, const std::string& dir);

// Makes `dir` (with its parents) and writes a probe file into it; throws InputError naming `key`,
// the folder and the reason.
void createRunFolder(const std::string& key, const std::string& dir);

}  // namespace sinter::train
