//! Secrets in the OS keychain: the values behind `${secret:NAME}` references.
//!
//! | file | owns |
//! |---|---|
//! | `error.rs` | [`SecretError`] |
//! | `name.rs` | [`validate_name`]: which names a secret may have |
//! | `keychain.rs` | [`Keychain`]: the OS keychain through the `keyring` crate, and its name index |
//! | `parts.rs` | values larger than one entry holds (Windows: 1 280 UTF-16 units), stored across numbered entries |
//! | `memory.rs` | [`MemoryStore`] (tests, previews), [`NoKeychain`] (always unavailable), [`Masked`] (placeholders instead of values) |
//!
//! Where values live, per OS: the macOS Keychain (login keychain), the Windows Credential
//! Manager (generic credentials), and on Linux the freedesktop Secret Service over D-Bus (GNOME
//! Keyring, KWallet, KeePassXC), reached in pure Rust (no libdbus). Every entry has the service
//! [`DEFAULT_SERVICE`] (`mcp-companion`, or [`SERVICE_ENV`] when set) and the secret's name as
//! its user/account.
//!
//! There is no plain-text fallback: when no keychain answers, every operation fails with
//! [`SecretError::Unavailable`], whose text says so and points to `${VAR}` (an environment
//! variable) as the alternative.
//!
//! Code that needs secrets takes a `&dyn` [`SecretStore`], so tests and previews can pass a
//! [`MemoryStore`] instead of the real keychain.

mod error;
mod keychain;
mod memory;
mod name;
mod parts;

pub use error::SecretError;
pub use keychain::{KEYCHAIN_KIND, Keychain};
pub use memory::{Masked, MemoryStore, NoKeychain};
pub use name::{MAX_ENTRY_NAME_LEN, for_entry as entry_secret_name, validate_name};

/// The keychain service name every entry of ours is stored under.
pub const DEFAULT_SERVICE: &str = "mcp-companion";

/// Environment variable that overrides [`DEFAULT_SERVICE`]: separate profiles (and the tests)
/// keep their secrets apart with it.
pub const SERVICE_ENV: &str = "MCP_COMPANION_KEYCHAIN_SERVICE";

/// A store of named secret strings.
///
/// Names are checked with [`validate_name`] by every method. Implementations never log or
/// format values; errors carry names only.
pub trait SecretStore: Send + Sync {
    /// The value stored under `name`, or `None` when there is none.
    ///
    /// # Errors
    /// [`SecretError::InvalidName`], [`SecretError::Unavailable`] when no keychain answers,
    /// [`SecretError::Keychain`] when it refuses.
    fn get(&self, name: &str) -> Result<Option<String>, SecretError>;

    /// Stores `value` under `name`, replacing any previous value, and records the name in the
    /// index that [`SecretStore::names`] reads.
    ///
    /// # Errors
    /// As [`SecretStore::get`], plus [`SecretError::TooLong`] when the value is larger than the
    /// store takes (the keychain: 100 entries' worth, about 120 000 characters on Windows).
    fn set(&self, name: &str, value: &str) -> Result<(), SecretError>;

    /// Removes `name`; `true` when there was a value to remove.
    ///
    /// # Errors
    /// As [`SecretStore::get`].
    fn delete(&self, name: &str) -> Result<bool, SecretError>;

    /// The names of the secrets we stored, sorted. Keychains cannot be enumerated portably, so
    /// this is the index kept by [`SecretStore::set`] and [`SecretStore::delete`]; see
    /// [`Keychain`] for where it lives.
    ///
    /// # Errors
    /// As [`SecretStore::get`].
    fn names(&self) -> Result<Vec<String>, SecretError>;
}

/// The OS keychain under the service named by [`SERVICE_ENV`], else [`DEFAULT_SERVICE`].
///
/// Cheap: nothing is contacted until the first call.
pub fn os_keychain() -> Keychain {
    let service = std::env::var(SERVICE_ENV)
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| DEFAULT_SERVICE.to_owned());
    Keychain::new(service)
}
