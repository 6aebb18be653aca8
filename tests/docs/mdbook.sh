#!/usr/bin/env bash
# Builds the user guide (docs/) with mdBook and checks its internal links and anchors, and the
# README's (tests/docs/linkcheck.py). Installs the pinned mdBook from crates.io when that
# version is not on PATH: `cargo install --locked`, without the `serve` and `watch` features
# (a live-reload server the test command does not use), into ~/.cargo/bin.
set -euo pipefail
cd "$(dirname "$0")/../.."
MDBOOK_VERSION=0.5.4
if [ "$(mdbook --version 2>/dev/null)" != "mdbook v$MDBOOK_VERSION" ]; then
  echo "installing mdbook $MDBOOK_VERSION"
  # Its own scratch target dir: the project's (CARGO_TARGET_DIR) gains nothing from mdBook's units.
  scratch=$(mktemp -d)
  cargo install --locked --force "mdbook@$MDBOOK_VERSION" --no-default-features --features search \
    --target-dir "$scratch"
  rm -rf "$scratch"
fi
mdbook build docs
python3 tests/docs/linkcheck.py docs/book README.md
