#!/usr/bin/env bash
# Renders the app as README.md shows it, the tiny demo trained by the real runner with its loss
# chart and log (tests/gui/screenshot_tool.cpp's "real_run_finished" state), under Xvfb, into
# docs/images/sinter.png. Rerun after a change to the window:
#   bash docs/images/take_screenshot.sh [BUILD_DIR]      (default: build, as .ci/test builds it)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "${1:-$here/../../build}" && pwd)"
shots="$(mktemp -d)"
trap 'rm -rf "$shots"' EXIT
for tool in xvfb-run "$build/bin/gui_screenshot_tool" "$build/bin/sinter-runner"; do
  command -v "$tool" > /dev/null || { echo "take_screenshot.sh: $tool is missing (build with tests, install xvfb)" >&2; exit 1; }
done
(cd "$here/../.." && xvfb-run -a -s "-screen 0 1280x800x24" "$build/bin/gui_screenshot_tool" "$shots" --real-runner "$build/bin/sinter-runner" > /dev/null)
cp "$shots/real_run_finished.png" "$here/sinter.png"
echo "wrote $here/sinter.png"
