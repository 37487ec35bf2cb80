#include "models/layers/parameters_from_checkpoint.h"

namespace sinter::models {

namespace {
thread_local int parametersFromCheckpointScopes = 0;  // scopes nest (a loader inside a loader)
}  // namespace

ParametersFromCheckpoint::ParametersFromCheckpoint() { ++parametersFromCheckpointScopes; }
ParametersFromCheckpoint::~ParametersFromCheckpoint() { --parametersFromCheckpointScopes; }
bool ParametersFromCheckpoint::active() { return parametersFromCheckpointScopes > 0; }

}  // namespace sinter::models
