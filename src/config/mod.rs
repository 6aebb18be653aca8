//! Config (DESIGN §3): the `config.json` schema, loading, validation, `${VAR}` expansion and
//! atomic save.
//!
//! One JSON file holds every server, in the Claude Desktop `mcpServers` convention plus our own
//! keys:
//!
//! ```text
//! {
//!   "mcpServers": {
//!     "files": {"type": "stdio", "command": "npx", "args": ["-y", "pkg"], "env": {"K": "v"},
//!               "cwd": "", "toolTimeout": 30, "enabledTools": ["*"]},
//!     "docs":  {"type": "streamableHttp", "url": "https://mcp.example.com/mcp",
//!               "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}
//!   },
//!   "ssrfWhitelist": ["127.0.0.1/32"]
//! }
//! ```
//!
//! | file | owns |
//! |---|---|
//! | `error.rs` | [`ConfigError`] |
//! | `parse.rs` | [`parse`]: the document level (syntax, shape, unknown top-level keys) |
//! | `duplicates.rs` | keys repeated within one object, warned about (JSON keeps the last silently) |
//! | `entry.rs` | one server entry: validation and defaults |
//! | `fields.rs` | typed access to an entry's fields, errors naming server and field |
//! | `transport.rs` | transport kinds, detection when `type` is absent, URL checks |
//! | `normalize.rs` | [`normalize_document`]: the explicit `type` written on save |
//! | `oauth.rs` | the `oauth` object of a remote entry: [`OAuthConfig`] |
//! | `whitelist.rs` | `ssrfWhitelist` as [`SsrfWhitelist`] |
//! | `activity.rs` | the `activity` object: [`ActivityConfig`] |
//! | `telemetry.rs` | the `telemetry` object (OpenTelemetry export): [`TelemetryConfig`] |
//! | `policy.rs` | `toolPolicy` and `approvalTimeout` of an entry: [`ToolPolicy`], [`Policy`] |
//! | `profiles.rs` | the `profiles` object: [`ProfileSpec`], [`ProfileConfig`] |
//! | `tool_search.rs` | `toolSearch` and `alwaysList`, top level and per profile: [`ToolSearchConfig`] |
//! | `first_list.rs` | `firstListHold`: per agent, whether its first listing waits |
//! | `expand.rs` | `${VAR}` and `${secret:NAME}` expansion at connect time, built-in variables |
//! | `path.rs` | where the file lives: [`resolve_config_path`] |
//! | `load.rs` | [`load`], [`load_or_init`] (first run), [`default_document`] |
//! | `save.rs` | [`save_atomic`]: temp file, fsync, `.bak`, rename, modes |
//!
//! Failure is contained: file-level problems (I/O, JSON syntax, top level or `mcpServers` not an
//! object) fail the whole load; a bad server entry fails only that entry
//! ([`ServerSpec::entry`] is `Err`); a bad whitelist entry is reported in
//! [`SsrfWhitelist::errors`] and never affects stdio servers. Unknown keys are warnings and stay
//! in [`Config::raw`], which is what gets saved, so a load/save round trip is lossless.

mod activity;
mod duplicates;
mod entry;
mod error;
mod expand;
mod fields;
mod first_list;
mod load;
mod normalize;
mod oauth;
mod parse;
mod path;
mod policy;
mod profiles;
#[cfg(test)]
mod props;
mod save;
mod telemetry;
mod tool_search;
mod transport;
mod whitelist;

// Shared with `crate::manage::import`, which converts other clients' entries into ours.
pub(crate) use entry::KNOWN_KEYS as ENTRY_KEYS;
pub(crate) use parse::{BOM, syntax_error};
pub(crate) use transport::{Kind as TransportKind, detect as detect_transport};

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

pub use activity::{ActivityConfig, default_database_path};
pub use entry::{DEFAULT_CONNECT_TIMEOUT, DEFAULT_TOOL_TIMEOUT};
pub use error::{ConfigError, UnknownServer};
pub use expand::{
    BUILTIN_EXE_VARIABLE, SECRET_PREFIX, builtin_variable, default_lookup, expand_for_start,
    secret_names_in,
};
pub use load::{default_document, load, load_or_init};
pub use normalize::{normalize_document, normalize_entry};
pub use oauth::OAuthConfig;
pub use parse::parse;
pub use path::{
    CONFIG_ENV_VAR, default_config_path, is_default_config_path, resolve_config_path,
    resolve_config_path_from,
};
pub use policy::{
    DEFAULT_APPROVAL_TIMEOUT, Policy, PolicyEntry, ToolPolicy, exact_key, parse_tool_policy,
};
pub use profiles::{
    MAX_PROFILE_NAME_LEN, ProfileConfig, ProfileGlob, ProfileNaming, ProfileSpec, any_match,
    check_name as check_profile_name,
};
pub use save::{Overwrite, save_atomic, save_atomic_with, save_text_atomic};
pub use telemetry::{DEFAULT_EXPORT_INTERVAL, DEFAULT_SERVICE_NAME, TelemetryConfig};
pub use tool_search::ToolSearchConfig;
pub use whitelist::SsrfWhitelist;

/// Default of `firstListTimeout`: an agent that connects while servers are still starting gets
/// its first `tools/list` answer once all have settled, or after this long.
pub const DEFAULT_FIRST_LIST_TIMEOUT: Duration = Duration::from_secs(10);

/// A loaded config: every server entry (valid or not), the whitelist, warnings and the raw
/// document.
#[derive(Debug, Clone)]
pub struct Config {
    /// One spec per key of `mcpServers`, in file order.
    pub servers: Vec<ServerSpec>,
    /// The parsed `ssrfWhitelist`; its errors concern remote servers only.
    pub ssrf_whitelist: SsrfWhitelist,
    /// `firstListTimeout` (seconds in the file, 0 to 3600, default
    /// [`DEFAULT_FIRST_LIST_TIMEOUT`]): how long an agent's first `tools/list` waits for every
    /// enabled server to settle. Read when the companion starts.
    pub first_list_timeout: Duration,
    /// `firstListHold` (`{"<clientInfo.name>": true|false}`, names lower-cased): per agent,
    /// whether its first listing waits as `firstListTimeout` says (`true`) or is answered at
    /// once with the servers that are ready (`false`), over the endpoint's built-in rule.
    pub first_list_hold: BTreeMap<String, bool>,
    /// `wrapResources` (default `true`): whether every resource, resource template and prompt
    /// is also served as a tool (`mcp_<server>_resource_<name>`, `mcp_<server>_prompt_<name>`),
    /// for agents that only call tools. They are always served natively too.
    pub wrap_resources: bool,
    /// `bridgeAutostart` (default `true`): whether `mcp-companion bridge` starts a companion
    /// (`serve`, detached) when none is running ([`crate::ipc::autostart`]).
    pub bridge_autostart: bool,
    /// The `activity` object: the activity log's settings. Read when the companion starts.
    pub activity: ActivityConfig,
    /// The `telemetry` object: OpenTelemetry export (off without `otlpEndpoint`). Read when
    /// the companion starts.
    pub telemetry: TelemetryConfig,
    /// One spec per key of `profiles` (named subsets an agent can be given), in file order.
    pub profiles: Vec<ProfileSpec>,
    /// `toolSearch` and `alwaysList` of the default view (and what profiles inherit).
    pub tool_search: ToolSearchConfig,
    /// Human-readable warnings (unknown keys). Already logged with `tracing::warn` by [`parse`].
    pub warnings: Vec<String>,
    /// The document exactly as read (unexpanded, unknown keys included, key order kept). Edit
    /// this and pass it to [`save_atomic`] to save; never save an expanded config.
    pub raw: serde_json::Value,
}

impl Config {
    /// The spec of the server named `name`, if the file has one.
    pub fn server(&self, name: &str) -> Option<&ServerSpec> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// The servers whose entries are valid, in file order (disabled ones included).
    pub fn valid_servers(&self) -> impl Iterator<Item = &ServerConfig> {
        self.servers.iter().filter_map(|s| s.entry.as_ref().ok())
    }
}

/// One key of `mcpServers` and the outcome of validating its entry.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// The key under `mcpServers`, as written.
    pub name: String,
    /// The validated entry, or the first error found in it. An error here affects this server
    /// only.
    pub entry: Result<ServerConfig, ConfigError>,
}

/// A validated server entry, still holding unexpanded `${VAR}` references.
///
/// Call [`ServerConfig::expand_from_env`] (or [`ServerConfig::expand`]) at connect time to get
/// the copy to connect with; never write an expanded copy back to the file.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// The key under `mcpServers`.
    pub name: String,
    /// How to reach the server.
    pub transport: TransportConfig,
    /// Per-call time limit (`toolTimeout`, seconds in the file, default 30, > 0, may be
    /// fractional), counted from the call's last progress notification; the hard maximum of
    /// one call is 10 × this from its start (`hub::forward::MAX_TIMEOUT_FACTOR`).
    pub tool_timeout: Duration,
    /// Time limit for spawn/connect plus the MCP `initialize` handshake (`connectTimeout`,
    /// seconds in the file, default 30, > 0).
    pub connect_timeout: Duration,
    /// `enabledTools` patterns (DESIGN §5), default `["*"]`; interpreted by `catalog`.
    pub enabled_tools: Vec<String>,
    /// `disabled`: loaded and shown, but not started. Default false.
    pub disabled: bool,
    /// `autoApproveChanges`: serve a changed or new tool at once instead of withholding it
    /// until the person approves it (`catalog::pin`). Default false.
    pub auto_approve_changes: bool,
    /// `roots`: absolute directories offered to the server in `roots/list` when no calling
    /// agent answers it (MCP "Roots"); default none.
    pub roots: Vec<PathBuf>,
    /// `toolPolicy`: which tools run, wait for the person's approval, or never run
    /// (`policy.rs`); default empty (every tool takes its annotations' default).
    pub tool_policy: ToolPolicy,
    /// `approvalTimeout`: how long a call waits for the person's answer before it is declined
    /// (seconds in the file, default 60, > 0).
    pub approval_timeout: Duration,
}

/// The transport of a server, with its settings.
#[derive(Debug, Clone, PartialEq)]
pub enum TransportConfig {
    /// A child process speaking MCP over stdin/stdout (`"type": "stdio"`).
    Stdio(StdioConfig),
    /// Legacy HTTP+SSE (`"type": "sse"`).
    Sse(HttpConfig),
    /// Streamable HTTP (`"type": "streamableHttp"`, alias `"http"`).
    StreamableHttp(HttpConfig),
}

/// Settings of a stdio server.
#[derive(Debug, Clone, PartialEq)]
pub struct StdioConfig {
    /// The program; resolved on `PATH` by `launch`. Never empty.
    pub command: String,
    /// Arguments, passed as-is (no shell).
    pub args: Vec<String>,
    /// Extra environment variables for the child (added to the inherited environment). Values
    /// may be secrets: never log them. A `BTreeMap` so comparisons and debug output are stable.
    pub env: BTreeMap<String, String>,
    /// Working directory; `None` when absent or `""` in the file (inherit ours).
    pub cwd: Option<PathBuf>,
}

/// Settings of a remote (SSE or streamable HTTP) server.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpConfig {
    /// The endpoint, `http` or `https` only. A `String`, not `url::Url`, because it may hold
    /// `${VAR}` until expanded; once expanded it has been checked to parse as a URL. It may
    /// carry secrets (userinfo, query): log it only through the redaction in `net`.
    pub url: String,
    /// Headers sent on every request. Values may be secrets: never log them.
    pub headers: BTreeMap<String, String>,
    /// How to sign in when the server asks for OAuth (the entry's `oauth` object).
    pub oauth: OAuthConfig,
}

impl ServerConfig {
    /// The transport's name as written in the file: `"stdio"`, `"sse"` or `"streamableHttp"`.
    pub fn transport_name(&self) -> &'static str {
        self.transport.name()
    }
}

impl TransportConfig {
    /// The transport's name as written in the file: `"stdio"`, `"sse"` or `"streamableHttp"`.
    pub fn name(&self) -> &'static str {
        let kind = match self {
            TransportConfig::Stdio(_) => transport::Kind::Stdio,
            TransportConfig::Sse(_) => transport::Kind::Sse,
            TransportConfig::StreamableHttp(_) => transport::Kind::StreamableHttp,
        };
        kind.name()
    }
}
