//! Where secret inputs and registry tokens come from on this machine: the OS keychain
//! ([`crate::secret`]) when it answers.

use super::inputs::{NoKeychainSink, SecretSink, StoredSecrets};
use crate::config;
use crate::secret::{self, SecretError, SecretStore};

/// The sink for secret inputs: the OS keychain (`${secret:server.key}`) when one answers, else
/// [`NoKeychainSink`] (secret values refused). The flag says whether it is the keychain.
pub fn machine_secrets() -> (Box<dyn SecretSink>, bool) {
    let keychain = secret::os_keychain();
    match keychain.names() {
        Err(SecretError::Unavailable { .. }) => (Box::new(NoKeychainSink), false),
        _ => (
            Box::new(StoredSecrets::new(move |name: &str, value: &str| {
                keychain.set(name, value).map_err(|e| e.to_string())
            })),
            true,
        ),
    }
}

/// Resolves a registry token reference's inner name: `secret:NAME` from the OS keychain,
/// anything else as [`config::default_lookup`] does.
pub fn token_lookup(name: &str) -> Option<String> {
    match name.strip_prefix("secret:") {
        Some(secret_name) => secret::os_keychain().get(secret_name).ok().flatten(),
        None => config::default_lookup(name),
    }
}
