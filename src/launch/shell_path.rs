//! PATH for servers launched from a desktop session (DESIGN §7).
//!
//! The problem: an app started from the Dock, a launcher or a tray does not inherit the PATH a
//! terminal has. Its PATH is the session default (`/usr/bin:/bin:/usr/sbin:/sbin` on macOS), so
//! `npx`, `uvx` or anything under Homebrew, nvm, fnm, volta or `~/.local/bin` is missing and the
//! server fails with `spawn npx ENOENT`.
//!
//! The strategy, on macOS and Linux only, and only in GUI mode ([`gui_mode`]):
//! 1. ask the user's login shell once (`$SHELL -l -c`, stdin closed, 3 s limit) for its PATH;
//!    the answer is cached for the life of the process;
//! 2. append the common tool dirs that exist ([`tool_dirs`]);
//! 3. `launch` appends both to the companion's own PATH, so what already worked keeps resolving
//!    the same way and the shell only adds what was missing.
//!
//! Fallbacks: no `SHELL`, a shell that fails, hangs or prints no PATH → the companion's PATH plus
//! the tool dirs, with the reason logged once and shown by `doctor`.
//!
//! Decision: extend rather than replace the companion's PATH. Replacing would follow the
//! terminal's order exactly (say, nvm's `node` before `/usr/bin/node`), but it would change which
//! program runs for every entry that already works, and tests run `serve` with stdin closed, so
//! they would depend on the test machine's login profile. Rejected for that reason; an entry that
//! needs the shell's order sets `env.PATH` itself.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::sync::OnceCell;

/// Overrides GUI-mode detection: `1` forces the login-shell lookup, `0` disables it.
pub const GUI_PATH_VAR: &str = "MCP_COMPANION_GUI_PATH";

/// How long the login shell gets to print its PATH.
pub const SHELL_TIMEOUT: Duration = Duration::from_secs(3);

const START: &str = "__MCPC_PATH_START__";
const END: &str = "__MCPC_PATH_END__";

/// PATH entries found for a GUI launch.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LoginPath {
    /// The shell asked, when there was one.
    pub shell: Option<String>,
    /// The login shell's PATH, split; empty when the lookup failed.
    pub entries: Vec<String>,
    /// Common tool dirs that exist on this machine.
    pub tool_dirs: Vec<String>,
    /// Why the login shell's PATH is missing, when it is.
    pub fallback: Option<String>,
}

/// Why the login shell's PATH could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ShellPathError {
    /// `SHELL` is not set.
    #[error("SHELL is not set")]
    NoShell,
    /// The shell could not be started.
    #[error("cannot start login shell {shell}: {reason}")]
    Spawn {
        /// The shell.
        shell: String,
        /// What the OS said.
        reason: String,
    },
    /// The shell did not answer in time.
    #[error("login shell {shell} did not answer within {} s", timeout.as_secs())]
    Timeout {
        /// The shell.
        shell: String,
        /// The limit.
        timeout: Duration,
    },
    /// The shell answered without the marked PATH (failed, or a profile broke the output).
    #[error("login shell {shell} printed no PATH ({status})")]
    NoPath {
        /// The shell.
        shell: String,
        /// Its exit status.
        status: String,
    },
}

/// Whether this process is a GUI launch: [`GUI_PATH_VAR`] when set to `1` or `0`, else stdin is
/// not a terminal. Always false on Windows, where GUI apps get the user's full PATH.
pub fn gui_mode() -> bool {
    if cfg!(windows) {
        return false;
    }
    match std::env::var(GUI_PATH_VAR).as_deref() {
        Ok("1") => true,
        Ok("0") => false,
        _ => !std::io::IsTerminal::is_terminal(&std::io::stdin()),
    }
}

/// The login shell's PATH plus the tool dirs, looked up on the first call and cached.
pub async fn login_path() -> &'static LoginPath {
    static CACHE: OnceCell<LoginPath> = OnceCell::const_new();
    CACHE
        .get_or_init(|| async {
            let home = dirs::home_dir();
            let var = |k: &str| std::env::var(k).ok();
            let tool_dirs = home
                .as_deref()
                .map(|h| tool_dirs(h, &var))
                .unwrap_or_default()
                .into_iter()
                .map(|p| p.display().to_string())
                .collect();
            let shell = std::env::var("SHELL").ok().filter(|s| !s.is_empty());
            let outcome = match &shell {
                Some(s) => query(s, SHELL_TIMEOUT).await,
                None => Err(ShellPathError::NoShell),
            };
            let (entries, fallback) = match outcome {
                Ok(path) => {
                    tracing::debug!(shell = shell.as_deref(), %path, "login shell PATH");
                    (
                        path.split(':')
                            .filter(|p| !p.is_empty())
                            .map(str::to_owned)
                            .collect(),
                        None,
                    )
                }
                Err(e) => {
                    tracing::warn!(reason = %e, "using the companion's PATH for servers");
                    (Vec::new(), Some(e.to_string()))
                }
            };
            LoginPath {
                shell,
                entries,
                tool_dirs,
                fallback,
            }
        })
        .await
}

/// Runs `shell -l -c` printing `$PATH` between markers, within `timeout`.
///
/// # Errors
/// [`ShellPathError`] when the shell cannot start, hangs, or prints no marked PATH.
pub async fn query(shell: &str, timeout: Duration) -> Result<String, ShellPathError> {
    let script = format!("printf '%s%s%s' '{START}' \"$PATH\" '{END}'");
    let child = tokio::process::Command::new(shell)
        .args(["-l", "-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| ShellPathError::Spawn {
            shell: shell.to_owned(),
            reason: e.to_string(),
        })?;
    let output = tokio::time::timeout(timeout, child.wait_with_output())
        .await
        .map_err(|_| ShellPathError::Timeout {
            shell: shell.to_owned(),
            timeout,
        })?
        .map_err(|e| ShellPathError::Spawn {
            shell: shell.to_owned(),
            reason: e.to_string(),
        })?;
    parse_marked(&String::from_utf8_lossy(&output.stdout)).ok_or_else(|| ShellPathError::NoPath {
        shell: shell.to_owned(),
        status: output.status.to_string(),
    })
}

/// The PATH between the markers, ignoring whatever a profile printed around it.
fn parse_marked(stdout: &str) -> Option<String> {
    let start = stdout.rfind(START)? + START.len();
    let len = stdout[start..].find(END)?;
    let path = stdout[start..start + len].trim();
    (!path.is_empty()).then(|| path.to_owned())
}

/// Common per-user and package-manager bin dirs under `home` that exist, in a fixed order:
/// `~/.local/bin`, `~/.cargo/bin`, Homebrew (`/opt/homebrew/bin`, `/usr/local/bin`, Linuxbrew),
/// the current nvm (`$NVM_BIN`, else `~/.nvm/alias/default`), fnm's and volta's default bins,
/// `~/.bun/bin`.
pub fn tool_dirs(home: &Path, var: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let mut dirs = vec![
        home.join(".local/bin"),
        home.join(".cargo/bin"),
        PathBuf::from("/opt/homebrew/bin"),
        PathBuf::from("/usr/local/bin"),
        PathBuf::from("/home/linuxbrew/.linuxbrew/bin"),
    ];
    if let Some(bin) = var("NVM_BIN") {
        dirs.push(PathBuf::from(bin));
    }
    let nvm = var("NVM_DIR").map_or_else(|| home.join(".nvm"), PathBuf::from);
    if let Ok(alias) = std::fs::read_to_string(nvm.join("alias/default")) {
        let version = alias.trim();
        let version = if version.starts_with('v') {
            version.to_owned()
        } else {
            format!("v{version}")
        };
        dirs.push(nvm.join("versions/node").join(version).join("bin"));
    }
    if let Some(fnm) = var("FNM_DIR") {
        dirs.push(PathBuf::from(fnm).join("aliases/default/bin"));
    }
    dirs.push(home.join(".local/share/fnm/aliases/default/bin"));
    dirs.push(home.join("Library/Application Support/fnm/aliases/default/bin"));
    dirs.push(home.join(".fnm/aliases/default/bin"));
    let volta = var("VOLTA_HOME").map_or_else(|| home.join(".volta"), PathBuf::from);
    dirs.push(volta.join("bin"));
    dirs.push(home.join(".bun/bin"));
    let mut out: Vec<PathBuf> = Vec::new();
    for d in dirs {
        if d.is_dir() && !out.contains(&d) {
            out.push(d);
        }
    }
    out
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn marked_path_is_found_amid_profile_noise() {
        let cases = [
            (format!("{START}/a:/b{END}"), Some("/a:/b")),
            (format!("Welcome!\n{START}/x{END}\nbye"), Some("/x")),
            (format!("{START}{END}"), None),
            ("no markers".to_owned(), None),
            (format!("{START}/unterminated"), None),
        ];
        for (out, want) in cases {
            assert_eq!(parse_marked(&out).as_deref(), want, "{out:?}");
        }
    }

    #[test]
    fn only_existing_tool_dirs_are_listed_in_order() {
        let home = tempfile::tempdir().expect("tempdir");
        let h = home.path();
        for d in [
            ".cargo/bin",
            ".local/bin",
            ".nvm/versions/node/v20.1.0/bin",
            ".volta/bin",
        ] {
            std::fs::create_dir_all(h.join(d)).expect("mkdir");
        }
        std::fs::create_dir_all(h.join(".nvm/alias")).expect("mkdir");
        std::fs::write(h.join(".nvm/alias/default"), "20.1.0\n").expect("alias");
        let got: Vec<PathBuf> = tool_dirs(h, &|_| None)
            .into_iter()
            .filter(|p| p.starts_with(h))
            .collect();
        assert_eq!(
            got,
            vec![
                h.join(".local/bin"),
                h.join(".cargo/bin"),
                h.join(".nvm/versions/node/v20.1.0/bin"),
                h.join(".volta/bin"),
            ]
        );
    }

    #[tokio::test]
    async fn a_real_login_shell_reports_its_path() {
        let path = query("/bin/sh", SHELL_TIMEOUT).await.expect("sh answers");
        assert!(path.contains('/'), "{path}");
    }

    #[tokio::test]
    async fn a_hanging_or_missing_shell_falls_back_with_a_reason() {
        let dir = tempfile::tempdir().expect("tempdir");
        let hang = dir.path().join("hang.sh");
        std::fs::write(&hang, "#!/bin/sh\nsleep 30\n").expect("write");
        std::fs::set_permissions(&hang, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        let started = std::time::Instant::now();
        let err = query(hang.to_str().expect("utf-8"), Duration::from_millis(300))
            .await
            .expect_err("times out");
        assert!(matches!(err, ShellPathError::Timeout { .. }), "{err}");
        assert!(started.elapsed() < Duration::from_secs(5));
        let err = query("/no/such/shell", SHELL_TIMEOUT)
            .await
            .expect_err("missing");
        assert!(
            err.to_string()
                .starts_with("cannot start login shell /no/such/shell")
        );
    }
}
