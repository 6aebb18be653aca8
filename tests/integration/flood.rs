//! A stdio server that floods its stderr without a newline costs the companion a bounded amount
//! of memory: the line is cut while it is read (`upstream::stderr::MAX_LINE_BYTES`), not held
//! whole and cut afterwards; the cut line is kept, marked, and the lines after it read on.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use crate::common::{BIN, Companion, eventually};

/// How much the server writes without a newline, in bytes.
const FLOOD_BYTES: u64 = 200_000_000;

async fn wait_for(file: &Path, c: &Companion) {
    assert!(
        eventually(Duration::from_secs(60), || file.exists()).await,
        "{} never appeared\n{}",
        file.display(),
        c.log()
    );
}

#[tokio::test]
async fn a_stderr_flood_without_newlines_holds_the_companions_memory_flat() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (go, flooded, finish) = (
        dir.path().join("go"),
        dir.path().join("flooded"),
        dir.path().join("finish"),
    );
    // Waits for `go`, floods, says so, waits for `finish`, ends the line and becomes the demo
    // server. Until `finish` the flood line has no newline.
    let script = format!(
        "until [ -e '{go}' ]; do sleep 0.05; done
         head -c {FLOOD_BYTES} /dev/zero | tr '\\0' x >&2
         touch '{flooded}'
         until [ -e '{finish}' ]; do sleep 0.05; done
         printf '\\nafter the flood\\n' >&2
         exec '{BIN}' demo-server",
        go = go.display(),
        flooded = flooded.display(),
        finish = finish.display(),
    );
    let c = Companion::start(json!({ "mcpServers": { "flood": {
        "command": "sh", "args": ["-c", script], "connectTimeout": 300
    } } }));
    // The server has started (its process marker is in the log) before the first reading.
    assert!(
        eventually(Duration::from_secs(30), || {
            !String::from_utf8_lossy(&c.cli(&["logs", "flood"]).stdout).is_empty()
        })
        .await,
        "the server never started\n{}",
        c.log()
    );
    let before = c.rss_kib();
    std::fs::write(&go, "").expect("go");
    wait_for(&flooded, &c).await;
    // `head` is done once its last bytes are in the pipe; give the companion time to read them.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = c.rss_kib();
    let growth = after.saturating_sub(before);
    assert!(
        growth < 32 * 1024,
        "RSS grew by {growth} KiB (from {before} to {after} KiB) while the server wrote {} MB \
         without a newline",
        FLOOD_BYTES / 1_000_000
    );

    std::fs::write(&finish, "").expect("finish");
    let servers = c.settled().await;
    assert_eq!(servers[0].state.as_str(), "running", "{servers:?}");
    let logs = String::from_utf8_lossy(&c.cli(&["logs", "flood"]).stdout).into_owned();
    let cut = format!(
        "{}…",
        "x".repeat(mcp_companion::upstream::stderr::MAX_LINE_BYTES)
    );
    assert!(
        logs.lines().any(|l| l == cut),
        "no cut, marked line in the logs"
    );
    assert!(logs.lines().any(|l| l == "after the flood"), "{logs}");
}
