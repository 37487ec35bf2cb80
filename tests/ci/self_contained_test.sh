#!/usr/bin/env bash
# CTest driver for .ci/check-self-contained: the repository passes, and a scratch copy of it with
# one file that names the folder beside the repository fails, naming that file.
#   self_contained_test.sh CHECK_SCRIPT SOURCE_DIR WORK_DIR
set -uo pipefail
[ $# -eq 3 ] || { echo "usage: $0 CHECK_SCRIPT SOURCE_DIR WORK_DIR" >&2; exit 2; }
check="$1" src="$2" work="$3"
fail() { echo "FAIL: $*"; exit 1; }

echo "== $src"
"$check" "$src" || fail "the repository names a folder beside it"

rm -rf "$work" && mkdir -p "$work/copy" || exit 2
# The copy holds the tracked files (no build trees), plus one that reads the folder beside it.
git -C "$src" ls-files -z --cached --others --exclude-standard | (cd "$src" && xargs -0 cp --parents -t "$work/copy") \
  || fail "could not copy $src"
beside="shared"
printf 'set(DATA ${PROJECT_SOURCE_DIR}/../%s/data)\n' "$beside" > "$work/copy/tests/reads_beside.cmake"
echo "== a copy with tests/reads_beside.cmake (must fail)"
"$check" "$work/copy" 2> "$work/stderr.txt"
rc=$?
cat "$work/stderr.txt"
[ "$rc" -eq 1 ] || fail "the check exited $rc on the copy (expected 1)"
grep -q "tests/reads_beside.cmake:1:" "$work/stderr.txt" || fail "the check does not name tests/reads_beside.cmake"
rm -rf "$work"
echo "PASS"
