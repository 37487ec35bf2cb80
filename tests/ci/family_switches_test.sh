#!/usr/bin/env bash
# CTest driver for .ci/check-family-switches: the tree passes as it is, and a scratch copy fails,
# naming the file and line, when a file outside docs/adding-a-model-family.md's places switches on a
# family (here the training loop, which must reach families through parts/).
#   family_switches_test.sh CHECK_SCRIPT ROOT WORK_DIR
set -uo pipefail
[ $# -eq 3 ] || { echo "usage: $0 CHECK_SCRIPT ROOT WORK_DIR" >&2; exit 2; }
check="$1" root="$2" work="$3"
rm -rf "$work" && mkdir -p "$work" || exit 2
fail() { echo "FAIL: $*"; exit 1; }

echo "== $root as it is"
"$check" "$root" || fail "the check failed (exit $?) on $root"

copy="$work/tree"
mkdir -p "$copy" && cp -r "$root/core" "$root/gui" "$root/runner" "$copy/" && mkdir -p "$copy/docs" &&
  cp "$root/docs/adding-a-model-family.md" "$copy/docs/" || exit 2
file=runner/train/loop/training_loop.cpp
[ -f "$copy/$file" ] || fail "$file is not in $root (update this test)"
printf 'static_assert(sinter::Family::FLUX != sinter::Family::SDXL);\n' >> "$copy/$file"
echo "== $file switches on Family::FLUX (must fail)"
"$check" "$copy" 2> "$work/stderr.txt"
rc=$?
cat "$work/stderr.txt"
[ "$rc" -eq 1 ] || fail "the check exited $rc (expected 1)"
grep -qE "^check-family-switches: $file:[0-9]+: a model family switched on outside" "$work/stderr.txt" ||
  fail "the message does not name $file and its line"
echo "PASS"
