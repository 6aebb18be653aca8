//! The MCP clients we can connect, where each keeps its config on each OS, and the entry each
//! expects.
//!
//! | client | file | servers under | entry |
//! |---|---|---|---|
//! | Claude Desktop | `<config>/Claude/claude_desktop_config.json` | `mcpServers` | `command`, `args` |
//! | Claude Code (user scope) | `~/.claude.json` | `mcpServers` | `type: stdio`, `command`, `args` |
//! | Cursor | `~/.cursor/mcp.json` | `mcpServers` | `command`, `args` |
//! | VS Code (user) | `<config>/Code/User/mcp.json` | `servers` | `type: stdio`, `command`, `args` |
//! | Windsurf | `~/.codeium/windsurf/mcp_config.json` | `mcpServers` | `command`, `args` |
//! | Codex CLI | `~/.codex/config.toml` (`$CODEX_HOME`) | `[mcp_servers.<name>]` | `command`, `args` |
//! | Zed | `~/.config/zed/settings.json` (Windows: `%APPDATA%\Zed\settings.json`) | `context_servers` | `source: custom`, `command`, `args` |
//! | nanobot | `~/.nanobot/config.json` | `tools.mcpServers` | `command`, `args` |
//!
//! `<config>` is `~/.config` on Linux, `~/Library/Application Support` on macOS and
//! `%APPDATA%` on Windows.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Value, json};

/// A client we can connect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Client {
    /// Claude Desktop.
    ClaudeDesktop,
    /// Claude Code, user scope.
    ClaudeCode,
    /// Cursor.
    Cursor,
    /// VS Code, user `mcp.json`.
    Vscode,
    /// Windsurf.
    Windsurf,
    /// OpenAI Codex CLI.
    Codex,
    /// Zed.
    Zed,
    /// nanobot.
    Nanobot,
}

/// Every client, in display order.
pub const ALL: [Client; 8] = [
    Client::ClaudeDesktop,
    Client::ClaudeCode,
    Client::Cursor,
    Client::Vscode,
    Client::Windsurf,
    Client::Codex,
    Client::Zed,
    Client::Nanobot,
];

/// An operating system, for `--os` previews.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Os {
    /// Linux and other Unixes.
    Linux,
    /// macOS.
    Macos,
    /// Windows.
    Windows,
}

impl Os {
    /// The OS this binary runs on.
    pub fn current() -> Os {
        if cfg!(windows) {
            Os::Windows
        } else if cfg!(target_os = "macos") {
            Os::Macos
        } else {
            Os::Linux
        }
    }

    /// `linux`, `macos` or `windows`.
    pub fn parse(name: &str) -> Option<Os> {
        match name {
            "linux" => Some(Os::Linux),
            "macos" => Some(Os::Macos),
            "windows" => Some(Os::Windows),
            _ => None,
        }
    }
}

/// The directories client paths are built from.
#[derive(Clone, Debug)]
pub struct Roots {
    /// The user's home.
    pub home: PathBuf,
    /// The OS config dir (`~/.config`, `~/Library/Application Support`, `%APPDATA%`).
    pub config: PathBuf,
    /// `$CODEX_HOME`, when set.
    pub codex_home: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME` (Zed on Linux), when set.
    pub xdg_config: Option<PathBuf>,
}

impl Roots {
    /// This machine's directories.
    pub fn current() -> Option<Roots> {
        Some(Roots {
            home: dirs::home_dir()?,
            config: dirs::config_dir()?,
            codex_home: std::env::var_os("CODEX_HOME").map(PathBuf::from),
            xdg_config: std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from),
        })
    }

    /// Symbolic directories of `os` for previews (`~`, `%APPDATA%`…).
    pub fn symbolic(os: Os) -> Roots {
        let (home, config) = match os {
            Os::Linux => ("~", "~/.config"),
            Os::Macos => ("~", "~/Library/Application Support"),
            Os::Windows => ("%USERPROFILE%", "%APPDATA%"),
        };
        Roots {
            home: home.into(),
            config: config.into(),
            codex_home: None,
            xdg_config: None,
        }
    }
}

/// The file format of a client's config.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// JSON or JSONC, servers in the object at this key path.
    Json(&'static [&'static str]),
    /// Codex's TOML, `[mcp_servers.<name>]`.
    CodexToml,
}

impl Client {
    /// The id used on the command line, e.g. `claude-desktop`.
    pub fn id(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "claude-desktop",
            Client::ClaudeCode => "claude-code",
            Client::Cursor => "cursor",
            Client::Vscode => "vscode",
            Client::Windsurf => "windsurf",
            Client::Codex => "codex",
            Client::Zed => "zed",
            Client::Nanobot => "nanobot",
        }
    }

    /// Display name.
    pub fn label(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "Claude Desktop",
            Client::ClaudeCode => "Claude Code",
            Client::Cursor => "Cursor",
            Client::Vscode => "VS Code",
            Client::Windsurf => "Windsurf",
            Client::Codex => "Codex CLI",
            Client::Zed => "Zed",
            Client::Nanobot => "nanobot",
        }
    }

    /// The client with id `id`.
    pub fn from_id(id: &str) -> Option<Client> {
        ALL.into_iter().find(|c| c.id() == id)
    }

    /// Where the servers live in the file.
    pub fn format(self) -> Format {
        match self {
            Client::Vscode => Format::Json(&["servers"]),
            Client::Zed => Format::Json(&["context_servers"]),
            Client::Nanobot => Format::Json(&["tools", "mcpServers"]),
            Client::Codex => Format::CodexToml,
            _ => Format::Json(&["mcpServers"]),
        }
    }

    /// The config file on `os` given `roots`.
    pub fn path(self, os: Os, roots: &Roots) -> PathBuf {
        let home = &roots.home;
        match self {
            Client::ClaudeDesktop => roots
                .config
                .join("Claude")
                .join("claude_desktop_config.json"),
            Client::ClaudeCode => home.join(".claude.json"),
            Client::Cursor => home.join(".cursor").join("mcp.json"),
            Client::Vscode => roots.config.join("Code").join("User").join("mcp.json"),
            Client::Windsurf => home
                .join(".codeium")
                .join("windsurf")
                .join("mcp_config.json"),
            Client::Codex => roots
                .codex_home
                .clone()
                .unwrap_or_else(|| home.join(".codex"))
                .join("config.toml"),
            Client::Zed => match os {
                Os::Windows => roots.config.join("Zed").join("settings.json"),
                _ => roots
                    .xdg_config
                    .clone()
                    .unwrap_or_else(|| home.join(".config"))
                    .join("zed")
                    .join("settings.json"),
            },
            Client::Nanobot => home.join(".nanobot").join("config.json"),
        }
    }

    /// The directory whose presence means the client is installed (or its file exists).
    pub fn marker(self, path: &Path) -> PathBuf {
        match self {
            Client::ClaudeCode => path.with_file_name(".claude"),
            _ => path.parent().map(Path::to_path_buf).unwrap_or_default(),
        }
    }

    /// The entry that runs `exe bridge` in this client's format.
    pub fn entry(self, exe: &str) -> Value {
        match self {
            Client::ClaudeCode | Client::Vscode => {
                json!({"type": "stdio", "command": exe, "args": ["bridge"]})
            }
            Client::Zed => json!({"source": "custom", "command": exe, "args": ["bridge"]}),
            _ => json!({"command": exe, "args": ["bridge"]}),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_client_has_a_standard_path_per_os() {
        let lines: Vec<String> = [Os::Linux, Os::Macos, Os::Windows]
            .into_iter()
            .flat_map(|os| {
                let roots = Roots::symbolic(os);
                ALL.into_iter()
                    .map(move |c| format!("{} {}", c.id(), c.path(os, &roots).display()))
            })
            .collect();
        let text = lines.join("\n").replace('\\', "/");
        for want in [
            "claude-desktop ~/.config/Claude/claude_desktop_config.json",
            "claude-desktop ~/Library/Application Support/Claude/claude_desktop_config.json",
            "claude-desktop %APPDATA%/Claude/claude_desktop_config.json",
            "claude-code ~/.claude.json",
            "cursor %USERPROFILE%/.cursor/mcp.json",
            "vscode ~/Library/Application Support/Code/User/mcp.json",
            "windsurf ~/.codeium/windsurf/mcp_config.json",
            "codex ~/.codex/config.toml",
            "zed ~/.config/zed/settings.json",
            "zed %APPDATA%/Zed/settings.json",
            "nanobot ~/.nanobot/config.json",
        ] {
            assert!(text.contains(want), "{want} missing from\n{text}");
        }
        assert_eq!(Client::from_id("vscode"), Some(Client::Vscode));
    }
}
