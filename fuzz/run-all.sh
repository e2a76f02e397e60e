#!/bin/sh
# Run every fuzz target for SECONDS each (default 60), one after another. New inputs the
# fuzzer finds go to fuzz/found/<target>/ (git-ignored); the committed seeds in
# corpus/<target>/ are read, never written. A crash leaves its input in
# fuzz/artifacts/<target>/; the other targets still run, and the script exits 1 naming
# the targets that failed. Usage: fuzz/run-all.sh [SECONDS] [extra libFuzzer flags...]
set -u
cd "$(dirname "$0")"
seconds=${1:-60}
[ $# -gt 0 ] && shift
failed=""
for target in $(cargo +nightly fuzz list); do
    mkdir -p "found/$target"
    echo "== $target: ${seconds}s"
    if ! cargo +nightly fuzz run "$target" "found/$target" "corpus/$target" -- \
        -max_total_time="$seconds" -timeout=10 -print_final_stats=1 "$@"; then
        failed="$failed $target"
    fi
done
if [ -n "$failed" ]; then
    echo "FAILED:$failed"
    exit 1
fi
echo "all targets ran ${seconds}s without a crash"
