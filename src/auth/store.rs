//! rmcp's [`CredentialStore`] on the keychain: one entry per server and resource.
//!
//! Entry name: `oauth/<server>/<16 hex digits>`, the digits being the start of
//! SHA-256(`server` NUL `resource`), so names stay short, valid in every keychain and free of
//! the resource URL (which may carry secrets in its query). The value is one JSON object:
//!
//! ```text
//! {"credentials": {client_id, token_response: {access_token, refresh_token, expires_in…},
//!                  granted_scopes, token_received_at, issuer},
//!  "clientSecret": "…"}        (the secret of a dynamically registered confidential client)
//! ```
//!
//! Nothing here logs or formats a value; every token read or written is registered with the
//! redaction set ([`crate::net::remember_oauth_json`]).

use std::sync::Arc;

use async_trait::async_trait;
use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::vault::{TokenVault, VaultError};

/// Everything kept for one server and resource.
#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    credentials: Option<StoredCredentials>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
}

/// The keychain entry of one server's sign-in for one resource.
#[derive(Clone)]
pub struct VaultCredentialStore {
    vault: Arc<dyn TokenVault>,
    name: String,
}

impl VaultCredentialStore {
    /// The store of server `server` for `resource` (the server URL).
    pub fn new(vault: Arc<dyn TokenVault>, server: &str, resource: &str) -> VaultCredentialStore {
        VaultCredentialStore {
            vault,
            name: entry_name(server, resource),
        }
    }

    /// The keychain entry name (no secret in it).
    pub fn name(&self) -> &str {
        &self.name
    }

    async fn read(&self) -> Result<Record, VaultError> {
        let (vault, name) = (self.vault.clone(), self.name.clone());
        let text = blocking(move || vault.get(&name)).await?;
        // A corrupt entry counts as "not signed in"; the next sign-in overwrites it.
        let json: Option<serde_json::Value> = text.and_then(|t| serde_json::from_str(&t).ok());
        let Some(json) = json else {
            return Ok(Record::default());
        };
        // Loaded tokens are registered for redaction before any request can carry them.
        crate::net::remember_oauth_json(&json);
        if let Some(secret) = json.get("clientSecret").and_then(serde_json::Value::as_str) {
            crate::net::remember_credential(secret);
        }
        Ok(serde_json::from_value(json).unwrap_or_default())
    }

    async fn write(&self, record: &Record) -> Result<(), VaultError> {
        let text = serde_json::to_string(record)
            .map_err(|e| VaultError(format!("cannot encode the sign-in entry: {e}")))?;
        let (vault, name) = (self.vault.clone(), self.name.clone());
        blocking(move || vault.set(&name, &text)).await
    }

    /// Reads the entry once: `Ok` when the keychain answers (whether or not it holds one).
    ///
    /// # Errors
    /// [`VaultError`] when the keychain is unavailable or refuses.
    pub async fn check(&self) -> Result<(), VaultError> {
        self.read().await.map(drop)
    }

    /// The client secret saved with the sign-in (a registered confidential client), if any.
    ///
    /// # Errors
    /// [`VaultError`] when the keychain cannot be read.
    pub async fn client_secret(&self) -> Result<Option<String>, VaultError> {
        Ok(self.read().await?.client_secret)
    }

    /// Saves (or clears) the registered client's secret next to the tokens.
    ///
    /// # Errors
    /// [`VaultError`] when the keychain cannot be written.
    pub async fn set_client_secret(&self, secret: Option<String>) -> Result<(), VaultError> {
        let mut record = self.read().await?;
        record.client_secret = secret;
        self.write(&record).await
    }

    /// The granted scopes of the stored tokens (empty when none).
    ///
    /// # Errors
    /// [`VaultError`] when the keychain cannot be read.
    pub async fn granted_scopes(&self) -> Result<Vec<String>, VaultError> {
        Ok(self
            .read()
            .await?
            .credentials
            .map(|c| c.granted_scopes)
            .unwrap_or_default())
    }

    /// Forgets everything: tokens and client registration. `true` when there was an entry.
    ///
    /// # Errors
    /// [`VaultError`] when the keychain refuses.
    pub async fn forget(&self) -> Result<bool, VaultError> {
        let (vault, name) = (self.vault.clone(), self.name.clone());
        blocking(move || vault.delete(&name)).await
    }
}

#[async_trait]
impl CredentialStore for VaultCredentialStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.read().await.map_err(store_error)?.credentials)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        if let Ok(json) = serde_json::to_value(&credentials) {
            crate::net::remember_oauth_json(&json);
        }
        let mut record = self.read().await.map_err(store_error)?;
        record.credentials = Some(credentials);
        self.write(&record).await.map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let mut record = self.read().await.map_err(store_error)?;
        record.credentials = None;
        self.write(&record).await.map_err(store_error)
    }
}

fn store_error(e: VaultError) -> AuthError {
    AuthError::CredentialStoreError(e.0)
}

/// Keychain calls block (D-Bus, Keychain Services): off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, VaultError> + Send + 'static,
) -> Result<T, VaultError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| VaultError(format!("keychain task failed: {e}")))?
}

/// `oauth/<server, reduced to [A-Za-z0-9_-]>/<16 hex of SHA-256(server NUL resource)>`.
pub fn entry_name(server: &str, resource: &str) -> String {
    let safe: String = server
        .chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut hash = Sha256::new();
    hash.update(server.as_bytes());
    hash.update([0]);
    hash.update(resource.as_bytes());
    let digest = hash.finalize();
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("oauth/{safe}/{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::vault::MemoryVault;

    #[test]
    fn entry_names_are_per_server_and_resource_and_hide_the_url() {
        let a = entry_name("linear", "https://mcp.linear.app/mcp?key=SECRET");
        assert!(
            a.starts_with("oauth/linear/") && !a.contains("SECRET"),
            "{a}"
        );
        assert_ne!(a, entry_name("linear", "https://other/mcp"));
        assert_ne!(
            a,
            entry_name("linear2", "https://mcp.linear.app/mcp?key=SECRET")
        );
        assert!(entry_name("we ird/\"name", "r").starts_with("oauth/we_ird__name/"));
    }

    #[tokio::test]
    async fn credentials_and_client_secret_share_one_entry() {
        let vault = Arc::new(MemoryVault::default());
        let store = VaultCredentialStore::new(vault.clone(), "s", "https://h/mcp");
        assert!(store.load().await.unwrap().is_none());
        store
            .save(StoredCredentials::new(
                "cid".into(),
                None,
                vec!["a".into()],
                Some(1),
            ))
            .await
            .unwrap();
        store.set_client_secret(Some("shh".into())).await.unwrap();
        let loaded = store.load().await.unwrap().expect("saved");
        assert_eq!(loaded.client_id, "cid");
        assert_eq!(store.client_secret().await.unwrap().as_deref(), Some("shh"));
        assert_eq!(store.granted_scopes().await.unwrap(), vec!["a".to_owned()]);
        assert!(store.forget().await.unwrap());
        assert!(store.load().await.unwrap().is_none());
        assert!(vault.get(store.name()).unwrap().is_none());
    }
}
