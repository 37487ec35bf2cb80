#include "cli/runner_cli.h"

int main(int argc, char** argv) { return sinter::runner::runnerMain(argc, argv); }
