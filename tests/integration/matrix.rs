//! The capability matrix: the Python SDK 2.x client (`tests/peers/capability_matrix.py`) runs
//! the same probes against server-everything directly and through the companion
//! (`mcp-companion bridge`), and every row must come out equal — the same success and the same
//! detail (names, kinds, counts) — or be one the guide names as deliberately different
//! (docs/src/passes-through.md, "Deliberately different"), with its reason.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{BIN, Companion, everything_js, peers_dir, python_sdk2, run_script};

const PROBES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/peers/capability_matrix.py"
);
const GUIDE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/src/passes-through.md");

/// Rows allowed to differ, each named in the guide's "Deliberately different" table.
const DELIBERATELY_DIFFERENT: &[&str] = &["roots"];

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

/// Runs the probes against `command` directly and through a companion serving it as
/// `server` (without the wrapped resource and prompt tools, which a direct session does not
/// have); returns the rows that differ, as text with the companion's log, and how many rows ran.
/// Every row must work directly.
pub(crate) async fn compare(
    prober: &Prober,
    server: &str,
    command: Vec<String>,
) -> (Vec<(String, String)>, usize) {
    let home = tempfile::tempdir().expect("home");
    let mut direct_args = vec!["--".to_owned()];
    direct_args.extend(command.iter().cloned());
    let direct = prober.probe(direct_args, home.path().to_owned()).await;
    assert_eq!(direct["exit"], json!(0), "direct {server}: {direct:#}");

    let c = Companion::start(json!({
        "wrapResources": false,
        "mcpServers": { server: { "command": command[0], "args": command[1..] } },
    }));
    for s in c.settled().await {
        assert_eq!(s.state.as_str(), "running", "{s:?}\n{}", c.log());
    }
    let through = prober
        .probe(
            vec![
                "--tool-prefix".into(),
                format!("mcp_{server}_"),
                "--prompt-prefix".into(),
                format!("{server}_"),
                "--".into(),
                BIN.into(),
                "bridge".into(),
                "--socket".into(),
                c.socket.display().to_string(),
            ],
            home.path().to_owned(),
        )
        .await;
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
    (differing, rows.len())
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

#[tokio::test]
async fn python_sdk_probes_of_everything_agree_directly_and_through_the_companion() {
    let Some(peers) = peers_dir() else { return };
    let prober = Prober {
        interpreter: python_sdk2(&peers),
        script: PathBuf::from(PROBES),
    };
    let js = everything_js(&peers).display().to_string();
    let command = vec!["node".to_owned(), js, "stdio".to_owned()];
    let (differing, count) = compare(&prober, "everything", command).await;
    assert!(count >= 20, "every probe ran: {count} rows");
    assert_only_deliberate(&differing, DELIBERATELY_DIFFERENT);
}
