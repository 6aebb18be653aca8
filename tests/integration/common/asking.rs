//! The scripted asking agent (`tests/peers/asking_agent.py`): the official Python SDK, run
//! through `mcp-companion bridge`, answering what a server asks during its calls
//! (elicitation, sampling, roots) and printing what it was asked.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::{BIN, Companion, run_script};

/// The script.
pub const ASKING_AGENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/asking_agent.py");

/// Runs `python asking_agent.py ARGS -- <BIN> --socket <c's socket> bridge` off the runtime,
/// killed after `timeout`; what it printed, as [`run_script`] returns it.
pub async fn asking_agent(python: &Path, c: &Companion, args: &[&str], timeout: Duration) -> Value {
    let (python, home) = (python.to_owned(), c.home.clone());
    let mut args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    args.extend([
        "--".into(),
        BIN.into(),
        "--socket".into(),
        c.socket.display().to_string(),
        "bridge".into(),
    ]);
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_script(&python, Path::new(ASKING_AGENT), &args, &home, timeout)
    })
    .await
    .expect("join agent")
}

/// The field `key` (`method`, `message`) of each request the agent was asked, in order.
pub fn asked_each<'a>(run: &'a Value, key: &str) -> Vec<&'a str> {
    run["asked"]
        .as_array()
        .expect("asked")
        .iter()
        .filter_map(|a| a[key].as_str())
        .collect()
}
