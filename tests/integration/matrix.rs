//! The capability matrix: the Python SDK 2.x client (`tests/peers/capability_matrix.py`) runs
//! the same probes against server-everything directly and through the companion
//! (`mcp-companion bridge`), and every row must come out equal — the same success and the same
//! detail (names, kinds, counts) — or be one the guide names as deliberately different
//! (docs/src/passes-through.md, "Deliberately different"), with its reason.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{BIN, Companion, everything_js, peers_dir, python_sdk2, run_script};
use crate::remote_fixture::everything;

const PROBES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/peers/capability_matrix.py"
);
const GUIDE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/src/passes-through.md");

/// Rows allowed to differ, each named in the guide's "Deliberately different" table.
const DELIBERATELY_DIFFERENT: &[&str] = &["roots"];

/// Rows allowed to differ with server-everything over streamable HTTP.
const DELIBERATELY_DIFFERENT_HTTP: &[&str] = &["roots"];

/// Rows allowed to differ for a 2026-07-28 client of a 2025-era server, each named in the
/// guide with its reason.
const DELIBERATELY_DIFFERENT_2026: &[&str] = &["roots"];

/// A probe script and the interpreter that runs it; each run prints one JSON object
/// (`exit`, `probes`: row name → `{ok, …detail}`).
pub(crate) struct Prober {
    pub(crate) interpreter: PathBuf,
    pub(crate) script: PathBuf,
}

impl Prober {
    async fn probe(&self, args: Vec<String>, home: PathBuf) -> Value {
        let (interpreter, script) = (self.interpreter.clone(), self.script.clone());
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run_script(
                &interpreter,
                &script,
                &args,
                &home,
                Duration::from_secs(240),
            )
        })
        .await
        .expect("join probes")
    }
}

/// What the probes talk to: a command on stdio, or a streamable-HTTP URL on loopback.
pub(crate) enum Upstream {
    Command(Vec<String>),
    Url(String),
}

/// One comparison: the rows that differ (name, text with the companion's log), how many rows
/// ran, and the protocol version each run spoke.
pub(crate) struct Comparison {
    pub(crate) differing: Vec<(String, String)>,
    pub(crate) rows: usize,
    pub(crate) direct_protocol: Value,
    pub(crate) through_protocol: Value,
}

/// Runs the probes (with `options` first, e.g. `--mode auto`) against `upstream` directly and
/// through a companion serving it as `server` (without the wrapped resource and prompt tools,
/// which a direct session does not have). Every row must work directly.
pub(crate) async fn compare(
    prober: &Prober,
    server: &str,
    upstream: Upstream,
    options: &[&str],
) -> Comparison {
    let home = tempfile::tempdir().expect("home");
    let mut direct_args: Vec<String> = options.iter().map(|o| o.to_string()).collect();
    let mut through_args = direct_args.clone();
    let entry = match upstream {
        Upstream::Command(command) => {
            direct_args.push("--".into());
            direct_args.extend(command.iter().cloned());
            json!({ "command": command[0], "args": command[1..] })
        }
        Upstream::Url(url) => {
            direct_args.extend(["--url".to_owned(), url.clone()]);
            json!({ "type": "streamableHttp", "url": url })
        }
    };
    let direct = prober.probe(direct_args, home.path().to_owned()).await;
    assert_eq!(direct["exit"], json!(0), "direct {server}: {direct:#}");

    let c = Companion::start(json!({
        "wrapResources": false,
        "ssrfWhitelist": ["127.0.0.1/32"],
        "mcpServers": { server: entry },
    }));
    c.running().await;
    through_args.extend([
        "--tool-prefix".into(),
        format!("mcp_{server}_"),
        "--prompt-prefix".into(),
        format!("{server}_"),
        "--".into(),
        BIN.into(),
        "bridge".into(),
        "--socket".into(),
        c.socket.display().to_string(),
    ]);
    let through = prober.probe(through_args, home.path().to_owned()).await;
    assert_eq!(
        through["exit"],
        json!(0),
        "through {server}: {through:#}\n{}",
        c.log()
    );
    let rows = direct["probes"].as_object().expect("direct probes");
    let mut differing = Vec::new();
    for (name, row) in rows {
        assert_eq!(
            row["ok"],
            json!(true),
            "direct {server} {name} must work: {row}"
        );
        let other = &through["probes"][name];
        if other != row {
            differing.push((
                name.clone(),
                format!(
                    "{server} {name}:\n  direct  {row}\n  through {other}\n{}",
                    c.log()
                ),
            ));
        }
    }
    Comparison {
        differing,
        rows: rows.len(),
        direct_protocol: direct["protocol"].clone(),
        through_protocol: through["protocol"].clone(),
    }
}

/// Fails on any differing row not in `allowed`, and on an allowed row the guide does not name.
pub(crate) fn assert_only_deliberate(differing: &[(String, String)], allowed: &[&str]) {
    let unexplained: Vec<&str> = differing
        .iter()
        .filter(|(name, _)| !allowed.contains(&name.as_str()))
        .map(|(_, text)| text.as_str())
        .collect();
    assert!(
        unexplained.is_empty(),
        "rows that differ and are not named as deliberate:\n{}",
        unexplained.join("\n")
    );
    let guide = std::fs::read_to_string(GUIDE).expect("the guide page");
    for name in allowed {
        assert!(
            guide.contains(&format!("`{name}`")),
            "{name} is allowed to differ but the guide does not name it"
        );
    }
    let names: Vec<&str> = differing.iter().map(|(n, _)| n.as_str()).collect();
    eprintln!("rows that differ (deliberately): {names:?}");
}

fn python(peers: &std::path::Path) -> Prober {
    Prober {
        interpreter: python_sdk2(peers),
        script: PathBuf::from(PROBES),
    }
}

fn everything_stdio(peers: &std::path::Path) -> Upstream {
    let js = everything_js(peers).display().to_string();
    Upstream::Command(vec!["node".to_owned(), js, "stdio".to_owned()])
}

#[tokio::test]
async fn python_sdk_probes_of_everything_agree_directly_and_through_the_companion() {
    let Some(peers) = peers_dir() else { return };
    let run = compare(&python(&peers), "everything", everything_stdio(&peers), &[]).await;
    assert!(run.rows >= 20, "every probe ran: {} rows", run.rows);
    assert_only_deliberate(&run.differing, DELIBERATELY_DIFFERENT);
}

/// The same probes with server-everything over streamable HTTP on loopback: directly on its
/// URL, and through the companion serving that URL as a remote server.
#[tokio::test]
async fn python_sdk_probes_of_everything_over_streamable_http_agree() {
    let Some(peers) = peers_dir() else { return };
    let Some(server) = everything("streamableHttp") else {
        return;
    };
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let run = compare(&python(&peers), "everything", Upstream::Url(url), &[]).await;
    assert!(run.rows >= 20, "every probe ran: {} rows", run.rows);
    assert_only_deliberate(&run.differing, DELIBERATELY_DIFFERENT_HTTP);
}

/// The SDK's `mcp.Client` in its default `auto` mode asks `server/discover` first:
/// server-everything does not answer it, so directly the client speaks 2025-11-25; the
/// companion does, so through it the same client speaks 2026-07-28 to a 2025-era server.
#[tokio::test]
async fn a_2026_era_client_probes_everything_through_the_companion_as_well_as_directly() {
    let Some(peers) = peers_dir() else { return };
    let run = compare(
        &python(&peers),
        "everything",
        everything_stdio(&peers),
        &["--mode", "auto"],
    )
    .await;
    assert_eq!(run.direct_protocol, json!("2025-11-25"));
    assert_eq!(run.through_protocol, json!("2026-07-28"));
    assert!(run.rows >= 20, "every probe ran: {} rows", run.rows);
    assert_only_deliberate(&run.differing, DELIBERATELY_DIFFERENT_2026);
}
