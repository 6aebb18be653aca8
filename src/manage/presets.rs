//! The built-in catalogue of installable servers (DESIGN §2 `presets`) and turning a preset plus
//! the user's inputs into a `mcpServers` entry.
//!
//! A preset is data: a launcher (`npx`/`uvx` package, or a remote URL), and the inputs the user
//! must (or may) give. Each input says where its value goes — an environment variable, an HTTP
//! header, or an extra argument — and whether it is a secret (the window masks it). Values are
//! written into the entry as given: a user who prefers `${GITHUB_TOKEN}` over the literal token
//! types that, and expansion happens at connect time like any other entry.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value, json};

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

const fn input(
    key: &'static str,
    label: &'static str,
    help: &'static str,
    target: InputTarget,
    secret: bool,
) -> PresetInput {
    PresetInput {
        key,
        label,
        help,
        target,
        secret,
        required: true,
        prefix: "",
    }
}

const fn npx(args: &'static [&'static str]) -> Launcher {
    Launcher::Stdio {
        command: "npx",
        args,
    }
}

const fn uvx(args: &'static [&'static str]) -> Launcher {
    Launcher::Stdio {
        command: "uvx",
        args,
    }
}

static PRESETS: &[Preset] = &[
    Preset {
        id: "filesystem",
        title: "Filesystem",
        description: "Read, write and search files under the directories you allow",
        docs_url: "https://github.com/modelcontextprotocol/servers/tree/main/src/filesystem",
        launcher: npx(&["-y", "@modelcontextprotocol/server-filesystem"]),
        inputs: &[input(
            "directory",
            "Allowed directory",
            "Absolute path the server may access",
            InputTarget::Arg,
            false,
        )],
    },
    Preset {
        id: "memory",
        title: "Memory",
        description: "A knowledge-graph memory that persists across sessions",
        docs_url: "https://github.com/modelcontextprotocol/servers/tree/main/src/memory",
        launcher: npx(&["-y", "@modelcontextprotocol/server-memory"]),
        inputs: &[],
    },
    Preset {
        id: "fetch",
        title: "Fetch",
        description: "Fetch a web page and return it as Markdown",
        docs_url: "https://github.com/modelcontextprotocol/servers/tree/main/src/fetch",
        launcher: uvx(&["mcp-server-fetch"]),
        inputs: &[],
    },
    Preset {
        id: "time",
        title: "Time",
        description: "Current time and time-zone conversion",
        docs_url: "https://github.com/modelcontextprotocol/servers/tree/main/src/time",
        launcher: uvx(&["mcp-server-time"]),
        inputs: &[],
    },
    Preset {
        id: "git",
        title: "Git",
        description: "Read, search and edit a local Git repository",
        docs_url: "https://github.com/modelcontextprotocol/servers/tree/main/src/git",
        launcher: uvx(&["mcp-server-git", "--repository"]),
        inputs: &[input(
            "repository",
            "Repository path",
            "Absolute path of a Git working tree",
            InputTarget::Arg,
            false,
        )],
    },
    Preset {
        id: "everything",
        title: "Everything",
        description: "The MCP reference test server: tools, resources, prompts, sampling",
        docs_url: "https://github.com/modelcontextprotocol/servers/tree/main/src/everything",
        launcher: npx(&["-y", "@modelcontextprotocol/server-everything"]),
        inputs: &[],
    },
    Preset {
        id: "sequential-thinking",
        title: "Sequential thinking",
        description: "Structured, revisable step-by-step reasoning",
        docs_url: "https://github.com/modelcontextprotocol/servers/tree/main/src/sequentialthinking",
        launcher: npx(&["-y", "@modelcontextprotocol/server-sequential-thinking"]),
        inputs: &[],
    },
    Preset {
        id: "github",
        title: "GitHub",
        description: "Repositories, issues and pull requests through the GitHub API",
        docs_url: "https://github.com/github/github-mcp-server",
        launcher: npx(&["-y", "@modelcontextprotocol/server-github"]),
        inputs: &[input(
            "token",
            "Personal access token",
            "A GitHub token (or ${VAR} to read it from the environment)",
            InputTarget::Env("GITHUB_PERSONAL_ACCESS_TOKEN"),
            true,
        )],
    },
    Preset {
        id: "brave-search",
        title: "Brave Search",
        description: "Web and local search through the Brave Search API",
        docs_url: "https://github.com/brave/brave-search-mcp-server",
        launcher: npx(&["-y", "@modelcontextprotocol/server-brave-search"]),
        inputs: &[input(
            "apiKey",
            "API key",
            "Brave Search API key",
            InputTarget::Env("BRAVE_API_KEY"),
            true,
        )],
    },
    Preset {
        id: "playwright",
        title: "Playwright",
        description: "Drive a real browser: navigate, click, fill forms, take snapshots",
        docs_url: "https://github.com/microsoft/playwright-mcp",
        launcher: npx(&["-y", "@playwright/mcp@latest"]),
        inputs: &[],
    },
    Preset {
        id: "context7",
        title: "Context7",
        description: "Up-to-date library documentation and code examples",
        docs_url: "https://github.com/upstash/context7",
        launcher: npx(&["-y", "@upstash/context7-mcp"]),
        inputs: &[PresetInput {
            required: false,
            ..input(
                "apiKey",
                "API key (optional)",
                "Raises the rate limit; leave empty to use the free tier",
                InputTarget::Env("CONTEXT7_API_KEY"),
                true,
            )
        }],
    },
    Preset {
        id: "deepwiki",
        title: "DeepWiki (remote)",
        description: "Ask questions about public GitHub repositories; a remote streamable-HTTP server",
        docs_url: "https://docs.devin.ai/work-with-devin/deepwiki-mcp",
        launcher: Launcher::StreamableHttp {
            url: "https://mcp.deepwiki.com/mcp",
        },
        inputs: &[],
    },
    Preset {
        id: "github-remote",
        title: "GitHub (remote)",
        description: "GitHub's hosted MCP server over streamable HTTP",
        docs_url: "https://github.com/github/github-mcp-server",
        launcher: Launcher::StreamableHttp {
            url: "https://api.githubcopilot.com/mcp/",
        },
        inputs: &[PresetInput {
            prefix: "Bearer ",
            ..input(
                "token",
                "Personal access token",
                "Sent as the Authorization header",
                InputTarget::Header("Authorization"),
                true,
            )
        }],
    },
];

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

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn catalogue_has_the_required_presets_each_with_docs_and_unique_ids() {
        let required = [
            "filesystem",
            "memory",
            "fetch",
            "time",
            "git",
            "everything",
            "sequential-thinking",
            "github",
            "brave-search",
            "playwright",
            "context7",
        ];
        for id in required {
            assert!(find(id).is_some(), "{id}");
        }
        assert!(
            catalogue()
                .iter()
                .any(|p| matches!(p.launcher, Launcher::StreamableHttp { .. }))
        );
        let mut ids: Vec<_> = catalogue().iter().map(|p| p.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), catalogue().len());
        for p in catalogue() {
            assert!(p.docs_url.starts_with("https://"), "{}", p.id);
        }
    }

    #[test]
    fn every_preset_instantiates_to_an_entry_the_config_accepts() {
        for p in catalogue() {
            let given = p
                .inputs
                .iter()
                .map(|i| (i.key, "/tmp/x"))
                .collect::<Vec<_>>();
            let entry = instantiate(p.id, &inputs(&given)).unwrap();
            let doc = json!({"mcpServers": {p.id: entry}});
            let cfg =
                crate::config::parse(&doc.to_string(), std::path::Path::new("t.json")).unwrap();
            assert!(
                cfg.servers[0].entry.is_ok(),
                "{}: {:?}",
                p.id,
                cfg.servers[0]
            );
        }
    }

    #[test]
    fn inputs_land_in_env_headers_or_args_as_given() {
        let cases = [
            (
                "time",
                vec![],
                json!({"type": "stdio", "command": "uvx", "args": ["mcp-server-time"]}),
            ),
            (
                "github",
                vec![("token", " ghp_secret ")],
                json!({"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
                       "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_secret"}}),
            ),
            (
                "git",
                vec![("repository", "/src/repo")],
                json!({"type": "stdio", "command": "uvx", "args": ["mcp-server-git", "--repository", "/src/repo"]}),
            ),
            (
                "github-remote",
                vec![("token", "${GH}")],
                json!({"type": "streamableHttp", "url": "https://api.githubcopilot.com/mcp/",
                       "headers": {"Authorization": "Bearer ${GH}"}}),
            ),
            (
                "context7",
                vec![("apiKey", "  ")],
                json!({"type": "stdio", "command": "npx", "args": ["-y", "@upstash/context7-mcp"]}),
            ),
        ];
        for (id, given, want) in cases {
            assert_eq!(instantiate(id, &inputs(&given)).unwrap(), want, "{id}");
        }
    }

    #[test]
    fn missing_required_input_and_unknown_preset_are_errors() {
        assert_eq!(
            instantiate("brave-search", &inputs(&[("apiKey", "")])),
            Err(PresetError::MissingInput {
                preset: "brave-search".into(),
                input: "apiKey".into()
            })
        );
        assert_eq!(
            instantiate("nope", &BTreeMap::new()),
            Err(PresetError::UnknownPreset { id: "nope".into() })
        );
    }
}
