//! MCP bundles (`.mcpb`) built with the reference CLI (`@anthropic-ai/mcpb`, `mcpb init` /
//! `validate` / `pack`) from a Node.js and a Python server, installed with `mcp-companion
//! install`, run by a real companion and called through `bridge`; then removed. Hostile
//! bundles are refused with a clear error and write nothing (config bytes, data dir).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common::{BIN, Companion, peers_dir, peers_root, python_sdk2};

/// A private HOME, data dir and config file for the CLI.
struct Place {
    dir: tempfile::TempDir,
    cfg: PathBuf,
}

impl Place {
    fn new() -> Place {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        let cfg = dir.path().join("config.json");
        std::fs::write(&cfg, "{\n  \"mcpServers\": {}\n}\n").unwrap();
        Place { dir, cfg }
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn bundles(&self) -> PathBuf {
        self.data().join("mcp-companion/bundles")
    }

    /// Runs the CLI with this place's config, HOME and XDG_DATA_HOME, PATH `path`, no keychain.
    fn cli(&self, path: &str, args: &[&str]) -> Output {
        Command::new(BIN)
            .arg("--config")
            .arg(&self.cfg)
            .args(args)
            .env("HOME", self.dir.path().join("home"))
            .env("XDG_DATA_HOME", self.data())
            .env("PATH", path)
            .env_remove("MCP_COMPANION_CONFIG")
            .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    fn entry(&self, server: &str) -> Value {
        let doc: Value = serde_json::from_slice(&std::fs::read(&self.cfg).unwrap()).unwrap();
        doc["mcpServers"][server].clone()
    }
}

fn out(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The reference `mcpb` CLI from the peers dir, or `None` (skipped unless peers are required).
fn mcpb() -> Option<PathBuf> {
    let bin = peers_root().join("node-mcpb/node_modules/.bin/mcpb");
    if bin.exists() {
        return Some(bin);
    }
    assert!(
        std::env::var_os("MCP_REQUIRE_PEERS").is_none(),
        "MCP_REQUIRE_PEERS is set but {} is missing; run tests/peers/setup.sh",
        bin.display()
    );
    eprintln!(
        "SKIPPED: {} missing; run tests/peers/setup.sh",
        bin.display()
    );
    None
}

fn run(cmd: &mut Command) -> String {
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{cmd:?}: {}", out(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `mcpb init -y` in `src` (once), the manifest merged with `patch`, `mcpb validate`, then
/// `mcpb pack` into `<src>.mcpb`.
fn pack(mcpb: &Path, src: &Path, patch: Value) -> PathBuf {
    let path = src.join("manifest.json");
    if !path.exists() {
        run(Command::new(mcpb).arg("init").arg("-y").arg(src));
    }
    let mut manifest: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    for (k, v) in patch.as_object().unwrap() {
        manifest[k] = v.clone();
    }
    std::fs::write(&path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    run(Command::new(mcpb).arg("validate").arg(&path));
    let file = src.with_extension("mcpb");
    run(Command::new(mcpb).arg("pack").arg(src).arg(&file));
    file
}

/// A Node.js MCP server without dependencies: newline-delimited JSON-RPC on stdio, one tool
/// `greet` that reports what the bundle's config gave it.
const NODE_SERVER: &str = r#"
const rl = require('readline').createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
rl.on('line', (line) => {
  let m; try { m = JSON.parse(line); } catch { return; }
  if (m.id === undefined) return;
  const ok = (result) => send({ jsonrpc: '2.0', id: m.id, result });
  if (m.method === 'initialize') ok({ protocolVersion: m.params.protocolVersion,
    capabilities: { tools: {} }, serverInfo: { name: 'hello-node', version: '1.0.0' } });
  else if (m.method === 'tools/list') ok({ tools: [{ name: 'greet', description: 'Greets',
    inputSchema: { type: 'object', properties: { name: { type: 'string' } } } }] });
  else if (m.method === 'tools/call') ok({ content: [{ type: 'text', text: JSON.stringify({
    hello: `${process.env.GREETING}, ${m.params.arguments.name}`,
    token: process.env.API_TOKEN, leak: process.env.LEAK, folder: process.argv[2],
    cwd: process.cwd() }) }] });
  else if (m.method === 'ping') ok({});
  else send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'unknown method' } });
});
"#;

fn node_manifest() -> Value {
    json!({
        "manifest_version": "0.3",
        "name": "hello-node",
        "version": "1.0.0",
        "server": {"type": "node", "entry_point": "server/index.js",
                   "mcp_config": {"command": "node",
                                  "args": ["${__dirname}/server/index.js", "${user_config.folder}"],
                                  "env": {"GREETING": "${user_config.greeting}",
                                          "API_TOKEN": "${user_config.api_token}",
                                          "LEAK": "${BUNDLE_TOKEN}"}}},
        "compatibility": {"platforms": ["linux", "darwin", "win32"], "runtimes": {"node": ">=16.0.0"}},
        "user_config": {
            "greeting": {"type": "string", "title": "Greeting", "description": "How to greet", "default": "Hello"},
            "api_token": {"type": "string", "title": "API token", "description": "A secret", "sensitive": true, "required": true},
            "folder": {"type": "directory", "title": "Folder", "description": "Where", "default": "${HOME}"}
        }
    })
}

const PY_SERVER: &str = r#"
import os
from mcp.server.mcpserver import MCPServer
server = MCPServer("hello-python")

@server.tool()
def shout(text: str) -> str:
    """Upper-cases text."""
    return text.upper() + os.environ.get("SUFFIX", "")

server.run("stdio")
"#;

fn python_manifest() -> Value {
    json!({
        "manifest_version": "0.2",
        "name": "hello-python",
        "version": "0.4.0",
        "server": {"type": "python", "entry_point": "server/main.py",
                   "mcp_config": {"command": "python", "args": ["${__dirname}/server/main.py"],
                                  "env": {"SUFFIX": "${user_config.suffix}"}}},
        "compatibility": {"runtimes": {"python": ">=3.8"}},
        "user_config": {
            "suffix": {"type": "string", "title": "Suffix", "description": "Appended", "required": false}
        }
    })
}

/// Writes `files` under `dir`.
fn tree(dir: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// `initialize`, `tools/call name arguments` through `mcp-companion bridge`; the result.
fn call_through_bridge(socket: &Path, name: &str, arguments: Value) -> Value {
    let mut bridge = Command::new(BIN)
        .arg("bridge")
        .arg("--socket")
        .arg(socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = bridge.stdin.take().unwrap();
    let mut lines = BufReader::new(bridge.stdout.take().unwrap()).lines();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bundle-test", "version": "0"}}});
    writeln!(stdin, "{init}").unwrap();
    let first: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(first["id"], 1, "{first}");
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .unwrap();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": name, "arguments": arguments}});
    writeln!(stdin, "{call}").unwrap();
    let answer = loop {
        let line = lines.next().expect("bridge closed").unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == 2 {
            break v;
        }
    };
    drop(stdin);
    let _ = bridge.wait();
    answer
}

fn text_of(answer: &Value) -> String {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {answer}"))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_and_python_bundles_install_run_through_bridge_and_remove() {
    let (Some(mcpb), Some(peers)) = (mcpb(), peers_dir()) else {
        return;
    };
    let place = Place::new();
    let src = place.dir.path().join("src");
    let node_src = src.join("hello-node");
    tree(&node_src, &[("server/index.js", NODE_SERVER)]);
    let node_file = pack(&mcpb, &node_src, node_manifest());
    let py_src = src.join("hello-python");
    tree(&py_src, &[("server/main.py", PY_SERVER)]);
    let py_file = pack(&mcpb, &py_src, python_manifest());
    let system = std::env::var("PATH").unwrap_or_default();
    let path = format!(
        "{}:{system}",
        python_sdk2(&peers).parent().unwrap().display()
    );
    let home = place.dir.path().join("home");

    // A sensitive value with no keychain is refused (never written to the file).
    let before = std::fs::read(&place.cfg).unwrap();
    let o = place.cli(
        &path,
        &[
            "install",
            node_file.to_str().unwrap(),
            "--set",
            "api_token=s3cret",
        ],
    );
    assert!(!o.status.success(), "{}", out(&o));
    assert!(
        out(&o).contains("no OS keychain is available"),
        "{}",
        out(&o)
    );
    assert_eq!(std::fs::read(&place.cfg).unwrap(), before);
    assert!(!place.data().exists());
    // A dry run checks everything and writes nothing.
    let o = place.cli(
        &path,
        &[
            "install",
            node_file.to_str().unwrap(),
            "--set-env",
            "api_token=BUNDLE_TOKEN",
            "--dry-run",
        ],
    );
    assert!(o.status.success(), "{}", out(&o));
    assert!(out(&o).contains("nothing written"), "{}", out(&o));
    assert_eq!(std::fs::read(&place.cfg).unwrap(), before);
    assert!(!place.data().exists());

    let o = place.cli(
        &path,
        &[
            "install",
            node_file.to_str().unwrap(),
            "--set-env",
            "api_token=BUNDLE_TOKEN",
            "--set",
            "greeting=Bonjour ${HOME}",
        ],
    );
    assert!(o.status.success(), "{}", out(&o));
    assert!(
        out(&o).contains("installed bundle hello-node@1.0.0 as server \"hello-node\""),
        "{}",
        out(&o)
    );
    let node_entry = place.entry("hello-node");
    let dir = PathBuf::from(node_entry["source"]["dir"].as_str().unwrap());
    assert_eq!(dir.parent().unwrap(), place.bundles());
    assert!(dir.join("server/index.js").is_file());
    let sha = {
        use sha2::Digest;
        let d = sha2::Sha256::digest(std::fs::read(&node_file).unwrap());
        d.iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    assert_eq!(
        node_entry,
        json!({"type": "stdio", "command": "node",
               "args": [dir.join("server/index.js").display().to_string(), home.display().to_string()],
               "cwd": dir.display().to_string(),
               "env": {"GREETING": "Bonjour $${HOME}", "API_TOKEN": "${BUNDLE_TOKEN}",
                       "LEAK": "$${BUNDLE_TOKEN}"},
               "source": {"kind": "mcpb", "name": "hello-node", "version": "1.0.0",
                          "bundle": node_file.display().to_string(), "sha256": sha,
                          "dir": dir.display().to_string(),
                          "inputs": {"api_token": "${BUNDLE_TOKEN}", "greeting": "Bonjour $${HOME}",
                                     "folder": home.display().to_string()}}})
    );
    let o = place.cli(&path, &["install", py_file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", out(&o));
    let py_entry = place.entry("hello-python");
    assert_eq!(py_entry["command"], "python");
    assert!(
        py_entry.get("env").is_none(),
        "an unset optional value sets nothing: {py_entry}"
    );

    // `outdated` knows both by their files.
    let o = place.cli(&path, &["outdated"]);
    assert!(
        out(&o).contains("hello-node@1.0.0 (bundle)  up to date"),
        "{}",
        out(&o)
    );

    let doc: Value = serde_json::from_slice(&std::fs::read(&place.cfg).unwrap()).unwrap();
    let c = Companion::start_with_env(
        doc,
        &[
            ("PATH", Some(path.as_str())),
            ("BUNDLE_TOKEN", Some("tok-123")),
        ],
    );
    let statuses = c.settled().await;
    for s in &statuses {
        assert_eq!(
            s.state,
            mcp_companion::supervisor::ServerState::Running,
            "{s:?}\n{}",
            c.log()
        );
    }
    let socket = c.socket.clone();
    let node_answer = tokio::task::spawn_blocking(move || {
        call_through_bridge(&socket, "mcp_hello-node_greet", json!({"name": "Ada"}))
    })
    .await
    .unwrap();
    let got: Value = serde_json::from_str(&text_of(&node_answer)).unwrap();
    assert_eq!(
        got,
        json!({"hello": "Bonjour ${HOME}, Ada", "token": "tok-123", "leak": "${BUNDLE_TOKEN}",
               "folder": home.display().to_string(), "cwd": dir.display().to_string()})
    );
    let socket = c.socket.clone();
    let py_answer = tokio::task::spawn_blocking(move || {
        call_through_bridge(&socket, "mcp_hello-python_shout", json!({"text": "hi"}))
    })
    .await
    .unwrap();
    assert_eq!(text_of(&py_answer), "HI", "{py_answer}");
    drop(c);

    // `remove` deletes the entry and the unpacked directory.
    let o = place.cli(&path, &["remove", "hello-node"]);
    assert!(o.status.success(), "{}", out(&o));
    assert!(!dir.exists());
    assert_eq!(place.entry("hello-node"), Value::Null);
    assert_eq!(std::fs::read_dir(place.bundles()).unwrap().count(), 1);
}

/// A zip of `files`; a name starting with `@link:` is a symbolic link to the text.
fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in files {
        if let Some(link) = name.strip_prefix("@link:") {
            w.add_symlink(link, std::str::from_utf8(bytes).unwrap(), opts)
                .unwrap();
        } else {
            w.start_file(*name, opts).unwrap();
            w.write_all(bytes).unwrap();
        }
    }
    w.finish().unwrap().into_inner()
}

/// Everything under `dir` (relative paths), to see that nothing was written.
fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            out.push(e.path().strip_prefix(dir).unwrap().to_path_buf());
            if e.file_type().unwrap().is_dir() {
                todo.push(e.path());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn signed_bundles_are_verified_and_a_changed_one_is_refused() {
    let Some(mcpb) = mcpb() else {
        return;
    };
    let place = Place::new();
    let path = std::env::var("PATH").unwrap_or_default();
    let src = place.dir.path().join("hello-node");
    tree(&src, &[("server/index.js", NODE_SERVER)]);
    let file = pack(&mcpb, &src, node_manifest());
    let install = |file: &Path, server: &str| {
        place.cli(
            &path,
            &[
                "install",
                file.to_str().unwrap(),
                "--as",
                server,
                "--set-env",
                "api_token=T",
            ],
        )
    };

    // Unsigned: said so, installed.
    let o = install(&file, "plain");
    assert!(o.status.success(), "{}", out(&o));
    assert!(out(&o).contains("signature: not signed"), "{}", out(&o));

    // Signed by the reference CLI's self-signed certificate: verified (as `mcpb verify`
    // checks the signature), the signer named, installed.
    let signed = place.dir.path().join("signed.mcpb");
    std::fs::copy(&file, &signed).unwrap();
    run(Command::new(&mcpb)
        .arg("sign")
        .arg(&signed)
        .arg("--self-signed")
        .current_dir(place.dir.path()));
    let o = install(&signed, "signed");
    assert!(o.status.success(), "{}", out(&o));
    assert!(
        out(&o).contains(
            "signature: valid, made with a self-signed certificate naming \"C=US,O=MCPB \
             Extensions,CN=MCPB Self-Signed Certificate\""
        ),
        "{}",
        out(&o)
    );
    assert!(out(&o).contains("not who holds the key"), "{}", out(&o));
    assert_eq!(place.entry("signed")["source"]["kind"], "mcpb");
    // `mcpb unsign` takes the block off: unsigned again.
    let unsigned = place.dir.path().join("unsigned.mcpb");
    std::fs::copy(&signed, &unsigned).unwrap();
    run(Command::new(&mcpb).arg("unsign").arg(&unsigned));
    assert_eq!(
        std::fs::read(&unsigned).unwrap(),
        std::fs::read(&file).unwrap()
    );

    // One byte changed after signing, in the zip's data or in the signature: refused, and
    // nothing is written (config bytes, bundles directory).
    let bytes = std::fs::read(&signed).unwrap();
    let block_at = bytes
        .windows(11)
        .rposition(|w| w == b"MCPB_SIG_V1")
        .unwrap();
    let before = std::fs::read(&place.cfg).unwrap();
    let dirs = listing(&place.data());
    for (at, why) in [
        (block_at / 2, "the file was changed after it was signed"),
        (
            bytes.len() - b"MCPB_SIG_END".len() - 7,
            "the signature does not match the signer's certificate",
        ),
    ] {
        let mut changed = bytes.clone();
        changed[at] ^= 0x20;
        let tampered = place.dir.path().join("tampered.mcpb");
        std::fs::write(&tampered, &changed).unwrap();
        let o = install(&tampered, "tampered");
        assert!(!o.status.success(), "{}", out(&o));
        assert!(
            out(&o).contains("the bundle's signature does not verify") && out(&o).contains(why),
            "byte {at}: {}",
            out(&o)
        );
        assert!(out(&o).contains("nothing was installed"), "{}", out(&o));
        assert_eq!(std::fs::read(&place.cfg).unwrap(), before);
        assert_eq!(listing(&place.data()), dirs);
    }

    // The signed install's file replaced by the unsigned one: `update` refuses it, naming
    // both sides, and writes nothing.
    assert_eq!(
        place.entry("signed")["source"]["signer"]
            .as_str()
            .map(str::len),
        Some(64)
    );
    std::fs::copy(&file, &signed).unwrap();
    let o = place.cli(&path, &["update", "signed"]);
    assert!(!o.status.success(), "{}", out(&o));
    assert!(
        out(&o).contains("the installed version was signed by the certificate with SHA-256")
            && out(&o).contains("the bundle file now is not signed: not updated"),
        "{}",
        out(&o)
    );
    assert_eq!(std::fs::read(&place.cfg).unwrap(), before);
    assert_eq!(listing(&place.data()), dirs);
}

#[test]
fn hostile_bundles_are_refused_and_write_nothing() {
    let place = Place::new();
    let path = std::env::var("PATH").unwrap_or_default();
    let good = |over: Value| {
        let mut m = json!({"manifest_version": "0.3", "name": "evil", "version": "1.0.0",
            "description": "d", "author": {"name": "a"},
            "server": {"type": "node", "entry_point": "server/index.js",
                       "mcp_config": {"command": "node", "args": ["${__dirname}/server/index.js"]}}});
        for (k, v) in over.as_object().unwrap() {
            m[k] = v.clone();
        }
        m.to_string().into_bytes()
    };
    let manifest = good(json!({}));
    let zeros = vec![0u8; 8 << 20];
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "zip-slip",
            zip_of(&[
                ("manifest.json", &manifest),
                ("server/index.js", b"1"),
                ("../../evil.js", b"x"),
            ]),
            "refused entry \"../../evil.js\" of the bundle: a \"..\" component",
        ),
        (
            "absolute",
            zip_of(&[
                ("manifest.json", &manifest),
                ("server/index.js", b"1"),
                ("/tmp/evil.js", b"x"),
            ]),
            "refused entry \"/tmp/evil.js\" of the bundle: an absolute path",
        ),
        (
            "symlink",
            zip_of(&[
                ("manifest.json", &manifest),
                ("@link:server/index.js", b"/etc/passwd"),
            ]),
            "refused entry \"server/index.js\" of the bundle: a symbolic link",
        ),
        (
            "zip bomb",
            zip_of(&[
                ("manifest.json", &manifest),
                ("server/index.js", b"1"),
                ("server/zeros", &zeros),
            ]),
            "(more than 200:1, a zip bomb?)",
        ),
        (
            "manifest version",
            zip_of(&[
                ("manifest.json", &good(json!({"manifest_version": "9.9"}))),
                ("server/index.js", b"1"),
            ]),
            "manifest.json: manifest_version \"9.9\" is not one this companion reads (0.1, 0.2, 0.3, 0.4)",
        ),
        (
            "server type",
            zip_of(&[
                (
                    "manifest.json",
                    &good(
                        json!({"server": {"type": "ruby", "entry_point": "x", "mcp_config": {"command": "ruby"}}}),
                    ),
                ),
                ("x", b"1"),
            ]),
            "manifest.json: server.type \"ruby\" is not node, python, binary or uv",
        ),
        (
            "not json",
            zip_of(&[("manifest.json", b"{nope"), ("server/index.js", b"1")]),
            "manifest.json: manifest.json key must be a string",
        ),
        (
            "missing entry point",
            zip_of(&[("manifest.json", &manifest)]),
            "manifest.json: server.entry_point names \"server/index.js\", which the bundle does not hold",
        ),
        (
            "entry point outside",
            zip_of(&[(
                "manifest.json",
                &good(
                    json!({"server": {"type": "binary", "entry_point": "../bin/sh", "mcp_config": {"command": "/bin/sh"}}}),
                ),
            )]),
            "manifest.json: server.entry_point is refused: a \"..\" component",
        ),
        (
            "not a zip",
            b"MZ this is not a zip".to_vec(),
            "not a usable bundle: not a zip archive",
        ),
    ];
    let before = std::fs::read(&place.cfg).unwrap();
    for (what, bytes, want) in cases {
        let file = place
            .dir
            .path()
            .join(format!("{}.mcpb", what.replace(' ', "-")));
        std::fs::write(&file, bytes).unwrap();
        let o = place.cli(&path, &["install", file.to_str().unwrap()]);
        assert!(!o.status.success(), "{what}: {}", out(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "{what}: want {want}\n{}", out(&o));
        assert_eq!(
            std::fs::read(&place.cfg).unwrap(),
            before,
            "{what}: config changed"
        );
        assert!(!place.data().exists(), "{what}: the data dir was written");
    }
}

#[test]
fn outdated_and_update_follow_the_remembered_file() {
    let Some(mcpb) = mcpb() else {
        return;
    };
    let place = Place::new();
    let path = std::env::var("PATH").unwrap_or_default();
    let src = place.dir.path().join("hello-node");
    tree(&src, &[("server/index.js", NODE_SERVER)]);
    let file = pack(&mcpb, &src, node_manifest());
    let o = place.cli(
        &path,
        &[
            "install",
            file.to_str().unwrap(),
            "--set-env",
            "api_token=T",
        ],
    );
    assert!(o.status.success(), "{}", out(&o));
    let old_dir = PathBuf::from(place.entry("hello-node")["source"]["dir"].as_str().unwrap());
    // A key added by hand survives the update.
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&place.cfg).unwrap()).unwrap();
    doc["mcpServers"]["hello-node"]["toolTimeout"] = json!(5);
    std::fs::write(&place.cfg, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let o = place.cli(&path, &["update", "hello-node"]);
    assert!(
        out(&o).contains("\"hello-node\" is up to date (hello-node@1.0.0"),
        "{}",
        out(&o)
    );

    let mut newer = node_manifest();
    newer["version"] = json!("1.1.0");
    std::fs::remove_file(&file).unwrap();
    let again = pack(&mcpb, &src, newer);
    assert_eq!(again, file);
    let o = place.cli(&path, &["outdated"]);
    assert!(
        out(&o).contains("hello-node@1.0.0 (bundle)  update available: 1.1.0"),
        "{}",
        out(&o)
    );
    let o = place.cli(&path, &["update", "hello-node"]);
    assert!(o.status.success(), "{}", out(&o));
    assert!(
        out(&o).contains("updated bundle hello-node@1.1.0"),
        "{}",
        out(&o)
    );
    let entry = place.entry("hello-node");
    assert_eq!(entry["source"]["version"], "1.1.0");
    assert_eq!(entry["toolTimeout"], 5);
    assert_eq!(
        entry["env"]["API_TOKEN"], "${T}",
        "remembered values are reused"
    );
    let new_dir = PathBuf::from(entry["source"]["dir"].as_str().unwrap());
    assert!(new_dir.join("server/index.js").is_file());
    assert!(!old_dir.exists(), "the old directory is removed");
    assert_eq!(std::fs::read_dir(place.bundles()).unwrap().count(), 1);
    let o = place.cli(&path, &["outdated"]);
    assert!(
        out(&o).contains("hello-node@1.1.0 (bundle)  up to date"),
        "{}",
        out(&o)
    );
}
