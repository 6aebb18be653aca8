//! The built-in catalogue of installable servers (DESIGN §2 `presets`) and turning a preset plus
//! the user's inputs into a `mcpServers` entry.
//!
//! A preset is data: a launcher (`npx`/`uvx` package, or a remote URL), and the inputs the user
//! must (or may) give. Each input says where its value goes — an environment variable, an HTTP
//! header, or an extra argument — and whether it is a secret (the window masks it). Values are
//! written into the entry as given: a user who prefers `${GITHUB_TOKEN}` over the literal token
//! types that, and expansion happens at connect time like any other entry.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | the preset types, [`catalogue`], [`find`], [`instantiate`] |
//! | `builtin.rs` | the presets themselves, one table of data in display order |

mod builtin;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value, json};

use builtin::PRESETS;

/// Where an input's value is written in the entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "camelCase")]
pub enum InputTarget {
    /// `env[NAME] = value` (stdio servers).
    Env(&'static str),
    /// `headers[NAME] = value` (remote servers); see [`PresetInput::prefix`].
    Header(&'static str),
    /// Appended to `args` after the preset's own arguments, in declaration order.
    Arg,
}

/// One value the user supplies when adding a preset.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PresetInput {
    /// Key in the inputs map passed to [`instantiate`].
    pub key: &'static str,
    /// Form label.
    pub label: &'static str,
    /// One line of help under the field.
    pub help: &'static str,
    /// Where the value goes.
    pub target: InputTarget,
    /// Whether the value is a secret (token, API key): masked in the window.
    pub secret: bool,
    /// Whether the preset cannot run without it.
    pub required: bool,
    /// Text put before the value (`"Bearer "` for an `Authorization` header).
    pub prefix: &'static str,
}

/// How a preset's server is reached.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Launcher {
    /// A local process: `command` with `args`.
    Stdio {
        /// Program (looked up on `PATH`), e.g. `npx` or `uvx`.
        command: &'static str,
        /// Its arguments, before any [`InputTarget::Arg`] values.
        args: &'static [&'static str],
    },
    /// A remote streamable-HTTP endpoint.
    StreamableHttp {
        /// The endpoint URL.
        url: &'static str,
    },
}

/// One installable server of the catalogue.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Preset {
    /// Stable id, also the suggested server name.
    pub id: &'static str,
    /// Display name.
    pub title: &'static str,
    /// What it does, one sentence.
    pub description: &'static str,
    /// Where its documentation lives.
    pub docs_url: &'static str,
    /// How it is launched or reached.
    pub launcher: Launcher,
    /// What the user fills in.
    pub inputs: &'static [PresetInput],
}

/// Why a preset could not be turned into an entry.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PresetError {
    /// No preset has that id.
    #[error("no preset named \"{id}\"")]
    UnknownPreset {
        /// The id asked for.
        id: String,
    },
    /// A required input is missing or blank.
    #[error("preset \"{preset}\": \"{input}\" is required")]
    MissingInput {
        /// The preset.
        preset: String,
        /// The input's key.
        input: String,
    },
}

/// Every preset, in display order.
pub fn catalogue() -> &'static [Preset] {
    PRESETS
}

/// The preset with this id.
pub fn find(id: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.id == id)
}

/// The `mcpServers` entry for preset `id` with the user's `inputs` (by [`PresetInput::key`]).
///
/// Values are trimmed; a blank optional input is left out; unknown keys are ignored. The entry
/// always has an explicit `type`.
///
/// # Errors
/// [`PresetError::UnknownPreset`], or [`PresetError::MissingInput`] for the first required input
/// that is absent or blank.
pub fn instantiate(id: &str, inputs: &BTreeMap<String, String>) -> Result<Value, PresetError> {
    let preset = find(id).ok_or_else(|| PresetError::UnknownPreset { id: id.to_owned() })?;
    let mut env = Map::new();
    let mut headers = Map::new();
    let mut extra_args = Vec::new();
    for spec in preset.inputs {
        let value = inputs.get(spec.key).map_or("", |v| v.trim());
        if value.is_empty() {
            if spec.required {
                return Err(PresetError::MissingInput {
                    preset: id.to_owned(),
                    input: spec.key.to_owned(),
                });
            }
            continue;
        }
        let value = format!("{}{value}", spec.prefix);
        match spec.target {
            InputTarget::Env(name) => {
                env.insert(name.to_owned(), Value::String(value));
            }
            InputTarget::Header(name) => {
                headers.insert(name.to_owned(), Value::String(value));
            }
            InputTarget::Arg => extra_args.push(Value::String(value)),
        }
    }
    let mut entry = match &preset.launcher {
        Launcher::Stdio { command, args } => {
            let mut all: Vec<Value> = args.iter().map(|a| json!(a)).collect();
            all.extend(extra_args);
            json!({"type": "stdio", "command": command, "args": all})
        }
        Launcher::StreamableHttp { url } => json!({"type": "streamableHttp", "url": url}),
    };
    if let Some(obj) = entry.as_object_mut() {
        if !env.is_empty() {
            obj.insert("env".into(), Value::Object(env));
        }
        if !headers.is_empty() {
            obj.insert("headers".into(), Value::Object(headers));
        }
    }
    Ok(entry)
}
