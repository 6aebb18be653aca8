//! Where sign-in state is kept: one keychain entry per server and resource (see
//! [`crate::auth::store`] for what goes in it).
//!
//! [`TokenVault`] is the narrow face the OAuth code needs (get, set, delete a string by name).
//! The companion uses the OS keychain through [`crate::secret`] (service `mcp-companion-oauth`);
//! tests and the conformance run
//! may pick an in-process [`MemoryVault`] with [`VAULT_ENV`]` = memory`, which keeps tokens for
//! the life of one `serve` process only.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Environment variable choosing the token vault: `memory` (in-process, tests only) or unset
/// (the OS keychain).
pub const VAULT_ENV: &str = "MCP_COMPANION_TOKEN_VAULT";

/// Why the vault could not be read or written. Carries entry names only, never values.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct VaultError(pub String);

/// A store of named secret strings (the OS keychain in the product).
pub trait TokenVault: Send + Sync {
    /// The value stored under `name`, or `None`.
    ///
    /// # Errors
    /// [`VaultError`] when the keychain is unavailable or refuses.
    fn get(&self, name: &str) -> Result<Option<String>, VaultError>;
    /// Stores `value` under `name`, replacing any previous value.
    ///
    /// # Errors
    /// As [`TokenVault::get`].
    fn set(&self, name: &str, value: &str) -> Result<(), VaultError>;
    /// Removes `name`; `true` when there was a value.
    ///
    /// # Errors
    /// As [`TokenVault::get`].
    fn delete(&self, name: &str) -> Result<bool, VaultError>;
}

/// An in-process vault (tests, and `MCP_COMPANION_TOKEN_VAULT=memory`).
#[derive(Debug, Default)]
pub struct MemoryVault {
    values: Mutex<HashMap<String, String>>,
}

impl MemoryVault {
    fn values(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.values.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl TokenVault for MemoryVault {
    fn get(&self, name: &str) -> Result<Option<String>, VaultError> {
        Ok(self.values().get(name).cloned())
    }
    fn set(&self, name: &str, value: &str) -> Result<(), VaultError> {
        self.values().insert(name.to_owned(), value.to_owned());
        Ok(())
    }
    fn delete(&self, name: &str) -> Result<bool, VaultError> {
        Ok(self.values().remove(name).is_some())
    }
}

static VAULT: OnceLock<Arc<dyn TokenVault>> = OnceLock::new();

/// The process's vault: chosen once from [`VAULT_ENV`] on first use (the OS keychain unless it
/// says `memory`).
pub fn vault() -> Arc<dyn TokenVault> {
    VAULT.get_or_init(default_vault).clone()
}

fn default_vault() -> Arc<dyn TokenVault> {
    match std::env::var(VAULT_ENV).as_deref() {
        Ok("memory") => Arc::new(MemoryVault::default()),
        _ => os_vault(),
    }
}

/// The OS keychain (see [`crate::secret`]) under the service `<service>-oauth`, so sign-ins
/// stay out of `secret list` and a test's `MCP_COMPANION_KEYCHAIN_SERVICE` applies to them too.
fn os_vault() -> Arc<dyn TokenVault> {
    let service = format!("{}-oauth", crate::secret::os_keychain().service());
    Arc::new(KeychainVault(crate::secret::Keychain::new(service)))
}

/// [`TokenVault`] on the OS keychain.
struct KeychainVault(crate::secret::Keychain);

impl TokenVault for KeychainVault {
    fn get(&self, name: &str) -> Result<Option<String>, VaultError> {
        use crate::secret::SecretStore;
        self.0.get(name).map_err(|e| VaultError(e.to_string()))
    }
    fn set(&self, name: &str, value: &str) -> Result<(), VaultError> {
        use crate::secret::SecretStore;
        self.0
            .set(name, value)
            .map_err(|e| VaultError(e.to_string()))
    }
    fn delete(&self, name: &str) -> Result<bool, VaultError> {
        use crate::secret::SecretStore;
        self.0.delete(name).map_err(|e| VaultError(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_vault_round_trips() {
        let v = MemoryVault::default();
        assert_eq!(v.get("a"), Ok(None));
        v.set("a", "1").unwrap();
        assert_eq!(v.get("a"), Ok(Some("1".to_owned())));
        assert_eq!(v.delete("a"), Ok(true));
        assert_eq!(v.delete("a"), Ok(false));
    }
}
