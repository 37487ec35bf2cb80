#pragma once
// kohya_ss's accelerate launch settings (class_accelerate_launch.py): the processes of one machine
// become the app's GPUs setting, and accelerate's TorchDynamo settings (dynamo_backend, dynamo_mode,
// dynamo_use_fullgraph, dynamo_use_dynamic) become Sinter's compile settings.
#include "core/kohya_import_context.h"

namespace sinter {

void importKohyaAccelerate(KohyaImportContext& ctx);

}  // namespace sinter
