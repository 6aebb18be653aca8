//! `${secret:NAME}` against a real OS keychain (Secret Service: `tests/keychain.sh` starts an
//! unlocked gnome-keyring on a private D-Bus bus): a server gets its secret, the value shows up
//! nowhere else, a missing secret fails only its server, `secret migrate` empties config.json of
//! plain-text secrets, and without a keychain the error says so.
//!
//! Each test keeps its entries under a service name of its own (`MCP_COMPANION_KEYCHAIN_SERVICE`),
//! so tests running in parallel never share the name index. Without a keychain these tests
//! print SKIPPED, unless `MCP_REQUIRE_KEYCHAIN=1`, where they fail.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use mcp_companion::secret::{Keychain, SERVICE_ENV, SecretError, SecretStore};
use mcp_companion::supervisor::ServerState;
use serde_json::{Value, json};

use crate::common::{BIN, Companion, call, demo, text};

/// A fresh keychain service for one test, or `None` (test skipped) when no keychain answers.
pub(crate) fn keychain(test: &str) -> Option<Keychain> {
    static N: AtomicU32 = AtomicU32::new(0);
    let service = format!(
        "mcp-companion-test-{}-{}-{test}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    let store = Keychain::new(service);
    match store.get("probe") {
        Ok(_) => Some(store),
        Err(e @ SecretError::Unavailable { .. }) => {
            if std::env::var("MCP_REQUIRE_KEYCHAIN").as_deref() == Ok("1") {
                panic!("MCP_REQUIRE_KEYCHAIN=1 but no keychain answers: {e}");
            }
            eprintln!("SKIPPED {test}: no OS keychain here (run tests/keychain.sh): {e}");
            None
        }
        Err(e) => panic!("keychain probe failed: {e}"),
    }
}

/// Runs the CLI with the test's keychain service, `stdin` piped in.
fn cli(store: &Keychain, args: &[&str], stdin: &str) -> Output {
    cli_env(args, stdin, &[(SERVICE_ENV, store.service())])
}

fn cli_env(args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .envs(env.iter().copied())
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run cli");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("cli output")
}

fn out(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn with_env(mut entry: Value, env: Value) -> Value {
    entry["env"] = env;
    entry
}

/// Removes every entry a test stored (its service is unique, so nothing else is touched).
fn clean(store: &Keychain) {
    for name in store.names().unwrap_or_default() {
        let _ = store.delete(&name);
    }
}

#[tokio::test]
async fn secret_in_env_reaches_the_server_and_appears_nowhere_else() {
    let Some(store) = keychain("env") else { return };
    let value = "s3cr3t-env-7f1c2a";
    let set = cli(
        &store,
        &["secret", "set", "app-token"],
        &format!("{value}\n"),
    );
    assert!(set.status.success(), "{}", out(&set));
    assert!(!out(&set).contains(value), "{}", out(&set));
    assert_eq!(
        store.get("app-token"),
        Ok(Some(value.to_owned())),
        "one trailing newline is dropped"
    );

    // "echoer" prints its secret to stderr, which the companion logs: the log must mask it.
    let echoer = json!({
        "command": "sh",
        "args": ["-c", format!("echo \"token is $API_TOKEN\" >&2; exec {BIN} demo-server")],
        "env": { "API_TOKEN": "${secret:app-token}" },
    });
    let config = json!({ "mcpServers": {
        "app": with_env(demo(&[]), json!({ "API_TOKEN": "${secret:app-token}" })),
        "plain": demo(&[]),
        "echoer": echoer,
    }});
    let service = store.service().to_owned();
    let c = Companion::start_with_env(
        config,
        &[(SERVICE_ENV, Some(&service)), ("RUST_LOG", Some("trace"))],
    );
    let statuses = c.settled().await;
    assert!(
        statuses.iter().all(|s| s.state == ServerState::Running),
        "{statuses:?}\n{}",
        c.log()
    );
    // Everything the companion said before the value was asked for: trace logs, status, doctor,
    // secret list.
    let status = c.cli(&["status", "--json"]);
    let doctor = Command::new(BIN)
        .args(["doctor", "--config"])
        .arg(&c.config)
        .env(SERVICE_ENV, &service)
        .output()
        .expect("doctor");
    assert!(doctor.status.success(), "{}", out(&doctor));
    assert!(out(&doctor).contains("app (stdio): ok"), "{}", out(&doctor));
    let list = cli(
        &store,
        &[
            "secret",
            "list",
            "--config",
            c.config.to_str().expect("utf-8"),
        ],
        "",
    );
    assert!(list.status.success(), "{}", out(&list));
    assert!(out(&list).contains("app-token"), "{}", out(&list));
    assert!(out(&list).contains("app (env.API_TOKEN)"), "{}", out(&list));
    let log = c.log();
    assert!(
        log.contains("token is <redacted>"),
        "the echoed secret is masked:\n{log}"
    );
    assert!(
        log.contains("TRACE") || log.contains("DEBUG"),
        "trace logging is on:\n{log}"
    );
    for (what, text) in [
        ("log", log),
        ("status", out(&status)),
        ("doctor", out(&doctor)),
        ("secret list", out(&list)),
        (
            "config",
            std::fs::read_to_string(&c.config).expect("config"),
        ),
    ] {
        assert!(
            !text.contains(value),
            "the secret leaked into {what}:\n{text}"
        );
    }

    let client = c.client().await;
    let got = call(&client, "mcp_app_get_env", json!({ "name": "API_TOKEN" })).await;
    assert_eq!(
        text(&got),
        value,
        "the server sees the secret in its environment"
    );
    let other = call(&client, "mcp_plain_get_env", json!({ "name": "API_TOKEN" })).await;
    assert_eq!(
        other.is_error,
        Some(true),
        "only the server that asked for it gets it"
    );
    client.cancel().await.expect("close");
    clean(&store);
}

#[tokio::test]
async fn missing_secret_fails_only_its_server_naming_the_secret_and_the_command() {
    let Some(store) = keychain("missing") else {
        return;
    };
    let config = json!({ "mcpServers": {
        "needs": with_env(demo(&[]), json!({ "K": "${secret:absent-key}" })),
        "fine": demo(&[]),
    }});
    let service = store.service().to_owned();
    let c = Companion::start_with_env(config, &[(SERVICE_ENV, Some(&service))]);
    c.settled().await;
    let needs = c.server("needs").await;
    assert_eq!(needs.state, ServerState::Failed, "{needs:?}");
    assert_eq!(
        needs.last_error.as_deref(),
        Some(
            "server \"needs\": field \"env.K\": secret \"absent-key\" is not in the keychain; store it with `mcp-companion secret set absent-key`"
        )
    );
    assert_eq!(c.server("fine").await.state, ServerState::Running);

    let list = cli(
        &store,
        &[
            "secret",
            "list",
            "--config",
            c.config.to_str().expect("utf-8"),
        ],
        "",
    );
    assert!(
        out(&list).contains("[not stored: mcp-companion secret set absent-key]"),
        "{}",
        out(&list)
    );

    // The command the error names fixes it.
    let set = cli(&store, &["secret", "set", "absent-key"], "now-there");
    assert!(set.status.success(), "{}", out(&set));
    let restart = c.cli(&["restart", "needs"]);
    assert!(restart.status.success(), "{}", out(&restart));
    c.settled().await;
    assert_eq!(
        c.server("needs").await.state,
        ServerState::Running,
        "{}",
        c.log()
    );

    // rm removes it and warns that a server still uses it; a second rm is an error.
    let rm = cli(
        &store,
        &[
            "secret",
            "rm",
            "absent-key",
            "--config",
            c.config.to_str().expect("utf-8"),
        ],
        "",
    );
    assert!(rm.status.success(), "{}", out(&rm));
    assert!(
        out(&rm).contains("still referenced by needs"),
        "{}",
        out(&rm)
    );
    assert_eq!(store.get("absent-key"), Ok(None));
    let again = cli(&store, &["secret", "rm", "absent-key"], "");
    assert!(!again.status.success());
    assert!(
        out(&again).contains("no secret named \"absent-key\""),
        "{}",
        out(&again)
    );
    clean(&store);
}

#[tokio::test]
async fn secret_migrate_leaves_no_plain_text_secret_and_every_server_still_starts() {
    let Some(store) = keychain("migrate") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.json");
    let config = json!({ "mcpServers": {
        "gh": with_env(demo(&[]), json!({ "GITHUB_TOKEN": "ghp_plain_91d2", "LOG_LEVEL": "debug" })),
        "db": with_env(demo(&[]), json!({ "DB_PASSWORD": "hunter2-x8" })),
    }});
    // Hand-written spacing and a comment-free extra key: everything but the moved values must
    // survive byte for byte.
    let original = serde_json::to_string_pretty(&config)
        .expect("json")
        .replace("\"LOG_LEVEL\": \"debug\"", "\"LOG_LEVEL\"  :  \"debug\"")
        + "\n";
    std::fs::write(&path, &original).expect("write");
    let p = path.to_str().expect("utf-8");

    let preview = cli(&store, &["secret", "migrate", "--config", p], "");
    assert!(preview.status.success(), "{}", out(&preview));
    assert!(
        out(&preview).contains("gh env.GITHUB_TOKEN  ->  ${secret:gh.GITHUB_TOKEN}"),
        "{}",
        out(&preview)
    );
    assert!(out(&preview).contains("--yes"), "{}", out(&preview));
    assert_eq!(
        serde_json::from_slice::<Value>(&std::fs::read(&path).expect("read")).expect("json"),
        config,
        "the preview changes nothing"
    );
    assert_eq!(store.get("gh.GITHUB_TOKEN"), Ok(None));

    let applied = cli(&store, &["secret", "migrate", "--yes", "--config", p], "");
    assert!(applied.status.success(), "{}", out(&applied));
    let after = std::fs::read_to_string(&path).expect("read");
    assert_eq!(
        after,
        original
            .replace("\"ghp_plain_91d2\"", "\"${secret:gh.GITHUB_TOKEN}\"")
            .replace("\"hunter2-x8\"", "\"${secret:db.DB_PASSWORD}\""),
        "only the moved values change"
    );
    for plain in ["ghp_plain_91d2", "hunter2-x8"] {
        assert!(!after.contains(plain), "{after}");
        assert!(!out(&applied).contains(plain), "{}", out(&applied));
    }
    let after: Value = serde_json::from_str(&after).expect("json");
    assert_eq!(
        after["mcpServers"]["gh"]["env"]["GITHUB_TOKEN"],
        "${secret:gh.GITHUB_TOKEN}"
    );
    assert_eq!(after["mcpServers"]["gh"]["env"]["LOG_LEVEL"], "debug");
    assert_eq!(
        after["mcpServers"]["db"]["env"]["DB_PASSWORD"],
        "${secret:db.DB_PASSWORD}"
    );
    assert_eq!(
        store.names(),
        Ok(vec!["db.DB_PASSWORD".into(), "gh.GITHUB_TOKEN".into()])
    );

    let service = store.service().to_owned();
    let c = Companion::start_with_env(after, &[(SERVICE_ENV, Some(&service))]);
    let statuses = c.settled().await;
    assert!(
        statuses.iter().all(|s| s.state == ServerState::Running),
        "{statuses:?}\n{}",
        c.log()
    );
    let client = c.client().await;
    let got = call(&client, "mcp_gh_get_env", json!({ "name": "GITHUB_TOKEN" })).await;
    assert_eq!(text(&got), "ghp_plain_91d2");
    client.cancel().await.expect("close");
    clean(&store);
}

#[tokio::test]
async fn secret_in_header_and_url_reaches_a_remote_server_and_not_the_logs() {
    let Some(store) = keychain("remote") else {
        return;
    };
    let token = "s3cr3t-header-5be0";
    let key = "s3cr3t-query-44aa";
    store.set("remote-token", token).expect("set");
    store.set("remote-key", key).expect("set");
    let server = crate::remote_fixture::mcp_server().await;
    let service = store.service().to_owned();
    let c = Companion::start_with_env(
        json!({
            "mcpServers": { "remote": {
                "url": format!("http://127.0.0.1:{}/mcp?key=${{secret:remote-key}}", server.port),
                "headers": { "Authorization": "Bearer ${secret:remote-token}" },
            } },
            "ssrfWhitelist": ["127.0.0.1"],
        }),
        &[(SERVICE_ENV, Some(&service)), ("RUST_LOG", Some("trace"))],
    );
    let status = c.settled().await;
    assert_eq!(
        status[0].state,
        ServerState::Running,
        "{status:?}\n{}",
        c.log()
    );
    {
        let seen = server.shared.headers.lock().expect("headers");
        assert!(!seen.is_empty());
        for h in seen.iter() {
            assert_eq!(h["authorization"], format!("Bearer {token}").as_str());
        }
    }
    let status_json = c.cli(&["status", "--json"]);
    for (what, text) in [("log", c.log()), ("status", out(&status_json))] {
        assert!(
            !text.contains(token) && !text.contains(key),
            "secret leaked into {what}:\n{text}"
        );
    }
    clean(&store);
}

/// Needs no keychain: it points the D-Bus client at a bus that does not exist.
#[tokio::test]
async fn without_a_keychain_the_error_says_so_and_points_to_variables() {
    let no_bus = [
        (
            "DBUS_SESSION_BUS_ADDRESS",
            "unix:path=/nonexistent/mcpc-no-bus",
        ),
        (SERVICE_ENV, "mcp-companion-test-no-keychain"),
    ];
    let set = cli_env(&["secret", "set", "X"], "value-never-stored", &no_bus);
    assert!(!set.status.success());
    let said = out(&set);
    assert!(said.contains("no OS keychain is available"), "{said}");
    assert!(said.contains("${VAR}"), "{said}");
    assert!(!said.contains("value-never-stored"), "{said}");

    let config = json!({ "mcpServers": {
        "needs": with_env(demo(&[]), json!({ "K": "${secret:X}" })),
        "fine": demo(&[]),
    }});
    let env: Vec<(&str, Option<&str>)> = no_bus.iter().map(|(k, v)| (*k, Some(*v))).collect();
    let c = Companion::start_with_env(config, &env);
    c.settled().await;
    let needs = c.server("needs").await;
    assert_eq!(needs.state, ServerState::Failed);
    let error = needs.last_error.unwrap_or_default();
    assert!(
        error.starts_with("server \"needs\": field \"env.K\": cannot read secret \"X\": no OS keychain is available"),
        "{error}"
    );
    assert_eq!(c.server("fine").await.state, ServerState::Running);

    // `secret list` says the keychain is unavailable and still lists the config's references.
    let config_arg = c.config.display().to_string();
    let list = cli_env(&["--config", &config_arg, "secret", "list"], "", &no_bus);
    assert_eq!(list.status.code(), Some(1), "{}", out(&list));
    let said = String::from_utf8_lossy(&list.stderr);
    assert!(
        said.starts_with("error: ") && said.contains("no OS keychain is available"),
        "{said}"
    );
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(
        listed.contains("X")
            && listed.contains("needs (env.K)")
            && listed.contains("[keychain unavailable]"),
        "{listed}"
    );
}
