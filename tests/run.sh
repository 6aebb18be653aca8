#!/usr/bin/env bash
# The test command (README "Run the tests"): installs the missing system packages and the
# third-party MCP peers the integration tests use (npm + PyPI, pinned), then runs formatting,
# lints, unit and integration tests, builds the user guide (docs/, mdBook) and checks its links,
# builds the Windows CLI and desktop app into their installer and tests it under Wine
# (tests/windows.sh), and bundles,
# installs and runs the .deb (tests/package/deb.sh). For macOS, tests/macos.sh runs clippy for
# both Apple targets with zig as the C compiler (no SDK, so nothing is linked).
set -euo pipefail
cd "$(dirname "$0")/.."
export MCP_PEERS_DIR=${MCP_PEERS_DIR:-$HOME/.cache/mcp-companion/peers}
# Peers are installed below, so tests that need them must run, not skip.
export MCP_REQUIRE_PEERS=1
bash tests/system-packages.sh
bash tests/peers/setup.sh "$MCP_PEERS_DIR"
cargo fmt --all -- --check
# The user guide: mdbook build docs (mdBook installed when missing) and its link check; early,
# so a broken link fails in seconds.
bash tests/docs/mdbook.sh
cargo clippy --all-targets --locked -- -D warnings
cargo test --all-targets --locked
bash tests/fuzz.sh
# The keychain tests again, against a real Secret Service (a private gnome-keyring).
bash tests/keychain.sh
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --lib --locked
bash tests/soak.sh
bash tests/conformance.sh
bash tests/windows.sh
bash tests/macos.sh

# The desktop shell (src-tauri/): built and tested only where its system packages are installed
# (.ci/run installs them). The root commands above cover the core package only.
if pkg-config --exists webkit2gtk-4.1 ayatana-appindicator3-0.1 2>/dev/null; then
  cargo clippy -p mcp-companion-desktop --all-targets --locked -- -D warnings
  cargo build -p mcp-companion -p mcp-companion-desktop --locked
  # The desktop alone, then the CLI alone (both no-ops after the line above): one set of
  # artifacts serves both.
  bash tests/one_build.sh
  cargo test -p mcp-companion-desktop --locked
  if command -v Xvfb >/dev/null && command -v WebKitWebDriver >/dev/null; then
    bash tests/desktop/e2e.sh
    bash tests/package/deb.sh
  else
    echo "skipping the desktop e2e test: Xvfb or WebKitWebDriver missing"
  fi
else
  echo "skipping the desktop shell: webkit2gtk-4.1 / ayatana-appindicator3 dev packages not installed"
fi
