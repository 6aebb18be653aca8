//! Sign-ins that must be refused: an authorization server without PKCE S256.

use std::sync::atomic::Ordering;

use mcp_companion::supervisor::ServerState;
use serde_json::{Value, json};

use crate::oauth::{config, start, wait_state};
use crate::oauth_fixture;

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
