//! Where the local endpoint lives (DESIGN §10).
//!
//! The problem: `serve` runs from a terminal or a desktop session with a full environment, while
//! `bridge` is spawned by MCP clients that pass only `PATH`, `HOME` and a few more variables. Both
//! must find the same socket. The rule, applied identically by both:
//!
//! 1. `--socket PATH` (or `MCP_COMPANION_SOCKET`) wins;
//! 2. `$XDG_RUNTIME_DIR/mcp-companion/` when that variable is set;
//! 3. `/run/user/<uid>/mcp-companion/` when `/run/user/<uid>` exists (what `XDG_RUNTIME_DIR` would
//!    have been, had the client passed it);
//! 4. `<config dir>/mcp-companion/run/` (from `$XDG_CONFIG_HOME` or `$HOME`).
//!
//! On Windows the endpoint is the named pipe `\\.\pipe\mcp-companion-<user>`.
//!
//! The control socket (`control.sock`) and the single-instance lock (`serve.lock`) sit next to
//! the MCP socket, so one override moves all three.
//!
//! The directories of rules 2–4 are the companion's own ([`SocketDir::Own`]): created with mode
//! 0700, or tightened to it. A directory named with rule 1 is the person's
//! ([`SocketDir::Chosen`]): created 0700 when missing, otherwise used as it is and never
//! chmod-ed, so `--socket ~/mcp.sock` or `--socket /tmp/mcp.sock` leaves the home directory or
//! `/tmp` exactly as they were (the sockets themselves are still 0600 and check their peer).

use std::path::{Path, PathBuf};

/// File name of the MCP socket inside the runtime directory.
pub const MCP_SOCKET_NAME: &str = "mcp.sock";
/// File name of the control socket inside the runtime directory.
pub const CONTROL_SOCKET_NAME: &str = "control.sock";
/// File name of the single-instance lock inside the runtime directory.
pub const LOCK_NAME: &str = "serve.lock";

/// Whose directory the sockets and the lock are in, which decides whether the companion may
/// change its mode ([`crate::ipc::socket::prepare_socket_dir`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SocketDir {
    /// The per-user default directory: the companion's own, made private (mode 0700).
    Own,
    /// The directory of a socket path the person named (`--socket`, `MCP_COMPANION_SOCKET`,
    /// [`EndpointPaths::beside`]): never chmod-ed; refused when another user could replace
    /// the files in it.
    Chosen,
}

/// The three endpoint paths one companion instance uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointPaths {
    /// The MCP endpoint agents connect to (Unix socket path, or pipe name on Windows).
    pub mcp: PathBuf,
    /// The control API endpoint used by the CLI (`status`, …).
    pub control: PathBuf,
    /// The lock file that makes `serve` a single instance per user.
    pub lock: PathBuf,
    /// Whose directory they are in.
    pub socket_dir: SocketDir,
    /// Whether this companion is *the* user's companion: it takes the per-user lock and
    /// publishes the per-user record ([`crate::ipc::record`]) that `bridge` finds it by. True
    /// for every companion `serve` and the desktop app start; false only for [`Self::isolated`].
    pub per_user: bool,
}

impl EndpointPaths {
    /// Resolves the endpoint paths: `explicit` (from `--socket` or `MCP_COMPANION_SOCKET`) wins,
    /// else the per-user default described in the module docs.
    pub fn resolve(explicit: Option<&Path>) -> EndpointPaths {
        match explicit {
            Some(mcp) => Self::beside(mcp.to_path_buf()),
            None => Self::default_for_user(),
        }
    }

    /// Paths for an MCP socket at `mcp`, with control socket and lock in the same directory.
    pub fn beside(mcp: PathBuf) -> EndpointPaths {
        #[cfg(windows)]
        {
            let base = mcp.to_string_lossy().into_owned();
            let lock = std::env::temp_dir().join(format!(
                "{}.lock",
                base.rsplit('\\').next().unwrap_or("mcp-companion")
            ));
            EndpointPaths {
                control: PathBuf::from(format!("{base}-control")),
                lock,
                mcp,
                socket_dir: SocketDir::Chosen,
                per_user: true,
            }
        }
        #[cfg(not(windows))]
        {
            let dir = mcp
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| PathBuf::from("."));
            EndpointPaths {
                control: dir.join(CONTROL_SOCKET_NAME),
                lock: dir.join(LOCK_NAME),
                mcp,
                socket_dir: SocketDir::Chosen,
                per_user: true,
            }
        }
    }

    /// Like [`Self::beside`], for a companion embedded beside others in one process (tests):
    /// it neither takes the per-user lock nor writes the per-user record, so it never stands
    /// in for, or stands in the way of, the user's own companion.
    pub fn isolated(mcp: PathBuf) -> EndpointPaths {
        EndpointPaths {
            per_user: false,
            ..Self::beside(mcp)
        }
    }

    #[cfg(not(windows))]
    fn default_for_user() -> EndpointPaths {
        let uid = rustix::process::getuid().as_raw();
        let dir = runtime_dir(
            std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from),
            uid,
            dirs::config_dir(),
        );
        EndpointPaths {
            socket_dir: SocketDir::Own,
            ..Self::beside(dir.join(MCP_SOCKET_NAME))
        }
    }

    #[cfg(windows)]
    fn default_for_user() -> EndpointPaths {
        let user = std::env::var("USERNAME").unwrap_or_else(|_| "user".to_owned());
        let user: String = user
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        EndpointPaths {
            socket_dir: SocketDir::Own,
            ..Self::beside(PathBuf::from(format!(r"\\.\pipe\mcp-companion-{user}")))
        }
    }

    /// The directory holding the sockets (Unix), created with mode 0700 by the listener.
    pub fn dir(&self) -> Option<&Path> {
        self.mcp.parent()
    }
}

/// The runtime directory rule of the module docs, with its inputs passed in so it can be tested.
#[cfg(not(windows))]
fn runtime_dir(xdg_runtime: Option<PathBuf>, uid: u32, config_dir: Option<PathBuf>) -> PathBuf {
    if let Some(dir) = xdg_runtime.filter(|d| d.is_absolute()) {
        return dir.join("mcp-companion");
    }
    let run_user = PathBuf::from(format!("/run/user/{uid}"));
    if run_user.is_dir() {
        return run_user.join("mcp-companion");
    }
    config_dir
        .unwrap_or_else(std::env::temp_dir)
        .join("mcp-companion")
        .join("run")
}

#[cfg(all(test, not(windows)))]
mod tests {
    use super::*;

    #[test]
    fn xdg_runtime_dir_wins_when_absolute() {
        let dir = runtime_dir(
            Some("/tmp/xdg".into()),
            4242,
            Some("/home/u/.config".into()),
        );
        assert_eq!(dir, PathBuf::from("/tmp/xdg/mcp-companion"));
    }

    #[test]
    fn relative_xdg_runtime_dir_is_ignored() {
        let dir = runtime_dir(
            Some("rel".into()),
            4_000_000,
            Some("/home/u/.config".into()),
        );
        assert_eq!(dir, PathBuf::from("/home/u/.config/mcp-companion/run"));
    }

    #[test]
    fn falls_back_to_config_dir_without_run_user() {
        // uid 4_000_000 has no /run/user entry on any test machine.
        let dir = runtime_dir(None, 4_000_000, Some("/home/u/.config".into()));
        assert_eq!(dir, PathBuf::from("/home/u/.config/mcp-companion/run"));
    }

    #[test]
    fn control_socket_and_lock_sit_beside_an_explicit_socket() {
        let p = EndpointPaths::resolve(Some(Path::new("/tmp/t/mcp.sock")));
        assert_eq!(p.control, PathBuf::from("/tmp/t/control.sock"));
        assert_eq!(p.lock, PathBuf::from("/tmp/t/serve.lock"));
    }
}

/// Where the socket of profile `profile` is, for the MCP socket at `mcp`: beside it, named
/// `<stem>.<profile>.sock` (`mcp.sock` → `mcp.coding.sock`); on Windows the pipe name with
/// `.<profile>` appended. Profile names are checked to be plain ASCII words at config load
/// (`config::check_profile_name`), so the result is a file in the same directory, made and
/// checked like the main socket.
pub fn profile_socket(mcp: &Path, profile: &str) -> PathBuf {
    #[cfg(windows)]
    {
        PathBuf::from(format!("{}.{profile}", mcp.to_string_lossy()))
    }
    #[cfg(not(windows))]
    {
        let name = mcp
            .file_name()
            .map_or_else(|| "mcp".to_owned(), |n| n.to_string_lossy().into_owned());
        let stem = name.strip_suffix(".sock").unwrap_or(&name);
        mcp.with_file_name(format!("{stem}.{profile}.sock"))
    }
}

#[cfg(all(test, not(windows)))]
mod profile_tests {
    use std::path::Path;

    #[test]
    fn a_profile_socket_sits_beside_the_main_one() {
        assert_eq!(
            super::profile_socket(Path::new("/run/user/1/mcp-companion/mcp.sock"), "coding"),
            Path::new("/run/user/1/mcp-companion/mcp.coding.sock")
        );
        assert_eq!(
            super::profile_socket(Path::new("/tmp/agents"), "a-b"),
            Path::new("/tmp/agents.a-b.sock")
        );
    }
}
