#!/usr/bin/env bash
# CTest driver for .ci/check-train-layers: runner/train/ passes as it is, and a scratch copy fails
# with each kind of back-edge injected (a lower layer including a higher one, a family including
# its sibling), the check naming the file and the edge.
#   train_layers_test.sh CHECK_SCRIPT TRAIN_DIR WORK_DIR
# WORK_DIR is this test's own scratch folder.
set -uo pipefail
[ $# -eq 3 ] || { echo "usage: $0 CHECK_SCRIPT TRAIN_DIR WORK_DIR" >&2; exit 2; }
check="$1" train="$2" work="$3"
rm -rf "$work" && mkdir -p "$work" || exit 2
fail() { echo "FAIL: $*"; exit 1; }

echo "== $train as it is"
"$check" "$train" || fail "the check failed (exit $?) on $train"

# expect_failure NAME FILE INCLUDE PATTERN: a copy with FILE (relative to train/) including INCLUDE
# fails, and the message matches PATTERN.
expect_failure() {
  local name="$1" file="$2" include="$3" pattern="$4"
  local copy="$work/$name/train"
  mkdir -p "$work/$name" && cp -r "$train" "$copy" || exit 2
  [ -f "$copy/$file" ] || fail "$file is not in $train (update this test)"
  printf '#include "%s"\n' "$include" >> "$copy/$file"
  echo "== $name: $file includes $include (must fail)"
  "$check" "$copy" 2> "$work/$name/stderr.txt"
  local rc=$?
  cat "$work/$name/stderr.txt"
  [ "$rc" -eq 1 ] || fail "the check exited $rc with $file including $include (expected 1)"
  grep -qE "$pattern" "$work/$name/stderr.txt" || fail "the check's message does not match '$pattern'"
}
expect_failure up base/device_info.h train/loop/training_loop.h \
  '^check-train-layers: runner/train/base/device_info.h includes train/loop/training_loop.h: base/ \(layer 0\) may include only lower layers'
expect_failure family loop/training_loop.cpp train/sdxl/sdxl_family.h \
  '^check-train-layers: runner/train/loop/training_loop.cpp includes train/sdxl/sdxl_family.h: loop/ \(layer [0-9]+\) may include only lower layers'
expect_failure sibling sdxl/sdxl_family.h train/flux/flux_family.h \
  '^check-train-layers: runner/train/sdxl/sdxl_family.h includes train/flux/flux_family.h: sdxl/ and flux/ are siblings'
rm -rf "$work"
echo "PASS"
