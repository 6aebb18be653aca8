//! Argument types and JSON schemas of the demo tools.
//!
//! Each tool's arguments are a `Deserialize + JsonSchema` struct, so the advertised
//! inputSchema and the parser cannot disagree.

use rmcp::ErrorData as McpError;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// Arguments of `echo`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct EchoArgs {
    /// Text to return unchanged.
    pub(super) message: String,
}

/// Arguments of `touch`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct TouchArgs {
    /// The resource URI to report as updated.
    pub(super) uri: String,
}

/// Arguments of `add`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct AddArgs {
    /// First addend.
    pub(super) a: f64,
    /// Second addend.
    pub(super) b: f64,
}

/// Arguments of `sleep`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct SleepArgs {
    /// How long to sleep, in seconds (fractions allowed).
    pub(super) seconds: f64,
}

/// Arguments of `image`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct ImageArgs {
    /// Width in pixels (1–1024).
    #[serde(default = "default_side")]
    pub(super) width: u32,
    /// Height in pixels (1–1024).
    #[serde(default = "default_side")]
    pub(super) height: u32,
}

pub(super) fn default_side() -> u32 {
    8
}

/// Arguments of `fail`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct FailArgs {
    /// Text of the error result.
    pub(super) message: String,
}

/// Arguments of `protocol_error`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct ProtocolErrorArgs {
    /// JSON-RPC error code to answer with.
    #[serde(default = "default_error_code")]
    pub(super) code: i32,
    /// JSON-RPC error message.
    #[serde(default = "default_error_message")]
    pub(super) message: String,
}

pub(super) fn default_error_code() -> i32 {
    -32042
}

pub(super) fn default_error_message() -> String {
    "demo protocol error".to_owned()
}

/// Arguments of `crash`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct CrashArgs {
    /// Exit code of the process.
    #[serde(default = "default_exit_code")]
    pub(super) exit_code: i32,
    /// A last line to write to stderr before exiting (written as given, control characters
    /// included).
    #[serde(default)]
    pub(super) last_words: Option<String>,
}

/// Arguments of `append`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct AppendArgs {
    /// The file to append to (created when missing).
    pub(super) path: String,
    /// The line to append (a newline is added).
    pub(super) line: String,
    /// How long to wait after appending before answering, in seconds.
    #[serde(default)]
    pub(super) seconds: f64,
}

/// Arguments of `read_slowly`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct ReadSlowlyArgs {
    /// How long to take, in seconds.
    pub(super) seconds: f64,
}

pub(super) fn default_exit_code() -> i32 {
    3
}

/// Arguments of `big`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct BigArgs {
    /// Exact length of the returned text, in bytes.
    pub(super) bytes: u64,
}

/// Arguments of `get_env`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct GetEnvArgs {
    /// Name of the environment variable.
    pub(super) name: String,
}

/// Deserialises tool arguments; an absent object counts as `{}`.
pub(super) fn parse<T: DeserializeOwned>(args: Option<JsonObject>) -> Result<T, McpError> {
    serde_json::from_value(serde_json::Value::Object(args.unwrap_or_default()))
        .map_err(|e| McpError::invalid_params(format!("invalid arguments: {e}"), None))
}

pub(super) fn empty_schema() -> JsonObject {
    object(serde_json::json!({ "type": "object", "properties": {} }))
}

pub(super) fn sum_schema() -> JsonObject {
    object(serde_json::json!({
        "type": "object",
        "properties": { "sum": { "type": "number", "description": "a + b" } },
        "required": ["sum"]
    }))
}

pub(super) fn generated_schema() -> JsonObject {
    object(serde_json::json!({
        "type": "object",
        "properties": {
            "input": { "type": "string", "description": "Ignored; present to look realistic" }
        }
    }))
}

fn object(value: serde_json::Value) -> JsonObject {
    match value {
        serde_json::Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}
