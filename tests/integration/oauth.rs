//! OAuth sign-in of a remote server: `needs sign-in` on a 401, `login` from another
//! terminal through the running companion with a `$BROWSER` stand-in, refresh on a revoked
//! token, `logout`, the SSRF guard on metadata-supplied URLs, and tokens kept out of every
//! output.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

use mcp_companion::supervisor::ServerState;
use serde_json::{Value, json};

use crate::common::{Companion, call, text};
use crate::oauth_fixture::{self, PLANTED_ACCESS, PLANTED_REFRESH};
use crate::remote_fixture::accept_counter;

pub(crate) fn stand_in_browser() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/browser.sh")
}

pub(crate) fn config(url: &str, whitelist: &[&str]) -> Value {
    json!({"mcpServers": {"secure": {"type": "streamableHttp", "url": url}},
           "ssrfWhitelist": whitelist})
}

pub(crate) fn start(config: Value) -> Companion {
    let browser = stand_in_browser();
    Companion::start_with_env(
        config,
        &[
            ("BROWSER", Some(browser.to_str().expect("utf-8 path"))),
            ("MCP_COMPANION_TOKEN_VAULT", Some("memory")),
            ("RUST_LOG", Some("trace")),
        ],
    )
}

pub(crate) async fn wait_state(c: &Companion, want: ServerState) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while c.server("secure").await.state != want {
        assert!(
            std::time::Instant::now() < deadline,
            "never {want:?}: {:?}\n{}",
            c.server("secure").await,
            c.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Signs `secure` in through `login` and waits until it runs.
pub(crate) async fn signed_in(c: &Companion) {
    wait_state(c, ServerState::NeedsSignIn).await;
    let login = c.cli(&["login", "secure"]);
    assert!(
        login.status.success(),
        "{}",
        String::from_utf8_lossy(&login.stderr)
    );
    wait_state(c, ServerState::Running).await;
}

/// `login secure` started against `c`, its output piped.
pub(crate) fn spawn_login(c: &Companion) -> std::process::Child {
    std::process::Command::new(crate::common::BIN)
        .args(["login", "secure", "--socket"])
        .arg(&c.socket)
        .env("HOME", &c.home)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn login")
}

pub(crate) fn assert_no_token(what: &str, haystack: &str) {
    for planted in [PLANTED_ACCESS, PLANTED_REFRESH, "the-code"] {
        assert!(
            !haystack.contains(planted),
            "{what} contains the planted secret {planted}:\n{haystack}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_401_waits_for_login_which_signs_in_from_another_terminal() {
    let fixture = oauth_fixture::start().await;
    let c = start(config(&fixture.url(), &["127.0.0.1/32"]));

    // 401 → needs sign-in, with the command in the error, and no restart loop.
    wait_state(&c, ServerState::NeedsSignIn).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let status = c.server("secure").await;
    assert_eq!(status.state, ServerState::NeedsSignIn);
    assert_eq!(status.restarts, 0, "{status:?}");
    let error = status.last_error.clone().unwrap_or_default();
    assert!(error.contains("mcp-companion login secure"), "{error}");
    let human = c.cli(&["status"]);
    assert!(String::from_utf8_lossy(&human.stdout).contains("needs sign-in"));

    // `login` in another terminal: the companion signs in and restarts the server.
    let login = c.cli(&["login", "secure"]);
    let (out, err) = (
        String::from_utf8_lossy(&login.stdout).to_string(),
        String::from_utf8_lossy(&login.stderr).to_string(),
    );
    assert!(
        login.status.success(),
        "login failed:\n{out}\n{err}\n{}",
        c.log()
    );
    assert!(err.contains("/authorize?"), "the URL is printed: {err}");
    wait_state(&c, ServerState::Running).await;

    // What the authorization server saw: PKCE S256, state, the resource (RFC 8707), the
    // challenge's scope, the loopback redirect.
    let auth = fixture
        .shared
        .authorize
        .lock()
        .unwrap()
        .last()
        .cloned()
        .expect("authorized");
    assert_eq!(
        auth.get("code_challenge_method").map(String::as_str),
        Some("S256")
    );
    assert!(auth.get("state").is_some_and(|s| s.len() >= 16), "{auth:?}");
    assert_eq!(auth.get("resource"), Some(&fixture.url()));
    assert_eq!(auth.get("scope").map(String::as_str), Some("echo"));
    assert!(
        auth["redirect_uri"].starts_with("http://127.0.0.1:"),
        "{auth:?}"
    );
    assert_eq!(fixture.shared.registrations.load(Ordering::SeqCst), 1);
    let token_req = fixture.shared.token.lock().unwrap()[0].clone();
    assert_eq!(token_req.get("resource"), Some(&fixture.url()));

    // Calls go through with the token.
    let client = c.client().await;
    let result = call(&client, "mcp_secure_echo", json!({"message": "hi"})).await;
    assert_eq!(text(&result), "hi");

    // A revoked token: one silent refresh, then the call succeeds.
    fixture.shared.revoke_next.store(true, Ordering::SeqCst);
    let result = call(&client, "mcp_secure_echo", json!({"message": "again"})).await;
    assert_eq!(text(&result), "again");
    let grants = fixture.shared.token_field("grant_type");
    assert_eq!(grants, ["authorization_code", "refresh_token"]);
    let _ = client.cancel().await;

    // No token anywhere: trace logs, status (both forms), doctor.
    let status_json = String::from_utf8_lossy(&c.cli(&["status", "--json"]).stdout).to_string();
    assert_no_token("status --json", &status_json);
    assert_no_token(
        "status",
        &String::from_utf8_lossy(&c.cli(&["status"]).stdout),
    );
    let doctor = c.cli(&["doctor", "--config", c.config.to_str().expect("utf-8")]);
    assert_no_token("doctor", &String::from_utf8_lossy(&doctor.stdout));
    assert_no_token("doctor stderr", &String::from_utf8_lossy(&doctor.stderr));
    assert_no_token("login output", &format!("{out}{err}"));
    let log = c.log();
    assert!(log.contains("TRACE"), "trace logging is on");
    assert_no_token("the trace log", &log);

    // logout: tokens forgotten, the server is back to needs sign-in.
    let logout = c.cli(&["logout", "secure"]);
    assert!(
        logout.status.success(),
        "{}",
        String::from_utf8_lossy(&logout.stderr)
    );
    wait_state(&c, ServerState::NeedsSignIn).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_authorization_endpoint_that_is_not_http_is_refused_not_shown() {
    let fixture = oauth_fixture::start().await;
    let c = start(config(&fixture.url(), &["127.0.0.1/32"]));
    wait_state(&c, ServerState::NeedsSignIn).await;
    for hostile in ["javascript:alert(document.cookie)//", "file:///etc/passwd"] {
        *fixture
            .shared
            .hostile_authorization_endpoint
            .lock()
            .unwrap() = Some(hostile.into());
        let login = c.cli(&["login", "secure"]);
        let err = String::from_utf8_lossy(&login.stderr).to_string();
        assert!(!login.status.success(), "{err}");
        let scheme = hostile.split(':').next().unwrap();
        assert!(
            err.contains(&format!("\"{scheme}:\" URL; only http and https")),
            "the refusal says why: {err}"
        );
        assert!(
            !err.contains("Open this URL") && !err.contains(hostile),
            "{err}"
        );
        let shown = c.server("secure").await.last_error.unwrap_or_default();
        assert!(!shown.contains(hostile), "status keeps {shown}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn metadata_aiming_at_unlisted_addresses_is_refused() {
    // The token endpoint on 127.0.0.2, which the whitelist (127.0.0.1/32) does not cover: the
    // sign-in is refused before any connection is made there.
    let (port, connections, _task) = accept_counter("127.0.0.2:0").await;
    let fixture = oauth_fixture::start().await;
    *fixture.shared.hostile_token_endpoint.lock().unwrap() =
        Some(format!("http://127.0.0.2:{port}/token"));
    let c = start(config(&fixture.url(), &["127.0.0.1/32"]));
    wait_state(&c, ServerState::NeedsSignIn).await;
    let login = c.cli(&["login", "secure"]);
    let err = String::from_utf8_lossy(&login.stderr).to_string();
    assert!(!login.status.success(), "{err}");
    assert!(
        err.contains("127.0.0.2") && err.contains("ssrfWhitelist"),
        "the error names the address and the fix: {err}"
    );
    assert_eq!(
        connections.load(Ordering::SeqCst),
        0,
        "nothing reached 127.0.0.2"
    );
    assert_eq!(c.server("secure").await.state, ServerState::NeedsSignIn);

    // An authorization server at the cloud metadata address: refused before registration.
    let registered_before = fixture.shared.registrations.load(Ordering::SeqCst);
    *fixture.shared.hostile_token_endpoint.lock().unwrap() = None;
    *fixture.shared.hostile_as.lock().unwrap() = Some("http://169.254.169.254/".to_owned());
    let login = c.cli(&["login", "secure"]);
    let err = String::from_utf8_lossy(&login.stderr).to_string();
    assert!(!login.status.success(), "{err}");
    assert!(
        err.contains("blocked") && err.contains("169.254.169.254"),
        "the error names the blocked address: {err}"
    );
    assert_eq!(
        fixture.shared.registrations.load(Ordering::SeqCst),
        registered_before
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn headless_status_shows_the_url_and_the_sign_in_completes_from_elsewhere() {
    let fixture = oauth_fixture::start().await;
    // No browser can start here: the URL must reach the user through `login` and `status`.
    let c = Companion::start_with_env(
        config(&fixture.url(), &["127.0.0.1/32"]),
        &[
            ("BROWSER", Some("/nonexistent/browser")),
            ("MCP_COMPANION_TOKEN_VAULT", Some("memory")),
        ],
    );
    wait_state(&c, ServerState::NeedsSignIn).await;
    let login = spawn_login(&c);

    // `status` shows the authorization URL while the sign-in waits.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let url = loop {
        let error = c.server("secure").await.last_error.unwrap_or_default();
        if let Some(at) = error.find("http://127.0.0.1") {
            break error[at..]
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_owned();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no URL in status: {error}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(url.contains("/authorize?"), "{url}");

    // The person opens it (here: the stand-in browser); the waiting `login` then succeeds.
    let opened = std::process::Command::new(stand_in_browser())
        .arg(&url)
        .status()
        .expect("run the stand-in browser");
    assert!(opened.success());
    let out = tokio::task::spawn_blocking(move || login.wait_with_output())
        .await
        .expect("join")
        .expect("login output");
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{err}");
    assert!(err.contains("Open this URL") && err.contains(&url), "{err}");
    wait_state(&c, ServerState::Running).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_about_to_expire_is_refreshed_before_it_is_used() {
    let fixture = oauth_fixture::start().await;
    fixture.shared.expires_in.store(2, Ordering::SeqCst);
    let c = start(config(&fixture.url(), &["127.0.0.1/32"]));
    signed_in(&c).await;
    let refused_before = fixture.shared.refusals.load(Ordering::SeqCst);

    // Token lifetimes count in whole seconds: after 2.5 s at least 2 have passed, so the
    // 2-second token is due and is refreshed before the call goes out (no 401 first).
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let client = c.client().await;
    let result = call(&client, "mcp_secure_echo", json!({"message": "fresh"})).await;
    assert_eq!(text(&result), "fresh");
    let _ = client.cancel().await;
    let grants = fixture.shared.token_field("grant_type");
    // A slow machine may also refresh once at connect time; every grant after the first is a
    // refresh, and there is at least one.
    assert_eq!(grants[0], "authorization_code", "{grants:?}");
    assert!(
        grants.len() >= 2 && grants[1..].iter().all(|g| g == "refresh_token"),
        "{grants:?}"
    );
    assert_eq!(
        fixture.shared.refusals.load(Ordering::SeqCst),
        refused_before,
        "the refresh happened before the server had to refuse"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn credentials_a_server_quotes_back_are_masked_in_results_logs_and_login_output() {
    let fixture = oauth_fixture::start().await;
    let c = start(config(&fixture.url(), &["127.0.0.1/32"]));
    signed_in(&c).await;

    // From now on every refusal quotes what it refused: the 401 names the access token, the
    // refresh that follows is refused naming the refresh token.
    fixture.shared.echo_secrets.store(true, Ordering::SeqCst);
    fixture.shared.revoke_next.store(true, Ordering::SeqCst);
    let client = c.client().await;
    let result = call(&client, "mcp_secure_echo", json!({"message": "hi"})).await;
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let seen = format!("{result:?}");
    assert!(
        fixture.shared.refusals.load(Ordering::SeqCst) >= 1,
        "the server refused: {seen}"
    );
    assert_no_token("the tool result", &seen);
    let _ = client.cancel().await;

    // A new sign-in whose code exchange is refused quoting the code and the PKCE verifier.
    let login = c.cli(&["login", "secure"]);
    let output = format!(
        "{}{}",
        String::from_utf8_lossy(&login.stdout),
        String::from_utf8_lossy(&login.stderr)
    );
    assert!(!login.status.success(), "{output}");
    assert!(
        output.contains("invalid_grant"),
        "the refusal is quoted: {output}"
    );
    let verifiers = fixture.shared.token_field("code_verifier");
    assert!(verifiers.len() >= 2, "{verifiers:?}");
    let status = String::from_utf8_lossy(&c.cli(&["status", "--json"]).stdout).to_string();
    let log = c.log();
    for (what, text) in [
        ("login output", &output),
        ("status", &status),
        ("the log", &log),
    ] {
        assert_no_token(what, text);
        for v in &verifiers {
            assert!(
                !text.contains(v.as_str()),
                "{what} holds the verifier {v}:\n{text}"
            );
        }
    }
    assert!(
        log.contains("<redacted>"),
        "the echoes reached the log, masked"
    );
}
