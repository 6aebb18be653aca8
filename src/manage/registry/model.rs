//! The registry's JSON shapes, as the generic registry API's OpenAPI file
//! (`modelcontextprotocol/registry`, `docs/reference/api/openapi.yaml`, version 2025-12-01)
//! defines them: `ServerList`, `ServerResponse`, `ServerDetail` (the `server.json` document),
//! `Package`, `Argument`, `KeyValueInput`, `Input` and the transports.
//!
//! Decoding is strict about types (a string where an array belongs is an error naming the
//! path) and lenient about absent optional fields and unknown keys, as the schema allows.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `GET /v0.1/servers` and `GET /v0.1/servers/{serverName}/versions`: one page of servers.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct ServerList {
    /// The servers of this page.
    pub servers: Vec<ServerResponse>,
    /// Paging data.
    #[serde(default)]
    pub metadata: ListMetadata,
    /// Entries of the page that did not decode, each as "name: reason" (the rest are usable).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

/// A page as received, before each entry is decoded on its own.
#[derive(Debug, Deserialize)]
pub(crate) struct RawList {
    pub(crate) servers: Vec<serde_json::Value>,
    #[serde(default)]
    pub(crate) metadata: ListMetadata,
}

impl RawList {
    /// Decodes every entry; one malformed entry is reported in `skipped`, not fatal.
    pub(crate) fn decode(self) -> ServerList {
        let mut servers = Vec::new();
        let mut skipped = Vec::new();
        for raw in self.servers {
            let name = raw
                .pointer("/server/name")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("(no name)")
                .to_owned();
            match serde_json::from_value::<ServerResponse>(raw) {
                Ok(s) => servers.push(s),
                Err(e) => skipped.push(format!(
                    "{}: {}",
                    super::client::quote(&name),
                    super::client::quote(&e.to_string())
                )),
            }
        }
        ServerList {
            servers,
            metadata: self.metadata,
            skipped,
        }
    }
}

/// `ServerList.metadata`.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListMetadata {
    /// The opaque cursor of the next page; absent, null or empty at the end.
    #[serde(default)]
    pub next_cursor: Option<String>,
    /// Items in this page.
    #[serde(default)]
    pub count: Option<u64>,
}

/// `ServerResponse`: a `server.json` document plus registry-managed metadata.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct ServerResponse {
    /// The `server.json` document.
    pub server: ServerDetail,
    /// Registry metadata (`io.modelcontextprotocol.registry/official`: status, isLatest…).
    #[serde(default, rename = "_meta")]
    pub meta: Option<serde_json::Value>,
}

impl ServerResponse {
    /// `_meta."io.modelcontextprotocol.registry/official".status`, e.g. `deprecated`.
    pub fn status(&self) -> Option<&str> {
        self.meta
            .as_ref()?
            .get("io.modelcontextprotocol.registry/official")?
            .get("status")?
            .as_str()
    }
}

/// `ServerDetail`: the `server.json` document of one server version.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerDetail {
    /// Reverse-DNS name with exactly one `/`, e.g. `io.github.user/weather`.
    pub name: String,
    /// Human-readable explanation (the schema caps it at 100 characters).
    #[serde(default)]
    pub description: String,
    /// Optional display name.
    #[serde(default)]
    pub title: Option<String>,
    /// This version, e.g. `1.0.2`.
    pub version: String,
    /// Optional homepage.
    #[serde(default)]
    pub website_url: Option<String>,
    /// Source repository.
    #[serde(default)]
    pub repository: Option<Repository>,
    /// Installable packages.
    #[serde(default)]
    pub packages: Vec<Package>,
    /// Hosted endpoints.
    #[serde(default)]
    pub remotes: Vec<Transport>,
}

/// `Repository`.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct Repository {
    /// Browsable URL.
    #[serde(default)]
    pub url: Option<String>,
    /// Hosting service (`github`…).
    #[serde(default)]
    pub source: Option<String>,
}

/// `Package`: one way to run the server locally.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Package {
    /// `npm`, `pypi`, `oci`, `nuget`, `mcpb`, `cargo`…
    pub registry_type: String,
    /// Base URL of the package registry.
    #[serde(default)]
    pub registry_base_url: Option<String>,
    /// Package name (or image reference for `oci`).
    pub identifier: String,
    /// An exact package version (never `latest`).
    #[serde(default)]
    pub version: Option<String>,
    /// `npx`, `uvx`, `docker`, `dnx`…
    #[serde(default)]
    pub runtime_hint: Option<String>,
    /// How the package talks: `stdio` (or a local HTTP endpoint).
    #[serde(default)]
    pub transport: Option<Transport>,
    /// Arguments for the runtime command (`docker`, `npx`…).
    #[serde(default)]
    pub runtime_arguments: Vec<Argument>,
    /// Arguments for the package's binary.
    #[serde(default)]
    pub package_arguments: Vec<Argument>,
    /// Environment variables of the server process.
    #[serde(default)]
    pub environment_variables: Vec<KeyValueInput>,
}

/// `StdioTransport` / `StreamableHttpTransport` / `SseTransport` (and `RemoteTransport`).
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct Transport {
    /// `stdio`, `streamable-http` or `sse`.
    #[serde(rename = "type")]
    pub kind: String,
    /// URL template (HTTP transports).
    #[serde(default)]
    pub url: Option<String>,
    /// HTTP headers.
    #[serde(default)]
    pub headers: Vec<KeyValueInput>,
    /// Variables of the URL template (remotes).
    #[serde(default)]
    pub variables: BTreeMap<String, Input>,
}

/// `Input`: a value the user may be asked for.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Input {
    /// Shown next to the field.
    #[serde(default)]
    pub description: Option<String>,
    /// Whether a value must be given.
    #[serde(default)]
    pub is_required: bool,
    /// `string` (default), `number`, `boolean` or `filepath`.
    #[serde(default)]
    pub format: Option<String>,
    /// A fixed value (not configurable), with `{var}` references to `variables`.
    #[serde(default)]
    pub value: Option<String>,
    /// A password/token: stored in the keychain, never in the file.
    #[serde(default)]
    pub is_secret: bool,
    /// Default value.
    #[serde(default)]
    pub default: Option<String>,
    /// Example text for the field.
    #[serde(default)]
    pub placeholder: Option<String>,
    /// Allowed values.
    #[serde(default)]
    pub choices: Vec<String>,
    /// Inputs referenced as `{name}` in `value`.
    #[serde(default)]
    pub variables: BTreeMap<String, Input>,
}

/// `KeyValueInput`: an environment variable or header.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct KeyValueInput {
    /// Variable or header name.
    pub name: String,
    /// The input.
    #[serde(flatten)]
    pub input: Input,
}

/// `Argument`: `PositionalArgument` or `NamedArgument`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Argument {
    /// `positional` or `named`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The flag, dashes included (named arguments).
    #[serde(default)]
    pub name: Option<String>,
    /// Label of a positional argument.
    #[serde(default)]
    pub value_hint: Option<String>,
    /// Whether the argument may repeat (a value list is not supported: one occurrence).
    #[serde(default)]
    pub is_repeated: bool,
    /// The input.
    #[serde(flatten)]
    pub input: Input,
}
