//! The capability matrix: the Python SDK 2.x client (`tests/peers/capability_matrix.py`) runs
//! the same probes against server-everything directly and through the companion
//! (`mcp-companion bridge`), and every row must come out equal — the same success and the same
//! detail (names, kinds, counts) — or be one the guide names as deliberately different
//! (docs/src/passes-through.md, "Deliberately different"), with its reason.

use std::path::{Path, PathBuf};
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

async fn probe(python: &Path, args: Vec<String>, home: PathBuf) -> Value {
    let python = python.to_owned();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_script(
            &python,
            Path::new(PROBES),
            &args,
            &home,
            Duration::from_secs(240),
        )
    })
    .await
    .expect("join probes")
}

#[tokio::test]
async fn python_sdk_probes_of_everything_agree_directly_and_through_the_companion() {
    let Some(peers) = peers_dir() else { return };
    let python = python_sdk2(&peers);
    let js = everything_js(&peers).display().to_string();
    let home = tempfile::tempdir().expect("home");

    let direct = probe(
        &python,
        vec!["--".into(), "node".into(), js.clone(), "stdio".into()],
        home.path().to_owned(),
    )
    .await;
    assert_eq!(direct["exit"], json!(0), "direct: {direct:#}");

    // Without the wrapped resource and prompt tools, which a direct session does not have.
    let c = Companion::start(json!({
        "wrapResources": false,
        "mcpServers": { "everything": { "command": "node", "args": [js, "stdio"] } },
    }));
    for s in c.settled().await {
        assert_eq!(s.state.as_str(), "running", "{s:?}\n{}", c.log());
    }
    let through = probe(
        &python,
        vec![
            "--tool-prefix".into(),
            "mcp_everything_".into(),
            "--prompt-prefix".into(),
            "everything_".into(),
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
        "through: {through:#}\n{}",
        c.log()
    );

    let guide = std::fs::read_to_string(GUIDE).expect("the guide page");
    let rows = direct["probes"].as_object().expect("direct probes");
    assert!(rows.len() >= 20, "every probe ran: {direct:#}");
    let mut differing = Vec::new();
    for (name, row) in rows {
        assert_eq!(row["ok"], json!(true), "direct {name} must work: {row}");
        let other = &through["probes"][name];
        if other != row {
            differing.push((
                name.clone(),
                format!("{name}:\n  direct  {row}\n  through {other}"),
            ));
        }
    }
    let unexplained: Vec<&str> = differing
        .iter()
        .filter(|(name, _)| !DELIBERATELY_DIFFERENT.contains(&name.as_str()))
        .map(|(_, text)| text.as_str())
        .collect();
    assert!(
        unexplained.is_empty(),
        "rows that differ and are not named as deliberate:\n{}\n{}",
        unexplained.join("\n"),
        c.log()
    );
    for name in DELIBERATELY_DIFFERENT {
        assert!(
            guide.contains(&format!("`{name}`")),
            "{name} is allowed to differ but the guide does not name it"
        );
    }
    eprintln!("rows that differ (deliberately): {differing:#?}");
}
