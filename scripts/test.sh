#!/usr/bin/env bash
# Build mcptop and run every test (unit and integration) with CTest.
#
#   scripts/test.sh            install deps, build into build/, ctest
#   scripts/test.sh --asan     the same with AddressSanitizer + UBSan, in build-asan/
#
# Options:
#   --asan          sanitizer build (-DMCPTOP_SANITIZE=ON) into build-asan/
#   --no-deps       skip scripts/install-deps.sh
#   -R REGEX        run only the tests matching REGEX (passed to ctest)
#
# Environment:
#   MCPTOP_BUILD_DIR   build directory (default build/ or build-asan/)
#   CTEST_TIMEOUT      default per-test timeout in seconds (default 120; tests
#                      that set their own TIMEOUT property keep it)
#   JOBS               parallel compile jobs (default: nproc)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

asan=0
deps=1
ctest_filter=()
while [ $# -gt 0 ]; do
  case "$1" in
    --asan) asan=1 ;;
    --no-deps) deps=0 ;;
    -R) [ $# -ge 2 ] || { echo "test.sh: -R needs a regex" >&2; exit 2; }
        ctest_filter=(-R "$2"); shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test.sh: unknown argument: $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done

if [ "$asan" -eq 1 ]; then
  build_dir="${MCPTOP_BUILD_DIR:-build-asan}"
  build_type=RelWithDebInfo
  sanitize=ON
  # Leaks count as failures; UBSan stops at the first finding with a stack.
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
  # The soak is shorter under the sanitizers (they are slower, not leakier).
  export MCPTOP_SOAK_S="${MCPTOP_SOAK_S:-35}"
  label="sanitizer build (ASan+UBSan) in $build_dir"
else
  build_dir="${MCPTOP_BUILD_DIR:-build}"
  build_type=RelWithDebInfo
  sanitize=OFF
  label="plain build (RelWithDebInfo) in $build_dir"
fi
jobs="${JOBS:-$(nproc 2>/dev/null || echo 2)}"

echo "==> test.sh: $label"

if [ "$deps" -eq 1 ]; then
  echo "==> installing dependencies"
  "$ROOT/scripts/install-deps.sh"
fi

echo "==> configuring ($build_type, MCPTOP_SANITIZE=$sanitize)"
cmake -S "$ROOT" -B "$build_dir" \
  -DCMAKE_BUILD_TYPE="$build_type" \
  -DBUILD_TESTING=ON \
  -DMCPTOP_SANITIZE="$sanitize" \
  -DDART_TESTING_TIMEOUT="${CTEST_TIMEOUT:-120}" \
  --log-level=WARNING >/dev/null

echo "==> building"
cmake --build "$build_dir" --parallel "$jobs"

echo "==> running tests: ctest --test-dir $build_dir --output-on-failure"
ctest --test-dir "$build_dir" --output-on-failure "${ctest_filter[@]}"
