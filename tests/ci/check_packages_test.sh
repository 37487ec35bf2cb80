#!/usr/bin/env bash
# CTest driver for .ci/check-packages: on the configured build tree, the check passes with the real
# package list and fails with a copy that leaves PACKAGE out, naming PACKAGE.
#   check_packages_test.sh CHECK_SCRIPT BUILD_DIR LIST_FILE WORK_DIR PACKAGE
# WORK_DIR is this test's own scratch folder (the check's traced configures go there too).
set -uo pipefail
[ $# -eq 5 ] || { echo "usage: $0 CHECK_SCRIPT BUILD_DIR LIST_FILE WORK_DIR PACKAGE" >&2; exit 2; }
check="$1" build="$2" list="$3" work="$4" package="$5"
rm -rf "$work" && mkdir -p "$work" || exit 2
export TMPDIR="$work"
fail() { echo "FAIL: $*"; exit 1; }

echo "== with $list"
"$check" "$build" "$list"
rc=$?
[ "$rc" -eq 0 ] || fail "the check failed (exit $rc) with the real list"

grep -qE "^[[:space:]]*$package[[:space:]]*\$" "$list" || fail "$package is not listed in $list"
reduced="$work/debian-packages-without-$package.txt"
grep -vE "^[[:space:]]*$package[[:space:]]*\$" "$list" > "$reduced"
echo "== with $list minus $package (must fail)"
"$check" "$build" "$reduced" 2> "$work/stderr.txt"
rc=$?
cat "$work/stderr.txt"
[ "$rc" -eq 1 ] || fail "the check exited $rc without $package (expected 1)"
grep -q "^check-packages: $package (.*) is used by the build but is neither listed in" "$work/stderr.txt" \
  || fail "the check's message does not name $package"
rm -rf "$work"
echo "PASS"
