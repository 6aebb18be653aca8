//! Installing servers from an MCP registry (the generic registry API: the official
//! `registry.modelcontextprotocol.io` or a private sub-registry).
//!
//! | module | owns |
//! |---|---|
//! | [`model`] | the API's JSON shapes (`ServerList`, `ServerResponse`, `server.json`) |
//! | [`client`] | [`RegistryClient`]: guarded, size- and time-limited requests |
//! | [`inputs`] | inputs → form [`Field`]s; values → config strings; secrets → references |
//! | [`entry`] | a `server.json` version → a config entry ([`build`]) |
//! | [`sources`] | the `registries` config key and the entry's `source` (for `outdated`/`update`) |
//! | [`install`] | the whole flow: fetch, map, check, write `config.json`; `outdated` |
//! | [`keychain`] | the OS keychain for secret inputs and tokens |
//! | [`update`] | re-install at the latest version with the remembered inputs |

pub mod client;
pub mod entry;
pub mod inputs;
pub mod install;
pub mod keychain;
pub mod model;
pub mod sources;
pub mod update;

pub use client::RegistryClient;
pub use entry::{Built, Choice, InstallOption, build, default_choice, options};
pub use inputs::{
    Field, NoKeychainSink, PendingSecret, SecretSink, StoredSecrets, Values, secret_name,
};
pub use sources::{OFFICIAL_URL, RegistryRef, Source, registries};

/// Why a registry operation failed. Texts quote the registry (cut short), never a token, and
/// show URLs redacted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RegistryError {
    /// The registry URL is unusable.
    #[error("registry URL {url}: {reason}")]
    Url {
        /// The URL (redacted).
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// The SSRF guard refused an address.
    #[error("refused {url}: {reason}")]
    Ssrf {
        /// The URL (redacted).
        url: String,
        /// The guard's verdict (names host, address and the whitelist entry to add).
        reason: String,
    },
    /// Connecting or reading failed.
    #[error("cannot reach {url}: {reason}")]
    Http {
        /// The URL (redacted).
        url: String,
        /// What the HTTP stack said.
        reason: String,
    },
    /// The registry answered with an error status.
    #[error("{url} answered HTTP {status}: {message}")]
    Status {
        /// The URL (redacted).
        url: String,
        /// The status code.
        status: u16,
        /// The `error` field of its body, or the body's start.
        message: String,
    },
    /// The answer is larger than [`client::MAX_BODY_BYTES`].
    #[error("{url} answered more than {limit} bytes; refused")]
    TooLarge {
        /// The URL (redacted).
        url: String,
        /// The limit in bytes.
        limit: usize,
    },
    /// The answer is not the JSON the API specifies.
    #[error("{url} answered malformed JSON: {reason}")]
    BadJson {
        /// The URL (redacted).
        url: String,
        /// The decoder's message (line, column, what was expected).
        reason: String,
    },
    /// No answer in time.
    #[error("{url} did not answer within {seconds} s")]
    Timeout {
        /// The URL (redacted).
        url: String,
        /// The limit.
        seconds: u64,
    },
    /// No such server or version.
    #[error("the registry has no server \"{name}\"{}", version.as_ref().map(|v| format!(" version \"{v}\"")).unwrap_or_default())]
    NotFound {
        /// Server name.
        name: String,
        /// Version asked for.
        version: Option<String>,
    },
    /// The server cannot be installed this way.
    #[error("cannot install \"{name}\": {reason}")]
    Unsupported {
        /// Registry name of the server.
        name: String,
        /// Why.
        reason: String,
    },
    /// A value from the registry is refused (shell metacharacters, option-like, bad URL…).
    #[error("refused {what} \"{value}\" from the registry: {reason}")]
    Hostile {
        /// Which field.
        what: String,
        /// The value (cut short).
        value: String,
        /// Why.
        reason: String,
    },
    /// A required input was not given.
    #[error("input \"{key}\" ({target}) is required: pass --set {key}=VALUE")]
    MissingInput {
        /// Field key.
        key: String,
        /// Where it goes.
        target: String,
    },
    /// A given input is invalid.
    #[error("input \"{key}\": {reason}")]
    BadInput {
        /// Field key.
        key: String,
        /// Why.
        reason: String,
    },
    /// The keychain refused a secret.
    #[error("cannot store secret input \"{key}\": {reason}")]
    Secret {
        /// Field key.
        key: String,
        /// What the keychain said.
        reason: String,
    },
    /// The runtime the entry needs is not installed.
    #[error("{program} is not installed (needed to run {what}); {hint}")]
    MissingRuntime {
        /// The program, e.g. `docker`.
        program: String,
        /// What needs it.
        what: String,
        /// How to get it.
        hint: String,
    },
    /// Reading or writing the config failed, or the entry does not validate.
    #[error("{0}")]
    Config(String),
}

impl RegistryError {
    /// HTTP 404 → [`RegistryError::NotFound`] for `name`/`version`; other errors unchanged.
    fn not_found_as(self, name: &str, version: Option<&str>) -> RegistryError {
        match self {
            RegistryError::Status { status: 404, .. } => RegistryError::NotFound {
                name: name.to_owned(),
                version: version.map(str::to_owned),
            },
            other => other,
        }
    }
}
