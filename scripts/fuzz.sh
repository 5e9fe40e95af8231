#!/usr/bin/env bash
# Build the libFuzzer targets (tests/fuzz) with clang into build-fuzz/ and
# run each for a bounded time on its committed seed corpus.
#
#   scripts/fuzz.sh              every target, 20 s each
#   scripts/fuzz.sh 300          every target, 5 minutes each
#   scripts/fuzz.sh 0            replay the seed corpora only (no fuzzing)
#   scripts/fuzz.sh 60 sse str   only these targets
#
# One target runs at a time (one process). New inputs go to a scratch
# corpus under build-fuzz/corpus/, never into the committed one; a finding
# is written to build-fuzz/findings/<target>-crash-* (or leak-, timeout-,
# oom-) and the script exits non-zero after running the rest.
#
# Environment:
#   MCPTOP_FUZZ_DIR     build directory (default build-fuzz)
#   FUZZ_MAX_LEN        largest input libFuzzer makes (default 16384 bytes)
#   JOBS                parallel compile jobs (default 2)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

case "${1:-}" in
  -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
seconds="${1:-20}"
[ $# -gt 0 ] && shift
case "$seconds" in
  ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number (try --help)" >&2
               exit 2 ;;
esac

build_dir="${MCPTOP_FUZZ_DIR:-build-fuzz}"
max_len="${FUZZ_MAX_LEN:-16384}"
jobs="${JOBS:-2}"

command -v clang >/dev/null 2>&1 \
  || { echo "fuzz.sh: clang is not installed (scripts/install-deps.sh)" >&2; exit 2; }

echo "==> fuzz.sh: configuring $build_dir (clang, libFuzzer + ASan + UBSan)"
CC=clang CXX=clang++ cmake -S "$ROOT" -B "$build_dir" \
  -DMCPTOP_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo --log-level=WARNING >/dev/null
echo "==> building"
cmake --build "$build_dir" --parallel "$jobs"

if [ $# -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for src in tests/fuzz/fuzz_*.c; do
    name="$(basename "$src" .c)"
    targets+=("${name#fuzz_}")
  done
fi

# Leaks are findings; UBSan stops with a stack (the targets abort on it).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

mkdir -p "$build_dir/findings"
failed=()
for t in "${targets[@]}"; do
  bin="$build_dir/tests/fuzz/fuzz_$t"
  seeds="tests/fuzz/corpus/$t"
  scratch="$build_dir/corpus/$t"
  dict="tests/fuzz/dict/$t.dict"
  [ -x "$bin" ] || { echo "fuzz.sh: no target fuzz_$t" >&2; failed+=("$t"); continue; }
  [ -d "$seeds" ] || { echo "fuzz.sh: no seed corpus $seeds" >&2; failed+=("$t"); continue; }
  mkdir -p "$scratch"
  args=(-max_len="$max_len" -timeout=20 -rss_limit_mb=2048
        -print_final_stats=1
        -artifact_prefix="$build_dir/findings/$t-")
  [ -f "$dict" ] && args+=(-dict="$dict")
  log="$build_dir/findings/$t.log"
  if [ "$seconds" -eq 0 ]; then
    echo "==> fuzz_$t: replaying $(find "$seeds" -type f | wc -l) seeds"
    args+=(-runs=0)
  else
    echo "==> fuzz_$t: ${seconds}s from $(find "$seeds" -type f | wc -l) seeds"
    args+=(-max_total_time="$seconds")
  fi
  # A hard bound over libFuzzer's own, in case a target hangs outside it.
  rc=0
  timeout --kill-after=10 $((seconds + 60)) \
    "$bin" "${args[@]}" "$scratch" "$seeds" >"$log" 2>&1 || rc=$?
  grep -E '^(stat::number_of_executed_units|stat::new_units_added|Done )' \
    "$log" | sed 's/^/    /' || true
  if [ "$rc" -ne 0 ]; then
    echo "!!! fuzz_$t: FINDING (exit $rc); log: $log"
    grep -E 'property failed|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|SUMMARY|Test unit written' \
      "$log" | head -8 | sed 's/^/    /' || true
    failed+=("$t")
  fi
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz.sh: findings in: ${failed[*]} (inputs under $build_dir/findings/)"
  exit 1
fi
echo "fuzz.sh: no findings (${#targets[@]} targets)"
