//! Sign-ins that must be refused or must recover: an authorization server without PKCE S256,
//! a scope challenge naming another authorization server, a revoked refresh token, oversize
//! or stalled token answers, and no keychain to keep the tokens in.

use std::sync::atomic::Ordering;
use std::time::Duration;

use mcp_companion::supervisor::ServerState;
use serde_json::{Value, json};

use crate::common::{Companion, call, text};
use crate::oauth::{assert_no_token, config, signed_in, spawn_login, start, wait_state};
use crate::oauth_fixture::{self, REFRESH_REFUSAL};
use crate::remote_fixture::accept_counter;

fn output(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn metadata_without_pkce_s256_is_refused_before_the_browser_opens() {
    let fixture = oauth_fixture::start().await;
    let c = start(config(&fixture.url(), &["127.0.0.1/32"]));
    wait_state(&c, ServerState::NeedsSignIn).await;
    for (methods, says) in [
        (Value::Null, "has no code_challenge_methods_supported"),
        (json!(["plain"]), "only with \"plain\", not S256"),
        (json!([]), "only with no method, not S256"),
    ] {
        *fixture.shared.pkce_methods.lock().unwrap() = Some(methods.clone());
        let login = c.cli(&["login", "secure"]);
        let out = output(&login);
        assert!(!login.status.success(), "{methods}: {out}");
        assert!(out.contains(says), "{methods}: the refusal says why: {out}");
        assert!(
            !out.contains("/authorize?"),
            "{methods}: no URL shown: {out}"
        );
        assert!(
            fixture.shared.authorize.lock().unwrap().is_empty(),
            "{methods}: the browser reached the authorization endpoint"
        );
        assert_eq!(fixture.shared.registrations.load(Ordering::SeqCst), 0);
        assert_eq!(c.server("secure").await.state, ServerState::NeedsSignIn);
    }
    // Listing S256 among others is enough.
    *fixture.shared.pkce_methods.lock().unwrap() = Some(json!(["plain", "S256"]));
    let login = c.cli(&["login", "secure"]);
    assert!(login.status.success(), "{}", output(&login));
    wait_state(&c, ServerState::Running).await;
}

/// `login secure`, killed after two minutes (a hang fails the test instead of stalling it).
async fn bounded_login(c: &Companion) -> (bool, String) {
    let mut child = spawn_login(c);
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!("login still running after 120 s: {}", output(&out));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let out = child.wait_with_output().expect("output");
    (out.status.success(), output(&out))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_scope_challenge_never_opens_a_browser_and_login_checks_where_it_leads() {
    let (port, connections, _task) = accept_counter("127.0.0.2:0").await;
    let fixture = oauth_fixture::start().await;
    let c = start(config(&fixture.url(), &["127.0.0.1/32"]));
    signed_in(&c).await;
    let authorized = fixture.shared.authorize.lock().unwrap().len();

    // The server now wants more scope, and its metadata aims the browser at 127.0.0.2.
    *fixture
        .shared
        .hostile_authorization_endpoint
        .lock()
        .unwrap() = Some(format!("http://127.0.0.2:{port}/authorize"));
    let base = format!("http://127.0.0.1:{}", fixture.port);
    *fixture.shared.insufficient_scope.lock().unwrap() = Some(format!(
        "Bearer error=\"insufficient_scope\", scope=\"echo files:write\", \
         resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
    ));
    let client = c.client().await;
    for _ in 0..2 {
        let result = call(&client, "mcp_secure_echo", json!({"message": "hi"})).await;
        assert_eq!(result.is_error, Some(true), "{result:?}");
        let said = text(&result);
        assert!(
            said.contains("insufficient_scope")
                && said.contains("files:write")
                && said.contains("mcp-companion login secure")
                && said.contains("not run"),
            "the agent learns what is missing and how the person grants it: {said}"
        );
        assert!(!said.contains("may or may not"), "{said}");
    }
    let _ = client.cancel().await;
    assert_eq!(c.server("secure").await.state, ServerState::Running);
    assert_eq!(
        fixture.shared.authorize.lock().unwrap().len(),
        authorized,
        "a browser was opened on an agent's call"
    );

    // The person's `login` checks the endpoint: 127.0.0.2 is not in the whitelist.
    let login = c.cli(&["login", "secure"]);
    let out = output(&login);
    assert!(!login.status.success(), "{out}");
    assert!(
        out.contains("127.0.0.2") && out.contains("ssrfWhitelist"),
        "the refusal names the address and the fix: {out}"
    );
    assert_eq!(
        connections.load(Ordering::SeqCst),
        0,
        "nothing reached 127.0.0.2"
    );

    // With the endpoint back on the issuer's host, `login` asks for the grant plus the
    // challenged scope.
    *fixture
        .shared
        .hostile_authorization_endpoint
        .lock()
        .unwrap() = None;
    *fixture.shared.insufficient_scope.lock().unwrap() = None;
    let login = c.cli(&["login", "secure"]);
    assert!(login.status.success(), "{}", output(&login));
    let asked = fixture.shared.authorize.lock().unwrap().last().cloned();
    assert_eq!(
        asked.and_then(|a| a.get("scope").cloned()).as_deref(),
        Some("echo files:write")
    );
    wait_state(&c, ServerState::Running).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_refresh_token_moves_the_server_to_needs_sign_in_with_the_reason() {
    let fixture = oauth_fixture::start().await;
    let c = start(config(&fixture.url(), &["127.0.0.1/32"]));
    signed_in(&c).await;

    // The access token is revoked and so is the refresh token.
    fixture.shared.refuse_refresh.store(true, Ordering::SeqCst);
    fixture.shared.revoke_next.store(true, Ordering::SeqCst);
    let client = c.client().await;
    let result = call(&client, "mcp_secure_echo", json!({"message": "hi"})).await;
    let _ = client.cancel().await;
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let said = text(&result);
    assert!(
        said.contains("invalid_grant")
            && said.contains(REFRESH_REFUSAL)
            && said.contains("mcp-companion login secure"),
        "the call says why and what to do: {said}"
    );
    assert!(!said.contains("may or may not"), "{said}");
    wait_state(&c, ServerState::NeedsSignIn).await;
    let status = c.server("secure").await;
    let error = status.last_error.clone().unwrap_or_default();
    assert!(
        error.contains(&format!("invalid_grant: {REFRESH_REFUSAL}"))
            && error.contains("mcp-companion login secure"),
        "status quotes the authorization server: {error}"
    );
    assert_no_token("status", &format!("{status:?}{said}"));

    // A new sign-in brings it back.
    fixture.shared.refuse_refresh.store(false, Ordering::SeqCst);
    let login = c.cli(&["login", "secure"]);
    assert!(login.status.success(), "{}", output(&login));
    wait_state(&c, ServerState::Running).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn token_answers_that_stall_or_carry_unusable_tokens_end_login_saying_what_happened() {
    let fixture = oauth_fixture::start().await;
    let c = start(config(&fixture.url(), &["127.0.0.1/32"]));
    wait_state(&c, ServerState::NeedsSignIn).await;

    fixture
        .shared
        .stall_token_body
        .store(true, Ordering::SeqCst);
    let (ok, out) = bounded_login(&c).await;
    assert!(!ok, "{out}");
    assert!(
        out.contains("sent its headers but not the whole answer within 30 s"),
        "{out}"
    );
    assert!(!out.contains("Request failed"), "{out}");
    fixture
        .shared
        .stall_token_body
        .store(false, Ordering::SeqCst);

    for (token, says) in [
        (
            "abc\r\nX-Injected: 1".to_owned(),
            "the access_token contains control characters",
        ),
        (
            "t".repeat(200_000),
            "the access_token is 200000 bytes; tokens over 16 KiB are refused",
        ),
    ] {
        *fixture.shared.token_override.lock().unwrap() = Some(token);
        let (ok, out) = bounded_login(&c).await;
        assert!(!ok, "{out}");
        assert!(out.contains(says), "{out}");
        assert!(!out.contains("Request failed"), "{out}");
    }
    // Nothing was stored: the server still waits for a sign-in, without a restart loop.
    let status = c.server("secure").await;
    assert_eq!(status.state, ServerState::NeedsSignIn, "{status:?}");
    assert_eq!(status.restarts, 0, "{status:?}");
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn without_a_keychain_login_fails_before_the_browser_opens() {
    let fixture = oauth_fixture::start().await;
    let browser = crate::oauth::stand_in_browser();
    let c = Companion::start_with_env(
        config(&fixture.url(), &["127.0.0.1/32"]),
        &[
            ("BROWSER", Some(browser.to_str().expect("utf-8 path"))),
            ("MCP_COMPANION_TOKEN_VAULT", None),
            (
                "DBUS_SESSION_BUS_ADDRESS",
                Some("unix:path=/nonexistent/mcp-companion-test-bus"),
            ),
        ],
    );
    wait_state(&c, ServerState::NeedsSignIn).await;
    let login = c.cli(&["login", "secure"]);
    let out = output(&login);
    assert!(!login.status.success(), "{out}");
    assert!(
        out.contains("the keychain is not available") && out.contains("not started"),
        "{out}"
    );
    assert!(!out.contains("/authorize?"), "no URL to open: {out}");
    assert!(fixture.shared.authorize.lock().unwrap().is_empty());
    assert_eq!(fixture.shared.registrations.load(Ordering::SeqCst), 0);
}
