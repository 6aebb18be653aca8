//! The clients whose config files `import` reads: what each is called, where its file lives
//! on this OS, and which one a file belongs to when nobody says.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

/// An MCP client whose config we can read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ClientKind {
    /// Claude Desktop (`mcpServers`).
    ClaudeDesktop,
    /// Cursor (`mcpServers`).
    Cursor,
    /// VS Code (`servers`, or `mcp.servers` in `settings.json`).
    VsCode,
    /// nanobot (`tools.mcpServers`).
    Nanobot,
}

impl ClientKind {
    /// How `import` reads the config file of `client` (what `connect --import` imports), or
    /// `None` for a client whose file it does not read yet.
    pub fn of(client: crate::manage::connect::Client) -> Option<ClientKind> {
        use crate::manage::connect::Client;
        match client {
            Client::Vscode => Some(ClientKind::VsCode),
            Client::Nanobot => Some(ClientKind::Nanobot),
            Client::Cursor => Some(ClientKind::Cursor),
            Client::ClaudeDesktop | Client::ClaudeCode | Client::Windsurf => {
                Some(ClientKind::ClaudeDesktop)
            }
            Client::Codex
            | Client::Zed
            | Client::Gemini
            | Client::Opencode
            | Client::Goose
            | Client::LmStudio
            | Client::Cline
            | Client::Continue
            | Client::Junie => None,
        }
    }

    /// Display name.
    pub fn label(self) -> &'static str {
        match self {
            ClientKind::ClaudeDesktop => "Claude Desktop",
            ClientKind::Cursor => "Cursor",
            ClientKind::VsCode => "VS Code",
            ClientKind::Nanobot => "nanobot",
        }
    }
}

/// A config file of another client at its standard path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceFile {
    /// Whose file.
    pub client: ClientKind,
    /// Where.
    pub path: PathBuf,
    /// Whether it exists now.
    pub exists: bool,
}

/// The standard config paths of every supported client on this OS, each marked as existing or
/// not.
pub fn standard_sources() -> Vec<SourceFile> {
    standard_paths(dirs::home_dir().as_deref(), dirs::config_dir().as_deref())
        .into_iter()
        .map(|(client, path)| SourceFile {
            client,
            exists: path.is_file(),
            path,
        })
        .collect()
}

/// The standard paths given the home and OS config directories (pure, for tests).
pub fn standard_paths(
    home: Option<&Path>,
    config_dir: Option<&Path>,
) -> Vec<(ClientKind, PathBuf)> {
    let mut out = Vec::new();
    if let Some(c) = config_dir {
        out.push((
            ClientKind::ClaudeDesktop,
            c.join("Claude").join("claude_desktop_config.json"),
        ));
    }
    if let Some(h) = home {
        out.push((ClientKind::Cursor, h.join(".cursor").join("mcp.json")));
    }
    if let Some(c) = config_dir {
        let user = c.join("Code").join("User");
        out.push((ClientKind::VsCode, user.join("mcp.json")));
        out.push((ClientKind::VsCode, user.join("settings.json")));
    }
    if let Some(h) = home {
        out.push((ClientKind::Nanobot, h.join(".nanobot").join("config.json")));
    }
    out
}

/// Guesses the client from a file's name and content: `tools.mcpServers` → nanobot,
/// `servers`/`mcp.servers` → VS Code, a path under `.cursor` → Cursor, else Claude Desktop.
pub fn detect_client(path: &Path, doc: &Value) -> ClientKind {
    if doc.pointer("/tools/mcpServers").is_some() {
        ClientKind::Nanobot
    } else if doc.get("servers").is_some() || doc.pointer("/mcp/servers").is_some() {
        ClientKind::VsCode
    } else if path.components().any(|c| c.as_os_str() == ".cursor") {
        ClientKind::Cursor
    } else {
        ClientKind::ClaudeDesktop
    }
}
