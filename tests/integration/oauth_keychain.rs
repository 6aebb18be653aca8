//! OAuth tokens in a real OS keychain (Secret Service: `tests/keychain.sh` starts an unlocked
//! gnome-keyring on a private D-Bus bus): a sign-in survives a restart of the companion, and
//! `logout` removes the entry. Skipped without a keychain unless `MCP_REQUIRE_KEYCHAIN=1`.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

use mcp_companion::auth::store::entry_name;
use mcp_companion::secret::{Keychain, SERVICE_ENV, SecretStore};
use mcp_companion::supervisor::ServerState;
use serde_json::json;

use crate::common::{Companion, call, text};
use crate::keychain::keychain;
use crate::oauth::{signed_in, wait_state};
use crate::oauth_fixture::{self, PLANTED_ACCESS};

#[tokio::test(flavor = "multi_thread")]
async fn a_sign_in_survives_a_restart_and_logout_removes_it() {
    let Some(service) = keychain("oauth").map(|k| k.service().to_owned()) else {
        return;
    };
    let fixture = oauth_fixture::start().await;
    let config = json!({"mcpServers": {"secure": {"type": "streamableHttp", "url": fixture.url()}},
                        "ssrfWhitelist": ["127.0.0.1/32"]});
    let browser = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/browser.sh");
    let env = [
        ("BROWSER", Some(browser.to_str().expect("utf-8"))),
        (SERVICE_ENV, Some(service.as_str())),
        ("MCP_COMPANION_TOKEN_VAULT", None),
    ];
    let mut c = Companion::start_with_env(config.clone(), &env);
    signed_in(&c).await;

    // The tokens are in the keychain, under the OAuth service, per server and resource.
    let vault = Keychain::new(format!("{service}-oauth"));
    let name = entry_name("secure", &fixture.url());
    let entry = vault.get(&name).expect("keychain").expect("an entry");
    assert!(entry.contains(PLANTED_ACCESS));
    assert!(
        !std::fs::read_to_string(&c.config)
            .unwrap()
            .contains(PLANTED_ACCESS)
    );
    c.terminate(Duration::from_secs(10));

    // A new companion starts the server with the stored sign-in: no login needed.
    let c = Companion::start_with_env(config, &env);
    wait_state(&c, ServerState::Running).await;
    let client = c.client().await;
    let result = call(
        &client,
        "mcp_secure_echo",
        json!({"message": "still signed in"}),
    )
    .await;
    assert_eq!(text(&result), "still signed in");
    let _ = client.cancel().await;
    assert_eq!(fixture.shared.registrations.load(Ordering::SeqCst), 1);

    let logout = c.cli(&["logout", "secure"]);
    assert!(
        logout.status.success(),
        "{}",
        String::from_utf8_lossy(&logout.stderr)
    );
    assert_eq!(vault.get(&name).expect("keychain"), None);
    wait_state(&c, ServerState::NeedsSignIn).await;
}
