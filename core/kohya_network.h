#pragma once
// kohya_ss's LoRA_type and its network fields: the network_module and network_args its GUI passes
// to sd-scripts (lora_gui.py's train_model), carried into Sinter's where Sinter holds that network.
#include <string>
#include <vector>

#include "core/kohya_import_context.h"

namespace sinter {

// Reports LoRA_type and every network field of the file (a LoRA tab's file only).
void importKohyaNetwork(KohyaImportContext& ctx);

// network_args keys Sinter's runner trains with: runner/network/lora_network.cpp's
// supportedNetworkArgs() (a test keeps the two lists equal). Any other key makes it refuse the run.
const std::vector<std::string>& sinterRunnerNetworkArgs();
// The same for network_module = "lycoris.kohya": runner/network/lycoris_args.cpp's supportedLycorisArgs().
const std::vector<std::string>& sinterRunnerLycorisArgs();
// network_module values Sinter's runner trains.
const std::vector<std::string>& sinterRunnerNetworkModules();

}  // namespace sinter
