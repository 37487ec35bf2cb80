#pragma once
// sinter-runner's command line (DESIGN.md §3).

namespace sinter::runner {

int runnerMain(int argc, char** argv);

}  // namespace sinter::runner
