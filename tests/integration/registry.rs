//! Installing from an MCP registry, against the fixture registry on 127.0.0.1
//! (`registry_fixture.rs`): the client (paging, encoding, limits, hostile answers) and entries
//! that run and list their tools with the real npm/PyPI peers. The CLI tests are in
//! `registry_cli.rs`, with the helpers defined here.
//!
//! Offline runs: `npx -y @modelcontextprotocol/server-everything@2026.8.31` resolves to the
//! copy `tests/peers/setup.sh` installed when it runs in that project (`cwd` = the peers'
//! `node` dir) with `npm_config_offline=true`; `uvx mcp-server-time==2026.10.19` runs from the
//! uv cache setup.sh filled (`UV_CACHE_DIR`, `UV_OFFLINE=1`). The tests add exactly those keys
//! to the installed entries; nothing else is changed.

use std::path::{Path, PathBuf};
use std::process::Output;

use mcp_companion::manage::registry::{RegistryClient, RegistryError, RegistryRef};
use serde_json::{Value, json};

use crate::common::{BIN, peers_dir};
use crate::registry_fixture::{self, Fixture};

/// The SSRF whitelist allowing the fixture (loopback).
pub fn whitelist() -> Vec<ipnet::IpNet> {
    vec!["127.0.0.1/32".parse().unwrap()]
}

/// A config dir with the fixture as the default registry and loopback whitelisted.
pub fn config(dir: &Path, fx: &Fixture) -> PathBuf {
    let path = dir.join("config.json");
    let doc = json!({
        "registries": [{"name": "fixture", "url": fx.url}],
        "ssrfWhitelist": ["127.0.0.1/32"],
        "mcpServers": {}
    });
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    path
}

/// A registry fixture, and a temp dir holding a config that names it (as [`config`] writes
/// it): the fixture, the dir (removed when dropped) and the config's path.
pub async fn fixture_config() -> (Fixture, tempfile::TempDir, PathBuf) {
    let fx = registry_fixture::start().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &fx);
    (fx, dir, cfg)
}

/// PATH with the peers' venv (uvx) first.
pub fn path_with_uv(peers: Option<&Path>) -> String {
    let system = std::env::var("PATH").unwrap_or_default();
    match peers {
        Some(p) => format!("{}:{system}", p.join("venv/bin").display()),
        None => system,
    }
}

/// Runs the CLI with `--config config` and `PATH=path_env`; the fixture keeps serving meanwhile.
/// An `add` gets `--yes` (the fixtures' named arguments are flags `add` would otherwise ask
/// about; [`cli_asking`] leaves it out).
pub async fn cli(config: &Path, path_env: &str, args: &[&str]) -> Output {
    let mut args = args.to_vec();
    if args.first() == Some(&"add") {
        args.push("--yes");
    }
    cli_asking(config, path_env, &args).await
}

/// [`cli`] without the `--yes`.
pub async fn cli_asking(config: &Path, path_env: &str, args: &[&str]) -> Output {
    tokio::process::Command::new(BIN)
        .arg("--config")
        .arg(config)
        .args(args)
        .env("PATH", path_env)
        .env_remove("MCP_COMPANION_CONFIG")
        // No keychain: secret inputs become `${VAR}` (the keychain path is unit-tested).
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
        .output()
        .await
        .unwrap()
}

/// Exit status, stdout and stderr, for assertion messages.
pub fn out(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Server `server`'s entry as saved in `config`.
pub fn entry(config: &Path, server: &str) -> Value {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(config).unwrap()).unwrap();
    doc["mcpServers"][server].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_pages_encodes_names_and_skips_malformed_list_entries() {
    let fx = registry_fixture::start().await;
    let client = RegistryClient::new(&fx.url, None, &whitelist()).unwrap();
    let mut names = Vec::new();
    let mut skipped = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let page = client
            .list(Some("fixture"), cursor.as_deref(), Some(4))
            .await
            .unwrap();
        pages += 1;
        assert!(page.servers.len() <= 4);
        names.extend(page.servers.iter().map(|s| s.server.name.clone()));
        skipped.extend(page.skipped);
        match page.metadata.next_cursor {
            Some(c) if !c.is_empty() => cursor = Some(c),
            _ => break,
        }
    }
    assert_eq!(pages, 3, "{names:?}");
    assert_eq!(names.len() + skipped.len(), 12, "{names:?} {skipped:?}");
    assert!(names.contains(&"io.github.fixture/everything".to_owned()));
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert!(
        skipped[0].starts_with("io.github.fixture/malformed: invalid type"),
        "{skipped:?}"
    );

    let versions = client
        .versions("io.github.fixture/everything")
        .await
        .unwrap();
    let v: Vec<_> = versions
        .servers
        .iter()
        .map(|s| s.server.version.as_str())
        .collect();
    assert_eq!(v, ["2026.8.31", "2026.1.1"]);
    let latest = client
        .version("io.github.fixture/everything", "latest")
        .await
        .unwrap();
    assert_eq!(latest.server.version, "2026.8.31");
    let err = client
        .version("io.github.fixture/nope", "1.0.0")
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the registry has no server \"io.github.fixture/nope\" version \"1.0.0\""
    );
    let seen = fx.registry.seen.lock().unwrap().clone();
    assert!(
        seen.iter()
            .any(|(p, _)| p == "/v0.1/servers/io.github.fixture%2Feverything/versions"),
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .any(|(p, _)| p == "/v0.1/servers?search=fixture&limit=4"),
        "{seen:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_answers_are_clear_errors() {
    let fx = registry_fixture::start().await;
    let client = RegistryClient::new(&fx.url, None, &whitelist()).unwrap();
    let err = client
        .version("io.github.fixture/huge", "latest")
        .await
        .unwrap_err();
    assert!(matches!(err, RegistryError::TooLarge { .. }), "{err}");
    assert!(
        err.to_string()
            .ends_with("answered more than 4194304 bytes; refused"),
        "{err}"
    );
    let err = client.list(Some("huge"), None, None).await.unwrap_err();
    assert!(matches!(err, RegistryError::TooLarge { .. }), "{err}");
    let err = client
        .version("io.github.fixture/malformed", "1.0.0")
        .await
        .unwrap_err();
    assert!(matches!(err, RegistryError::BadJson { .. }), "{err}");
    assert!(err.to_string().contains("invalid type: string"), "{err}");

    // Not whitelisted: refused before any request is sent.
    let before = fx.registry.seen.lock().unwrap().len();
    let blocked = RegistryClient::new(&fx.url, None, &[]).unwrap();
    let err = blocked.list(None, None, None).await.unwrap_err();
    assert!(matches!(err, RegistryError::Ssrf { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("add \"127.0.0.1/32\" to ssrfWhitelist"),
        "{err}"
    );
    assert_eq!(fx.registry.seen.lock().unwrap().len(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_registry_gets_its_bearer_token_from_a_reference() {
    let fx = registry_fixture::start().await;
    let r = RegistryRef {
        name: "work".into(),
        url: fx.url.clone(),
        token: Some("${FIXTURE_TOKEN}".into()),
    };
    let wl = mcp_companion::config::SsrfWhitelist::from_value(Some(&json!(["127.0.0.1/32"])));
    let lookup = |k: &str| (k == "FIXTURE_TOKEN").then(|| "tok-123".to_owned());
    let client = r.client(&wl, &lookup).unwrap();
    client.list(None, None, Some(1)).await.unwrap();
    let seen = fx.registry.seen.lock().unwrap().clone();
    assert_eq!(seen.last().unwrap().1.as_deref(), Some("Bearer tok-123"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn installed_npm_and_pypi_entries_run_and_list_their_tools() {
    let Some(peers) = peers_dir() else { return };
    let (_fx, _dir, cfg) = fixture_config().await;
    let path = path_with_uv(Some(&peers));
    for args in [
        &[
            "add",
            "io.github.fixture/time",
            "--set",
            "local-timezone=UTC",
        ][..],
        &["add", "io.github.fixture/everything"][..],
    ] {
        let o = cli(&cfg, &path, args).await;
        assert!(o.status.success(), "{}", out(&o));
    }
    let mut time = entry(&cfg, "time");
    time["env"] = json!({
        "PATH": path,
        "UV_OFFLINE": "1",
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_CACHE_DIR": peers.join("uv-cache").display().to_string(),
    });
    let mut everything = entry(&cfg, "everything");
    everything["cwd"] = json!(peers.join("node").display().to_string());
    everything["env"] = json!({"npm_config_offline": "true"});
    let wl = mcp_companion::config::SsrfWhitelist::default();
    for (name, e, tool) in [
        ("time", time, "get_current_time"),
        ("everything", everything, "echo"),
    ] {
        let report = mcp_companion::manage::probe::probe(name, &e, &wl)
            .await
            .unwrap_or_else(|err| panic!("{name}: {err}"));
        let tools: Vec<_> = report.tools.iter().map(|t| t.name.as_str()).collect();
        let wrapped = format!("mcp_{name}_{tool}");
        assert!(tools.contains(&wrapped.as_str()), "{name}: {tools:?}");
    }
}
