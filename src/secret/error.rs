//! [`SecretError`]: what can go wrong with a secret. Texts name secrets, never values.

use super::KEYCHAIN_KIND;

/// Why a secret could not be read, stored or removed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    /// No OS keychain answers (e.g. a headless Linux box with no Secret Service). Nothing is
    /// ever written anywhere else instead.
    #[error(
        "no OS keychain is available ({KEYCHAIN_KIND}: {detail}); secrets are never stored in plain text, so keep the value in an environment variable and write ${{VAR}} in the config instead"
    )]
    Unavailable {
        /// What the platform said, e.g. the D-Bus error.
        detail: String,
    },

    /// The name cannot be a secret's name (see [`super::validate_name`]).
    #[error("invalid secret name \"{name}\": {reason}")]
    InvalidName {
        /// The name as given (names are not secret).
        name: String,
        /// What is wrong.
        reason: &'static str,
    },

    /// The value is larger than this keychain accepts.
    #[error("secret \"{name}\" is too long for {KEYCHAIN_KIND} (at most {max} characters)")]
    TooLong {
        /// The secret's name.
        name: String,
        /// The platform's limit.
        max: u32,
    },

    /// The keychain answered but refused or failed the operation.
    #[error("{KEYCHAIN_KIND} failed on secret \"{name}\": {message}")]
    Keychain {
        /// The secret's name.
        name: String,
        /// What the keychain said.
        message: String,
    },
}
