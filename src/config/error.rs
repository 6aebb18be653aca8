//! The one error type of the config module, [`ConfigError`].
//!
//! Variants carry context as fields (which file, which server, which field, which variable) so
//! callers decide by variant, never by message text. Values of `env`, `headers` and URLs never
//! appear in an error: they may hold secrets. Key names, server names and CIDR entries do.

use std::io;
use std::path::PathBuf;

/// A server name that is not in the config: the one text every room (hub, edits, control API,
/// window, CLI) uses for it, so agents, scripts and people see the same words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no server named \"{name}\"")]
pub struct UnknownServer {
    /// The name asked for, as given.
    pub name: String,
}

impl UnknownServer {
    /// The error for `name`.
    pub fn new(name: impl Into<String>) -> UnknownServer {
        UnknownServer { name: name.into() }
    }
}

/// Everything that can go wrong while resolving, loading, validating, expanding or saving the
/// config.
///
/// File-level variants (`Io`, `Syntax`, `Shape`, `NoConfigDir`, `RefuseOverwrite`) fail a whole
/// load or save; the others fail one server entry (stored in [`super::ServerSpec::entry`]) or one
/// whitelist entry. `Clone` because a server's last error is kept in its state; I/O errors are
/// therefore stored as kind plus message rather than as `std::io::Error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Reading, writing, renaming or syncing a file or directory failed.
    #[error("could not {operation} {path}: {message}")]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// What we were doing, as a verb phrase ("read", "create directory", "rename temp file onto").
        operation: &'static str,
        /// The OS error kind, for callers that branch on e.g. `NotFound`.
        kind: io::ErrorKind,
        /// The OS error text.
        message: String,
    },

    /// The file is not valid JSON.
    #[error("config file {path} is not valid JSON at line {line}, column {column}: {message}")]
    Syntax {
        /// The file that failed to parse.
        path: PathBuf,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error (0 when the error is at end of input).
        column: usize,
        /// serde_json's description, without its position suffix.
        message: String,
    },

    /// The document is JSON but a top-level piece has the wrong shape.
    #[error("config file {path}: {what} must be {expected}, found {found}")]
    Shape {
        /// The file involved (or the target path when saving).
        path: PathBuf,
        /// The offending piece: "the top level" or "`mcpServers`".
        what: &'static str,
        /// The expected JSON type, e.g. "a JSON object".
        expected: &'static str,
        /// The JSON type found, e.g. "array".
        found: &'static str,
    },

    /// A server entry is not a JSON object.
    #[error("server \"{server}\": entry must be a JSON object, found {found}")]
    Entry {
        /// The key of the entry under `mcpServers`.
        server: String,
        /// The JSON type found.
        found: &'static str,
    },

    /// One field of a server entry is missing, has the wrong JSON type or an invalid value.
    #[error("server \"{server}\": field \"{field}\": {message}")]
    Field {
        /// The key of the entry under `mcpServers`.
        server: String,
        /// The field, with a key or index for nested values: `toolTimeout`, `env.API_KEY`, `args[2]`.
        field: String,
        /// What is wrong, never including the value of a possibly secret field.
        message: String,
    },

    /// A `${VAR}` reference names a variable that is neither built in nor set.
    #[error("server \"{server}\": field \"{field}\": variable \"{variable}\" is not set")]
    MissingVariable {
        /// The key of the entry under `mcpServers`.
        server: String,
        /// The field holding the reference, as in [`ConfigError::Field`].
        field: String,
        /// The variable name between `${` and `}`.
        variable: String,
    },

    /// A `${secret:NAME}` reference names a secret the keychain does not hold.
    #[error(
        "server \"{server}\": field \"{field}\": secret \"{secret}\" is not in the keychain; store it with `mcp-companion secret set {secret}`"
    )]
    MissingSecret {
        /// The key of the entry under `mcpServers`.
        server: String,
        /// The field holding the reference, as in [`ConfigError::Field`].
        field: String,
        /// The secret's name (after `secret:`).
        secret: String,
    },

    /// Reading a `${secret:NAME}` failed: no keychain, or the keychain refused.
    #[error("server \"{server}\": field \"{field}\": cannot read secret \"{secret}\": {message}")]
    Secret {
        /// The key of the entry under `mcpServers`.
        server: String,
        /// The field holding the reference.
        field: String,
        /// The secret's name.
        secret: String,
        /// The [`crate::secret::SecretError`] text (never a value).
        message: String,
    },

    /// An `ssrfWhitelist` entry is not a CIDR or IP address.
    #[error("ssrfWhitelist entry \"{entry}\": {message}")]
    InvalidCidr {
        /// The entry as written (or `#index` when it is not a string).
        entry: String,
        /// What is wrong.
        message: String,
    },

    /// `ssrfWhitelist` is not an array.
    #[error("ssrfWhitelist must be an array of CIDR strings, found {found}")]
    WhitelistShape {
        /// The JSON type found.
        found: &'static str,
    },

    /// `--config` (or `MCP_COMPANION_CONFIG`) names a file that does not exist, and it is not
    /// the default path: only that one is created on first run, so a typo creates no file.
    #[error(
        "config file {path} does not exist (named by --config or MCP_COMPANION_CONFIG); create it, or name an existing one (only the default {default} is created on first run)"
    )]
    NotCreated {
        /// The missing file.
        path: PathBuf,
        /// The default config path, or a phrase when the OS has none.
        default: String,
    },

    /// The OS has no per-user config directory and no path was given.
    #[error("no config directory on this system: pass --config or set MCP_COMPANION_CONFIG")]
    NoConfigDir,

    /// Saving would overwrite a file that does not parse; the user's edits would be lost.
    #[error(
        "refusing to overwrite {path}: it is not valid JSON at line {line}, column {column} (fix or remove it first)"
    )]
    RefuseOverwrite {
        /// The existing file.
        path: PathBuf,
        /// 1-based line of the syntax error in the existing file.
        line: usize,
        /// 1-based column of the syntax error in the existing file.
        column: usize,
    },
}

impl ConfigError {
    /// A stable machine-readable kind for this error (for the control API and the desktop UI).
    pub fn kind(&self) -> &'static str {
        match self {
            ConfigError::Io { .. } => "io",
            ConfigError::Syntax { .. } => "syntax",
            ConfigError::Shape { .. } => "shape",
            ConfigError::Entry { .. } => "entry",
            ConfigError::Field { .. } => "field",
            ConfigError::MissingVariable { .. } => "missing_variable",
            ConfigError::MissingSecret { .. } => "missing_secret",
            ConfigError::Secret { .. } => "secret",
            ConfigError::InvalidCidr { .. } => "invalid_cidr",
            ConfigError::WhitelistShape { .. } => "whitelist_shape",
            ConfigError::NotCreated { .. } => "not_created",
            ConfigError::NoConfigDir => "no_config_dir",
            ConfigError::RefuseOverwrite { .. } => "refuse_overwrite",
        }
    }

    /// Builds an [`ConfigError::Io`] from an `std::io::Error`.
    pub(crate) fn io(path: impl Into<PathBuf>, operation: &'static str, err: &io::Error) -> Self {
        ConfigError::Io {
            path: path.into(),
            operation,
            kind: err.kind(),
            message: err.to_string(),
        }
    }

    /// Builds a [`ConfigError::Field`].
    pub(crate) fn field(
        server: &str,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        ConfigError::Field {
            server: server.to_owned(),
            field: field.into(),
            message: message.into(),
        }
    }
}

/// The JSON type name of a value, for "expected X, found Y" messages (never the value itself).
pub(crate) fn json_type(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_start_lower_case_name_the_thing_and_have_no_full_stop() {
        let p = PathBuf::from("/c/config.json");
        let cases = [
            (
                ConfigError::io(&p, "read", &io::Error::from(io::ErrorKind::NotFound)),
                "could not read /c/config.json: ",
            ),
            (
                ConfigError::Syntax {
                    path: p.clone(),
                    line: 2,
                    column: 5,
                    message: "expected `:`".into(),
                },
                "config file /c/config.json is not valid JSON at line 2, column 5: expected `:`",
            ),
            (
                ConfigError::Shape {
                    path: p.clone(),
                    what: "`mcpServers`",
                    expected: "a JSON object",
                    found: "array",
                },
                "config file /c/config.json: `mcpServers` must be a JSON object, found array",
            ),
            (
                ConfigError::field(
                    "files",
                    "toolTimeout",
                    "must be a positive number of seconds, found 0",
                ),
                "server \"files\": field \"toolTimeout\": must be a positive number of seconds, found 0",
            ),
            (
                ConfigError::InvalidCidr {
                    entry: "10.0.0.0/33".into(),
                    message: "bad prefix".into(),
                },
                "ssrfWhitelist entry \"10.0.0.0/33\": bad prefix",
            ),
            (
                ConfigError::WhitelistShape { found: "string" },
                "ssrfWhitelist must be an array of CIDR strings, found string",
            ),
            (
                ConfigError::RefuseOverwrite {
                    path: p.clone(),
                    line: 1,
                    column: 2,
                },
                "refusing to overwrite /c/config.json: it is not valid JSON at line 1, column 2 (fix or remove it first)",
            ),
            (
                ConfigError::NoConfigDir,
                "no config directory on this system: ",
            ),
        ];
        for (err, want_prefix) in cases {
            let text = err.to_string();
            assert!(text.starts_with(want_prefix), "{text}");
            assert!(!text.ends_with('.'), "{text}");
            assert!(text.starts_with(|c: char| !c.is_uppercase()), "{text}");
            assert!(!err.kind().is_empty());
        }
    }
}
