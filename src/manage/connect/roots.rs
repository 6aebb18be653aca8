//! The places `connect` builds client config paths from: the operating system ([`Os`], this
//! one or another for `--os` previews) and its directories ([`Roots`]: this machine's, or
//! symbolic ones such as `~` and `%APPDATA%` for a preview).

use std::path::PathBuf;

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
    /// `$XDG_CONFIG_HOME` (Zed on Linux, opencode), when set.
    pub xdg_config: Option<PathBuf>,
    /// `$CLAUDE_CONFIG_DIR`, when set: Claude Code keeps `.claude.json` there instead of home.
    pub claude_config_dir: Option<PathBuf>,
    /// `$OPENCODE_CONFIG`, when set: the file opencode reads.
    pub opencode_config: Option<PathBuf>,
}

impl Roots {
    /// This machine's directories.
    pub fn current() -> Option<Roots> {
        Some(Roots {
            home: dirs::home_dir()?,
            config: dirs::config_dir()?,
            codex_home: dir_var("CODEX_HOME"),
            xdg_config: dir_var("XDG_CONFIG_HOME"),
            claude_config_dir: dir_var("CLAUDE_CONFIG_DIR"),
            opencode_config: dir_var("OPENCODE_CONFIG"),
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
            claude_config_dir: None,
            opencode_config: None,
        }
    }
}

/// The path in the environment variable `name`, when it is set to an absolute path: an empty
/// value means unset (as the clients read it), and a relative one would name a file under
/// whatever directory `connect` runs in.
fn dir_var(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}
