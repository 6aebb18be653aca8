#!/usr/bin/env bash
# Bounded fuzzing of the endpoint's line handling and config parsing.
#
# With cargo-fuzz and a nightly toolchain: each target in fuzz/ runs for FUZZ_SECONDS (default
# 60) on its corpus in fuzz/corpus/<target>; new inputs it finds are added to that corpus.
# Otherwise (stable only): the proptest suites over the same entry points run with
# PROPTEST_CASES (default 5000) cases each, plus the corpus replay. Either way a failure exits
# non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}

if cargo fuzz --version >/dev/null 2>&1 && rustup run nightly rustc --version >/dev/null 2>&1; then
  for target in endpoint config; do
    echo "fuzz: $target for ${seconds}s (cargo-fuzz)"
    cargo +nightly fuzz run "$target" "fuzz/corpus/$target" -- -max_total_time="$seconds" -max_len=65536
  done
else
  echo "fuzz: cargo-fuzz or nightly not available; running the proptest suites instead"
  PROPTEST_CASES=${PROPTEST_CASES:-5000} cargo test --locked --lib -- \
    ipc::line::tests::props config::props
fi
