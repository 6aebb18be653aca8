//! The MCP clients we can connect, where each keeps its config on each OS, and the entry each
//! expects.
//!
//! | client | file | servers under | entry |
//! |---|---|---|---|
//! | Claude Desktop | `<config>/Claude/claude_desktop_config.json` | `mcpServers` | `command`, `args` |
//! | Claude Code (user scope) | `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json`) | `mcpServers` | `type: stdio`, `command`, `args` |
//! | Cursor | `~/.cursor/mcp.json` | `mcpServers` | `command`, `args` |
//! | VS Code (user) | `<config>/Code/User/mcp.json` | `servers` | `type: stdio`, `command`, `args` |
//! | Windsurf | `~/.codeium/windsurf/mcp_config.json` | `mcpServers` | `command`, `args` |
//! | Codex CLI | `~/.codex/config.toml` (`$CODEX_HOME`) | `[mcp_servers.<name>]` | `command`, `args` |
//! | Zed | `~/.config/zed/settings.json` (Windows: `%APPDATA%\Zed\settings.json`) | `context_servers` | `source: custom`, `command`, `args` |
//! | nanobot | `~/.nanobot/config.json` | `tools.mcpServers` | `command`, `args` |
//! | Gemini CLI | `~/.gemini/settings.json` | `mcpServers` | `command`, `args` |
//! | opencode | `~/.config/opencode/opencode.json` (`$XDG_CONFIG_HOME`, or the file `$OPENCODE_CONFIG`) | `mcp` | `type: local`, `command: [exe, "bridge"]`, `enabled` |
//! | Goose | `~/.config/goose/config.yaml` (`$XDG_CONFIG_HOME`; Windows `%APPDATA%\Block\goose\config\config.yaml`) | `extensions` (YAML map, [`super::goose`]) | `name`, `type: stdio`, `cmd`, `args`, `enabled: true`, `timeout` |
//! | LM Studio | `~/.lmstudio/mcp.json` | `mcpServers` | `command`, `args` |
//! | Cline (VS Code extension) | `<config>/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json` | `mcpServers` | `command`, `args` |
//! | Continue | `~/.continue/mcpServers/mcp-companion.json`, a file of our own | `mcpServers` | `command`, `args` |
//! | JetBrains Junie | `~/.junie/mcp/mcp.json` | `mcpServers` | `command`, `args` |
//!
//! `<config>` is `~/.config` on Linux, `~/Library/Application Support` on macOS and
//! `%APPDATA%` on Windows.
//!
//! Sources for the clients added last (checked 2026-12-05): Goose's "Configuration Files"
//! guide (block.github.io/goose/docs/guides/config-files: the file per OS, `extensions`) and
//! its entries as Goose writes them (`name`, `cmd`, `args`, `enabled`, `envs`, `type: stdio`,
//! `timeout`); LM Studio's "Use MCP Servers" page (lmstudio.ai/docs/app/mcp: `mcp.json`,
//! "follows Cursor's notation") and its bug tracker #1371 (`~/.lmstudio/mcp.json` on every OS);
//! Cline's `cline_mcp_settings.json` in VS Code's `globalStorage` of the extension
//! `saoudrizwan.claude-dev` (the path its MCP panel opens); Continue's `loadJsonMcpConfigs`
//! (core/context/mcp/json: it reads `*.json` in the global `~/.continue/mcpServers/` and in a
//! workspace's, Claude Desktop's shape accepted) — a file of our own, so no person's YAML is
//! edited; Junie's CLI MCP page (junie.jetbrains.com/docs/junie-cli-mcp-configuration.html:
//! `~/.junie/mcp/mcp.json`, `mcpServers`). JetBrains AI Assistant keeps its servers in the
//! IDE's settings (Settings | Tools | AI Assistant | Model Context Protocol), no file we can
//! edit: `connect jetbrains` prints the JSON to paste ([`PASTE_ONLY`]).

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Value, json};

use super::roots::{Os, Roots};

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
    /// Google's Gemini CLI, user settings.
    Gemini,
    /// opencode, global config.
    Opencode,
    /// Block's Goose, `config.yaml`.
    Goose,
    /// LM Studio.
    LmStudio,
    /// Cline, the VS Code extension.
    Cline,
    /// Continue (VS Code and JetBrains extension), a server file of our own.
    Continue,
    /// JetBrains Junie, user scope.
    Junie,
}

/// A client with no config file we can edit: its id, its name, and where the person pastes
/// the entry.
pub const PASTE_ONLY: [(&str, &str, &str); 1] = [(
    "jetbrains",
    "JetBrains AI Assistant",
    "Settings | Tools | AI Assistant | Model Context Protocol (MCP) | Add, then \"As JSON\"",
)];

/// Every client, in display order.
pub const ALL: [Client; 15] = [
    Client::ClaudeDesktop,
    Client::ClaudeCode,
    Client::Cursor,
    Client::Vscode,
    Client::Windsurf,
    Client::Codex,
    Client::Zed,
    Client::Nanobot,
    Client::Gemini,
    Client::Opencode,
    Client::Goose,
    Client::LmStudio,
    Client::Cline,
    Client::Continue,
    Client::Junie,
];

/// The file format of a client's config.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// JSON or JSONC, servers in the object at this key path.
    Json(&'static [&'static str]),
    /// Codex's TOML, `[mcp_servers.<name>]`.
    CodexToml,
    /// Goose's YAML, `extensions.<name>`.
    GooseYaml,
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
            Client::Gemini => "gemini",
            Client::Opencode => "opencode",
            Client::Goose => "goose",
            Client::LmStudio => "lmstudio",
            Client::Cline => "cline",
            Client::Continue => "continue",
            Client::Junie => "junie",
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
            Client::Gemini => "Gemini CLI",
            Client::Opencode => "opencode",
            Client::Goose => "Goose",
            Client::LmStudio => "LM Studio",
            Client::Cline => "Cline",
            Client::Continue => "Continue",
            Client::Junie => "JetBrains Junie",
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
            Client::Opencode => Format::Json(&["mcp"]),
            Client::Codex => Format::CodexToml,
            Client::Goose => Format::GooseYaml,
            _ => Format::Json(&["mcpServers"]),
        }
    }

    /// Whether the whole file is ours (Continue reads every file in its `mcpServers`
    /// directory): `disconnect` deletes it once our entry was all it held.
    pub fn own_file(self) -> bool {
        self == Client::Continue
    }

    /// The config file on `os` given `roots`.
    pub fn path(self, os: Os, roots: &Roots) -> PathBuf {
        let home = &roots.home;
        match self {
            Client::ClaudeDesktop => roots
                .config
                .join("Claude")
                .join("claude_desktop_config.json"),
            Client::ClaudeCode => roots
                .claude_config_dir
                .as_deref()
                .unwrap_or(home)
                .join(".claude.json"),
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
            Client::Gemini => home.join(".gemini").join("settings.json"),
            // opencode finds its directory through XDG on every OS (on Windows too).
            Client::Opencode => roots.opencode_config.clone().unwrap_or_else(|| {
                roots
                    .xdg_config
                    .clone()
                    .unwrap_or_else(|| home.join(".config"))
                    .join("opencode")
                    .join("opencode.json")
            }),
            Client::Goose => match os {
                Os::Windows => roots
                    .config
                    .join("Block")
                    .join("goose")
                    .join("config")
                    .join("config.yaml"),
                _ => roots
                    .xdg_config
                    .clone()
                    .unwrap_or_else(|| home.join(".config"))
                    .join("goose")
                    .join("config.yaml"),
            },
            Client::LmStudio => home.join(".lmstudio").join("mcp.json"),
            Client::Cline => roots
                .config
                .join("Code")
                .join("User")
                .join("globalStorage")
                .join("saoudrizwan.claude-dev")
                .join("settings")
                .join("cline_mcp_settings.json"),
            Client::Continue => home
                .join(".continue")
                .join("mcpServers")
                .join("mcp-companion.json"),
            Client::Junie => home.join(".junie").join("mcp").join("mcp.json"),
        }
    }

    /// The directory whose presence means the client is installed (or its file exists).
    pub fn marker(self, path: &Path, roots: &Roots) -> PathBuf {
        match self {
            // `~/.claude.json` sits in the home directory, so its marker is `~/.claude`; under
            // `$CLAUDE_CONFIG_DIR` the directory itself is the marker.
            Client::ClaudeCode if roots.claude_config_dir.is_none() => {
                path.with_file_name(".claude")
            }
            // `~/.continue`, `~/.junie`, the extension's storage: the directory the client
            // makes, not the one our file sits in.
            Client::Continue | Client::Junie => roots.home.join(match self {
                Client::Continue => ".continue",
                _ => ".junie",
            }),
            Client::Cline => path
                .ancestors()
                .nth(2)
                .map(Path::to_path_buf)
                .unwrap_or_default(),
            _ => path.parent().map(Path::to_path_buf).unwrap_or_default(),
        }
    }

    /// What the person must know to use the companion's tools from this client once the entry
    /// is written: the client's own permission gate, where it has one that hides or blocks
    /// tools by default.
    pub fn note(self) -> Option<&'static str> {
        match self {
            Client::Gemini => Some(
                "Gemini CLI starts MCP servers only in folders you trust (it asks when it first \
                 opens one), asks before each tool of a server it does not trust, and in \
                 headless mode (gemini -p) gives its model none of them: run it with --yolo, or \
                 add \"trust\": true to the \"mcp-companion\" entry to trust every tool the \
                 companion serves",
            ),
            Client::ClaudeCode => Some(
                "in headless mode (claude -p) Claude Code runs only allowed tools: pass \
                 --allowedTools mcp__mcp-companion (all of the companion's tools) or name them \
                 one by one",
            ),
            Client::Cline => Some(
                "Cline asks before each tool call unless the tool is in the entry's \
                 \"autoApprove\" list (its MCP Servers panel sets it)",
            ),
            Client::Goose => Some(
                "Goose asks before tool calls in its \"approve\" and \"smart_approve\" modes \
                 (GOOSE_MODE); \"auto\" runs them",
            ),
            Client::Continue => Some("Continue offers MCP tools in agent mode only"),
            Client::Junie => Some(
                "Junie asks before each MCP tool call unless the command is on its Action \
                 Allowlist",
            ),
            _ => None,
        }
    }

    /// The entry that runs `exe bridge` in this client's format.
    pub fn entry(self, exe: &str) -> Value {
        self.entry_with(exe, &["bridge"])
    }

    /// The entry that runs `exe` with `args` in this client's format.
    pub fn entry_with(self, exe: &str, args: &[&str]) -> Value {
        match self {
            Client::ClaudeCode | Client::Vscode => {
                json!({"type": "stdio", "command": exe, "args": args})
            }
            Client::Zed => json!({"source": "custom", "command": exe, "args": args}),
            // opencode's schema has no `args` and refuses unknown keys: the command is an array.
            Client::Opencode => {
                let mut command = vec![exe];
                command.extend_from_slice(args);
                json!({"type": "local", "command": command, "enabled": true})
            }
            Client::Goose => json!({
                "name": super::ENTRY_NAME,
                "type": "stdio",
                "cmd": exe,
                "args": args,
                "enabled": true,
                "timeout": super::goose::TIMEOUT_SECS,
            }),
            _ => json!({"command": exe, "args": args}),
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
            "gemini ~/.gemini/settings.json",
            "gemini %USERPROFILE%/.gemini/settings.json",
            "opencode ~/.config/opencode/opencode.json",
            "opencode %USERPROFILE%/.config/opencode/opencode.json",
            "goose ~/.config/goose/config.yaml",
            "goose %APPDATA%/Block/goose/config/config.yaml",
            "lmstudio %USERPROFILE%/.lmstudio/mcp.json",
            "cline ~/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
            "cline %APPDATA%/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
            "continue ~/.continue/mcpServers/mcp-companion.json",
            "junie ~/.junie/mcp/mcp.json",
        ] {
            assert!(text.contains(want), "{want} missing from\n{text}");
        }
        assert_eq!(Client::from_id("vscode"), Some(Client::Vscode));
    }

    #[test]
    fn the_clients_own_directory_variables_move_their_files() {
        let mut roots = Roots::symbolic(Os::Linux);
        roots.claude_config_dir = Some("/work/claude-work".into());
        roots.opencode_config = Some("/work/oc.json".into());
        let claude = Client::ClaudeCode.path(Os::Linux, &roots);
        assert_eq!(claude, Path::new("/work/claude-work/.claude.json"));
        assert_eq!(
            Client::ClaudeCode.marker(&claude, &roots),
            Path::new("/work/claude-work")
        );
        assert_eq!(
            Client::Opencode.path(Os::Linux, &roots),
            Path::new("/work/oc.json")
        );
        roots.opencode_config = None;
        roots.xdg_config = Some("/xdg".into());
        assert_eq!(
            Client::Opencode.path(Os::Linux, &roots),
            Path::new("/xdg/opencode/opencode.json")
        );
        let home = Roots::symbolic(Os::Linux);
        let claude = Client::ClaudeCode.path(Os::Linux, &home);
        assert_eq!(
            Client::ClaudeCode.marker(&claude, &home),
            Path::new("~/.claude")
        );
    }
}
