//! `bridge` with no companion running, as an agent spawns it (its own HOME, config and socket
//! in a temp dir, so the user's real companion and state are never touched): it starts one
//! and the agent's session works; two bridges at once start one companion; a broken config
//! or autostart turned off reach the agent as the error answer to its `initialize`, with exit
//! code 1. `connect` run from a build directory names a stable copy in the data dir, which
//! runs `bridge` and follows rebuilds.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{BIN, demo, eventually, live_processes, sigterm};

/// A private HOME, config file and socket path; every companion started for it is stopped on
/// drop.
struct Scene {
    _dir: tempfile::TempDir,
    home: PathBuf,
    config: PathBuf,
    socket: PathBuf,
}

impl Scene {
    fn new(config: &str) -> Scene {
        let dir = tempfile::Builder::new()
            .prefix("mcpa")
            .tempdir()
            .expect("tempdir");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).expect("home");
        let config_path = dir.path().join("config.json");
        std::fs::write(&config_path, config).expect("config");
        Scene {
            socket: dir.path().join("run/mcp.sock"),
            home,
            config: config_path,
            _dir: dir,
        }
    }

    /// The companions (`serve` processes) started with this scene's config.
    fn companions(&self) -> Vec<u32> {
        let config = self.config.display().to_string();
        live_processes()
            .into_iter()
            .filter(|(_, _, cmd)| cmd.contains(" serve ") && cmd.contains(&config))
            .map(|(pid, _, _)| pid)
            .collect()
    }

    /// A bridge as an agent spawns it, with `extra` arguments after `bridge`.
    fn bridge(&self, extra: &[&str]) -> std::process::Child {
        self.bridge_of(Path::new(BIN), extra)
    }

    /// [`Scene::bridge`] of the binary `program`.
    fn bridge_of(&self, program: &Path, extra: &[&str]) -> std::process::Child {
        Command::new(program)
            .arg("--config")
            .arg(&self.config)
            .arg("--socket")
            .arg(&self.socket)
            .arg("bridge")
            .args(extra)
            .env("HOME", &self.home)
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_STATE_HOME")
            .env_remove("MCP_COMPANION_SOCKET")
            .env_remove("MCP_COMPANION_CONFIG")
            .env_remove("MCP_COMPANION_NO_AUTOSTART")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("bridge")
    }

    /// The log of the companions a bridge started here.
    fn log(&self) -> String {
        std::fs::read_to_string(self.home.join(".local/state/mcp-companion/companion.log"))
            .unwrap_or_default()
    }
}

impl Drop for Scene {
    fn drop(&mut self) {
        let pids = self.companions();
        for pid in &pids {
            sigterm(*pid);
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(15);
        while !self.companions().is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}

fn initialize(name: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": name, "version": "0" } } })
}

/// initialize, initialized, tools/list; closes stdin after the listing's answer and returns
/// every line the bridge wrote, with its exit.
fn list_through(mut bridge: std::process::Child) -> (Vec<Value>, Output) {
    let mut stdin = bridge.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(bridge.stdout.take().expect("stdout"));
    let msgs = [
        initialize("autostart-test"),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }),
    ];
    for m in msgs {
        // A bridge that gave up has closed its stdin: its answer is on stdout.
        let _ = writeln!(stdin, "{m}");
    }
    let mut lines = Vec::new();
    let mut line = String::new();
    while stdout.read_line(&mut line).unwrap_or(0) > 0 {
        let v: Value = serde_json::from_str(&line).expect("json");
        line.clear();
        let last = v["id"] == json!(2) || v.get("error").is_some();
        lines.push(v);
        if last {
            break;
        }
    }
    drop(stdin);
    let mut rest = bridge.wait_with_output().expect("bridge exit");
    rest.stdout.clear();
    (lines, rest)
}

fn tool_names(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .find(|v| v["id"] == json!(2))
        .and_then(|v| v["result"]["tools"].as_array())
        .map(|t| {
            t.iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn demo_config() -> String {
    json!({ "mcpServers": { "demo": demo(&[]) } }).to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bridge_with_no_companion_starts_one_and_its_tools_are_listed() {
    let scene = Scene::new(&demo_config());
    // A stale socket, left by a companion that was killed.
    std::fs::create_dir_all(scene.socket.parent().expect("dir")).expect("run dir");
    drop(std::os::unix::net::UnixListener::bind(&scene.socket).expect("bind"));
    assert!(scene.socket.exists());
    let bridge = scene.bridge(&[]);
    let (lines, out) = tokio::task::block_in_place(|| list_through(bridge));
    let names = tool_names(&lines);
    assert!(
        names.iter().any(|n| n == "mcp_demo_echo"),
        "{lines:?}\n{}\nlog:\n{}",
        String::from_utf8_lossy(&out.stderr),
        scene.log()
    );
    assert!(out.status.success(), "{:?}", out.status);
    // The companion outlives the bridge that started it, detached in its own process group.
    let companions = scene.companions();
    assert_eq!(companions.len(), 1, "{companions:?}");
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", companions[0])).expect("stat");
    let fields: Vec<&str> = stat[stat.rfind(')').expect(")") + 2..]
        .split_whitespace()
        .collect();
    assert_eq!(fields[2], companions[0].to_string(), "own process group");
    let cwd = std::fs::read_link(format!("/proc/{}/cwd", companions[0])).expect("cwd");
    assert_eq!(cwd, scene.home, "runs in the home directory");
    assert!(scene.log().contains("listening"), "{}", scene.log());
    // A second agent finds it running: nothing more is started.
    let (lines, _) = tokio::task::block_in_place(|| list_through(scene.bridge(&[])));
    assert!(tool_names(&lines).iter().any(|n| n == "mcp_demo_echo"));
    assert_eq!(scene.companions(), companions);
}

#[tokio::test(flavor = "multi_thread")]
async fn two_bridges_started_together_start_one_companion() {
    let scene = Scene::new(&demo_config());
    let (a, b) = (scene.bridge(&[]), scene.bridge(&[]));
    let (ra, rb) = tokio::task::block_in_place(|| {
        std::thread::scope(|s| {
            let a = s.spawn(|| list_through(a));
            let b = s.spawn(|| list_through(b));
            (a.join().expect("a"), b.join().expect("b"))
        })
    });
    for (lines, out) in [&ra, &rb] {
        assert!(
            tool_names(lines).iter().any(|n| n == "mcp_demo_echo"),
            "{lines:?}\n{}\nlog:\n{}",
            String::from_utf8_lossy(&out.stderr),
            scene.log()
        );
    }
    let companions = scene.companions();
    assert_eq!(companions.len(), 1, "{companions:?}\n{}", scene.log());
    assert!(!scene.log().contains("already running"), "{}", scene.log());
}

/// The bridge's answer to `initialize` and its stderr, for a scene where it cannot start a
/// companion.
fn refused(scene: &Scene, extra: &[&str]) -> (Value, Output) {
    let (lines, out) = list_through(scene.bridge(extra));
    assert_eq!(lines.len(), 1, "{lines:?}");
    (lines[0].clone(), out)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_broken_config_reaches_the_agent_as_its_initialize_error_and_exit_1() {
    let scene = Scene::new("{\"mcpServers\": {oops");
    let (answer, out) = tokio::task::block_in_place(|| refused(&scene, &[]));
    assert_eq!(answer["id"], json!(1), "{answer}");
    let message = answer["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("its config does not load")
            && message.contains(&scene.config.display().to_string()),
        "{message}"
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end(), format!("error: {message}"), "one line");
    assert!(scene.companions().is_empty());
    assert!(!scene.socket.exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn autostart_turned_off_starts_nothing_and_says_so() {
    let off = json!({ "bridgeAutostart": false, "mcpServers": { "demo": demo(&[]) } });
    let scene = Scene::new(&off.to_string());
    let (answer, out) = tokio::task::block_in_place(|| refused(&scene, &[]));
    let message = answer["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("nothing is listening on ")
            && message.contains("\"bridgeAutostart\" is false"),
        "{message}"
    );
    assert_eq!(out.status.code(), Some(1));
    let scene = Scene::new(&demo_config());
    let (answer, out) = tokio::task::block_in_place(|| refused(&scene, &["--no-autostart"]));
    let message = answer["error"]["message"].as_str().expect("message");
    assert!(message.contains("--no-autostart"), "{message}");
    assert_eq!(out.status.code(), Some(1));
    assert!(scene.companions().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_companion_that_exits_at_start_is_quoted() {
    // The socket's directory is a file: `serve` cannot listen and exits, saying why.
    let scene = Scene::new(&demo_config());
    let blocker = scene.socket.parent().expect("dir").to_path_buf();
    std::fs::write(&blocker, "not a directory").expect("blocker");
    let (answer, out) = tokio::task::block_in_place(|| refused(&scene, &[]));
    let message = answer["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("the companion started by the bridge exited")
            && message.contains(&blocker.display().to_string()),
        "{message}\nlog:\n{}",
        scene.log()
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        eventually(Duration::from_secs(10), || scene.companions().is_empty()).await,
        "no companion left"
    );
}

/// `path` grown by `n` bytes at its end (an ELF binary still runs), with a new modification
/// time: a rebuild, as far as the stamp of the stable copy can tell.
fn rebuild(path: &Path, n: usize) {
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .expect("open build");
    file.write_all(&vec![0u8; n]).expect("grow build");
    file.set_modified(std::time::SystemTime::now() + Duration::from_secs(60))
        .expect("stamp build");
}

fn len(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn connect_from_a_build_dir_names_a_stable_copy_that_runs_bridge_and_follows_rebuilds() {
    // `own` runs the companion's own binary, as the default config's demo does.
    let scene = Scene::new(
        &json!({ "mcpServers": {
            "demo": demo(&[]),
            "own": { "command": "${MCP_COMPANION_EXE}", "args": ["demo-server"] }
        } })
        .to_string(),
    );
    let built = scene.home.join("repo/target/debug/mcp-companion");
    std::fs::create_dir_all(built.parent().expect("dir")).expect("build dir");
    std::fs::copy(BIN, &built).expect("a build in a cargo target dir");
    let copy = scene
        .home
        .join(".local/share/mcp-companion/bin/mcp-companion");
    let run = |exe: &Path, args: &[&str]| {
        let out = Command::new(exe)
            .args(args)
            .env("HOME", &scene.home)
            .env_remove("XDG_DATA_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .output()
            .expect("connect");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let connect = |exe: &Path| run(exe, &["connect", "cursor"]);
    let file = scene.home.join(".cursor/mcp.json");

    // --print names the copy and writes nothing.
    let said = run(&built, &["connect", "cursor", "--print"]);
    assert!(
        said.contains(&format!("\"command\":\"{}\"", copy.display()))
            && said.contains("connect would copy it to"),
        "{said}"
    );
    assert!(!file.exists() && !copy.exists(), "{said}");

    let said = connect(&built);
    assert!(
        said.contains(&format!(
            "the entry runs {} (copied there now)",
            copy.display()
        )) && said.contains("inside the cargo build directory"),
        "{said}"
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("written")).expect("json");
    let entry = &doc["mcpServers"]["mcp-companion"];
    assert_eq!(
        entry["command"],
        json!(copy.to_str().expect("utf-8")),
        "{doc}"
    );
    assert_eq!(entry["args"], json!(["bridge"]), "{doc}");
    assert_eq!(len(&copy), len(&built));
    // A client without a file gets the same program in the entry to paste.
    let said = run(&built, &["connect", "jetbrains"]);
    assert!(
        said.contains(&format!("\"command\": \"{}\"", copy.display())),
        "{said}"
    );

    // The entry's program runs `bridge`: with nothing running, it starts a companion from
    // itself, and the agent gets the demo's tools.
    let (lines, out) = tokio::task::block_in_place(|| list_through(scene.bridge_of(&copy, &[])));
    assert!(
        tool_names(&lines).iter().any(|n| n == "mcp_demo_echo"),
        "{lines:?}\n{}\nlog:\n{}",
        String::from_utf8_lossy(&out.stderr),
        scene.log()
    );
    let companions = scene.companions();
    assert_eq!(companions.len(), 1, "{companions:?}");
    #[cfg(target_os = "linux")]
    assert_eq!(
        std::fs::read_link(format!("/proc/{}/exe", companions[0])).expect("exe"),
        copy,
        "the companion runs from the copy"
    );

    // A rebuild, then `connect` from it: the copy (running the companion meanwhile) follows.
    rebuild(&built, 4096);
    let said = connect(&built);
    assert!(said.contains("(copied there now)"), "{said}");
    assert_eq!(len(&copy), len(&built));
    let said = connect(&built);
    assert!(said.contains("(already this build)"), "{said}");
    // The companion started from the old copy still starts its own binary: the new copy.
    let cli = |args: &[&str]| {
        Command::new(BIN)
            .arg("--socket")
            .arg(&scene.socket)
            .args(args)
            .env("HOME", &scene.home)
            .output()
            .expect("cli")
    };
    let restarted = cli(&["restart", "own"]);
    assert!(restarted.status.success(), "{restarted:?}");
    let own_state = || {
        let out = cli(&["status", "--json"]);
        let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        report["servers"]
            .as_array()
            .and_then(|servers| servers.iter().find(|s| s["name"] == "own").cloned())
            .unwrap_or_default()
    };
    assert!(
        eventually(Duration::from_secs(30), || own_state()["state"]
            == "running")
        .await,
        "{}\nlog:\n{}",
        own_state(),
        scene.log()
    );

    // Another rebuild, then `serve` from it: the copy follows too.
    for pid in scene.companions() {
        sigterm(pid);
    }
    assert!(eventually(Duration::from_secs(15), || scene.companions().is_empty()).await);
    rebuild(&built, 8192);
    let mut serve = Command::new(&built)
        .arg("--config")
        .arg(&scene.config)
        .arg("--socket")
        .arg(&scene.socket)
        .arg("serve")
        .env("HOME", &scene.home)
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("XDG_STATE_HOME")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve");
    let refreshed = eventually(Duration::from_secs(60), || len(&copy) == len(&built)).await;
    sigterm(serve.id());
    let _ = serve.wait();
    assert!(refreshed, "serve from a newer build refreshes the copy");
    let version = Command::new(&copy)
        .arg("--version")
        .output()
        .expect("copy runs");
    assert!(version.status.success(), "{version:?}");
}

/// `bridge --profile NAME` with no companion: it starts one, waits for the profile's socket
/// (opened just after the main one) and the agent sees that profile only; an unknown profile
/// reaches the agent as its initialize error, naming the profiles there are.
#[tokio::test(flavor = "multi_thread")]
async fn a_bridge_with_a_profile_starts_the_companion_and_gets_that_profile() {
    let config = json!({
        "mcpServers": { "demo": demo(&[]), "other": demo(&[]) },
        "profiles": { "only-demo": { "servers": ["demo"] } }
    });
    let scene = Scene::new(&config.to_string());
    // A profile the config does not have starts nothing.
    let (lines, out) =
        tokio::task::block_in_place(|| list_through(scene.bridge(&["--profile", "absent"])));
    assert!(
        lines.iter().any(|v| v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("unknown profile \"absent\""))),
        "{lines:?}"
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(scene.companions().is_empty(), "{:?}", scene.companions());
    let (lines, out) =
        tokio::task::block_in_place(|| list_through(scene.bridge(&["--profile", "only-demo"])));
    let names = tool_names(&lines);
    assert!(
        names.iter().any(|n| n == "mcp_demo_echo")
            && !names.iter().any(|n| n.starts_with("mcp_other_")),
        "{lines:?}\n{}\nlog:\n{}",
        String::from_utf8_lossy(&out.stderr),
        scene.log()
    );
    assert!(out.status.success(), "{:?}", out.status);
    let (lines, out) =
        tokio::task::block_in_place(|| list_through(scene.bridge(&["--profile", "nope"])));
    let error = lines
        .iter()
        .find_map(|v| v["error"]["message"].as_str())
        .unwrap_or_default()
        .to_owned();
    assert!(
        error.contains("unknown profile \"nope\"") && error.contains("only-demo"),
        "{lines:?}"
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(scene.companions().len(), 1);
}
