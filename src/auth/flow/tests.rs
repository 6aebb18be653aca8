//! The 2025-03-26 issuer relaxation stays on the server's origin, and a missing keychain
//! stops a sign-in before it starts but not a server that needs none.

use super::discover::same_origin;
use super::*;

#[test]
fn only_issuers_on_the_server_origin_get_the_2025_03_26_relaxation() {
    let server = url::Url::parse("http://localhost:4000/mcp").unwrap();
    assert!(same_origin(&server, "http://localhost:4000/oauth"));
    assert!(same_origin(&server, "http://localhost:4000/"));
    assert!(!same_origin(&server, "http://localhost:4001/oauth"));
    assert!(!same_origin(&server, "https://localhost:4000/oauth"));
    assert!(!same_origin(&server, "http://evil.example/oauth"));
    assert!(!same_origin(&server, "not a url"));
}

/// A keychain that never answers.
struct Broken;

impl TokenVault for Broken {
    fn get(&self, _: &str) -> Result<Option<String>, VaultError> {
        Err(VaultError("no OS keychain is available".to_owned()))
    }
    fn set(&self, _: &str, _: &str) -> Result<(), VaultError> {
        Err(VaultError("no OS keychain is available".to_owned()))
    }
    fn delete(&self, _: &str) -> Result<bool, VaultError> {
        Err(VaultError("no OS keychain is available".to_owned()))
    }
}

#[tokio::test]
async fn without_a_keychain_servers_connect_without_a_token() {
    let target = Target {
        server: "s".to_owned(),
        url: url::Url::parse("http://127.0.0.1:9/mcp").unwrap(),
        oauth: OAuthConfig::default(),
        guard: Guard::default(),
    };
    assert!(stored(&target, Arc::new(Broken)).await.unwrap().is_none());
    let refused = begin(&target, Arc::new(Broken), None, None)
        .await
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .starts_with("the keychain is not available (no OS keychain is available)"),
        "{refused}"
    );
}
