//! A save killed at any point (SIGKILL) leaves a config that parses, complete, old or new: a
//! child process (this test binary, re-run with an environment switch) saves in a loop and is
//! killed at random moments.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};

use super::save_atomic;
use crate::config::load;

/// Set in the child: the config path to save to in a loop.
const CHILD_PATH: &str = "MCPC_TEST_SAVE_LOOP";
/// Padding per save, so that writing takes long enough to be interrupted.
const PADDING: usize = 256 * 1024;
const ROUNDS: u32 = 25;

fn generation(path: &Path) -> Option<u64> {
    let cfg = load(path).unwrap_or_else(|e| panic!("a killed save left a broken config: {e}"));
    let padding = cfg.raw["padding"].as_str().map_or(0, str::len);
    assert_eq!(padding, PADDING, "a killed save left a short document");
    cfg.raw["generation"].as_u64()
}

#[test]
#[ignore = "the child process of kill_9_during_saves_never_leaves_a_torn_config"]
fn save_loop_child() {
    let Some(path) = std::env::var_os(CHILD_PATH) else {
        return;
    };
    let path = Path::new(&path);
    let mut next = if path.exists() {
        generation(path).unwrap_or(0) + 1
    } else {
        0
    };
    let padding = "x".repeat(PADDING);
    loop {
        let doc =
            json!({"mcpServers": {"s": {"command": "c"}}, "generation": next, "padding": padding});
        save_atomic(path, &doc).expect("save");
        next += 1;
    }
}

#[test]
fn kill_9_during_saves_never_leaves_a_torn_config() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("config.json");
    let exe = std::env::current_exe().expect("test binary");
    let mut seed = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(7, |d| d.subsec_nanos() | 1);
    let mut random_ms = move || {
        // xorshift32: the kill points only need to vary.
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        u64::from(seed % 30)
    };
    let mut seen = None;
    for round in 0..ROUNDS {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "config::save::crash::save_loop_child",
                "--ignored",
            ])
            .env(CHILD_PATH, &path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the saving child");
        // Wait until this child has completed a save, then let it run a random while longer.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let now = path.exists().then(|| generation(&path)).flatten();
            if now.is_some() && now != seen {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "round {round}: the child never saved"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(random_ms()));
        child.kill().expect("SIGKILL");
        child.wait().expect("reap");
        let after = generation(&path);
        assert!(
            after >= seen,
            "round {round}: went back from {seen:?} to {after:?}"
        );
        seen = after;
    }
    // Killed saves may leave temp files; the next save removes them.
    save_atomic(&path, &json!({"mcpServers": {}})).expect("save");
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
        .expect("list")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let saved: Value = serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("JSON");
    assert_eq!(saved["mcpServers"], json!({}));
}
