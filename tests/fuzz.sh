#!/usr/bin/env bash
# Bounded fuzzing of the endpoint's line handling and config parsing.
#
# With FUZZ_ENGINE=cargo-fuzz (or auto), cargo-fuzz $CARGO_FUZZ_VERSION and a nightly toolchain:
# each target in fuzz/ runs for FUZZ_SECONDS (default 60) seeded with its corpus in
# fuzz/corpus/<target>. The repo corpus is
# only read; inputs the run discovers go to a scratch corpus in the target dir (set
# FUZZ_GROW_CORPUS=1 to add them to fuzz/corpus/<target> instead, then commit the ones worth
# keeping). A crash stops the run; libFuzzer's input is in fuzz/artifacts/<target>/ and becomes a
# regression test (see fuzz/README.md).
#
# Otherwise (no nightly toolchain, or FUZZ_ENGINE=proptest): the proptest suites over the
# same entry points run with PROPTEST_CASES (default 1000) cases each, plus the corpus replay.
# The suite over a stdio server's lines (`upstream::lane::transport::props`, corpus
# fuzz/corpus/server_line) has no cargo-fuzz target (its entry point is private): it runs as
# proptest with either engine.
#
# Cost, measured 2026-12-01 on 2 cores at load 13 (three other builds running): the cold nightly
# build of both targets took 1253 CPU seconds (user+sys; 58 min wall at that load, about 11 min
# on 2 idle cores); each target then ran 30 s (endpoint 617 k inputs, config 805 k, no crash).
# Later runs rebuild only the fuzzed crate.
# Either way a failure exits non-zero.
#
# The nightly build has its own target dir, $FUZZ_TARGET_DIR (default
# ~/.cache/mcp-companion/fuzz-target), so CI can cache it apart from the stable one.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
CARGO_FUZZ_VERSION=0.13.2
target_dir=${FUZZ_TARGET_DIR:-$HOME/.cache/mcp-companion/fuzz-target}

have_nightly() { rustup run nightly rustc --version >/dev/null 2>&1; }
have_cargo_fuzz() {
  cargo fuzz --version 2>/dev/null | grep -qx "cargo-fuzz $CARGO_FUZZ_VERSION" && have_nightly
}

# cargo-fuzz comes from crates.io (pinned); nightly cannot be fetched here (no rustup
# network), so without it the proptest suites stand in.
if have_nightly && ! have_cargo_fuzz && [ "${FUZZ_ENGINE:-auto}" != proptest ]; then
  echo "fuzz: installing cargo-fuzz $CARGO_FUZZ_VERSION"
  cargo install --locked "cargo-fuzz@$CARGO_FUZZ_VERSION"
fi

# FUZZ_ENGINE: auto (the default: cargo-fuzz when nightly is there, else proptest), cargo-fuzz
# (fail when it is missing), or proptest.
engine=${FUZZ_ENGINE:-auto}
case "$engine" in
  auto) if have_cargo_fuzz; then engine=cargo-fuzz; else engine=proptest; fi ;;
  cargo-fuzz)
    if ! have_cargo_fuzz; then
      echo "fuzz: FUZZ_ENGINE=cargo-fuzz but cargo-fuzz $CARGO_FUZZ_VERSION or nightly is missing" >&2
      exit 1
    fi
    ;;
  proptest) ;;
  *) echo "fuzz: FUZZ_ENGINE must be auto, cargo-fuzz or proptest, not \"$engine\"" >&2; exit 2 ;;
esac

if [ "$engine" = cargo-fuzz ]; then
  start=$(date +%s)
  # Build both targets first (one build of the shared dependencies), then run each.
  cargo +nightly fuzz build --target-dir "$target_dir" --sanitizer none --debug-assertions
  echo "fuzz: built in $(($(date +%s) - start)) s"
  for target in endpoint config; do
    if [ "${FUZZ_GROW_CORPUS:-0}" = 1 ]; then
      corpora=("fuzz/corpus/$target")
    else
      scratch="$target_dir/scratch-corpus/$target"
      mkdir -p "$scratch"
      corpora=("$scratch" "fuzz/corpus/$target")
    fi
    echo "fuzz: $target for ${seconds}s (cargo-fuzz $CARGO_FUZZ_VERSION)"
    cargo +nightly fuzz run --target-dir "$target_dir" --sanitizer none --debug-assertions \
      "$target" "${corpora[@]}" -- \
      -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
  done
  # The server-line suite has no cargo-fuzz target (its entry point is private): proptest.
  PROPTEST_CASES=${PROPTEST_CASES:-1000} cargo test --locked --lib -- upstream::lane::transport::props
  echo "fuzz: done in $(($(date +%s) - start)) s"
else
  echo "fuzz: running the proptest suites (cargo-fuzz $CARGO_FUZZ_VERSION with nightly: cargo install --locked cargo-fuzz@$CARGO_FUZZ_VERSION)"
  PROPTEST_CASES=${PROPTEST_CASES:-1000} cargo test --locked --lib -- \
    endpoint::line::tests::props config::props upstream::lane::transport::props
fi
