//! The bridge starts the companion it needs.
//!
//! The problem: agents start `bridge` themselves, at their own start, but nothing starts the
//! companion: after a reboot without autostart the bridge found no socket, said so on stderr
//! (which most agents never show) and exited, and the person's tools silently vanished.
//!
//! The strategy, when no candidate socket accepts a connection ([`ensure_running`]):
//!
//! 1. Take the start lock (`autostart.lock` beside the per-user record,
//!    [`super::record::record_path`]), waiting for it while another bridge holds it: bridges
//!    started together (an agent starting several sessions) queue there, and each one that gets
//!    it looks at the sockets again first, so only the first starts a companion and the others
//!    find its socket.
//! 2. When the per-user lock (`companion.lock`) is held, a companion of this user is running or
//!    starting already: wait for a socket, start nothing.
//! 3. Otherwise spawn the given command (`mcp-companion serve --config … [--socket …]`) detached:
//!    its own process group (Unix; on Windows a detached process in its own group, no console),
//!    in the home directory, stdin and stdout on the null device (never the agent's pipes, whose
//!    end of file the agent waits for), stderr appended to [`log_path`] (`companion.log` beside
//!    the record; moved to `companion.log.1` once past [`LOG_ROTATE_BYTES`]).
//! 4. Wait until a candidate socket accepts, at most the given deadline. The companion
//!    exiting first is an error quoting the last lines it logged.
//!
//! Nothing here reads the config: the caller decides whether autostart is on and checks the
//! config first, so a broken config is named before anything is spawned.

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::socket;

/// How often the sockets, the lock and the started process are looked at while waiting.
const POLL: Duration = Duration::from_millis(25);
/// The log is moved aside to `companion.log.1` at start once it is larger than this (bytes).
pub const LOG_ROTATE_BYTES: u64 = 4 * 1024 * 1024;
/// How many of the started companion's last log lines an error quotes.
const QUOTED_LINES: usize = 3;

/// Why no companion could be started or reached.
#[derive(Debug, thiserror::Error)]
pub enum AutostartError {
    /// There is no home directory to keep the start lock and the log in.
    #[error("cannot start the companion: there is no home directory for its lock and log")]
    NoHome,
    /// The start lock or the log file could not be opened.
    #[error("cannot start the companion: cannot open {path}: {reason}")]
    File {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        reason: String,
    },
    /// The command could not be spawned (missing binary, no permission).
    #[error("cannot start the companion: cannot run {program}: {reason}")]
    Spawn {
        /// The program.
        program: PathBuf,
        /// What the OS said.
        reason: String,
    },
    /// The started companion exited before its socket accepted a connection.
    #[error(
        "the companion started by the bridge exited ({status}) before it listened: {said} (log: {log})"
    )]
    Exited {
        /// Its exit status, as the OS words it.
        status: String,
        /// Its last log lines, or that it wrote none.
        said: String,
        /// The log file.
        log: PathBuf,
    },
    /// No socket accepted within the deadline.
    #[error("no companion listened within {} s{}", .waited.as_secs(), match .log { Some(l) => format!(" (its log: {})", l.display()), None => " (one of this user is running or starting elsewhere; `mcp-companion status` shows it)".to_owned() })]
    Timeout {
        /// How long the bridge waited.
        waited: Duration,
        /// The log of the companion the bridge started; `None` when it started none.
        log: Option<PathBuf>,
    },
}

/// What to start when no companion runs.
#[derive(Debug, Clone)]
pub struct StartCommand {
    /// The program (this binary).
    pub program: PathBuf,
    /// Its arguments (`serve`, then `--config`, `--socket` as the bridge was given them, as
    /// absolute paths: the companion runs in the home directory).
    pub args: Vec<OsString>,
    /// How long to wait for a socket, in total (the start lock's wait included).
    pub deadline: Duration,
}

/// What [`ensure_running`] found or did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Started {
    /// A candidate socket accepted at once, or once another starter's companion listened.
    Found,
    /// This bridge started the companion (its process id).
    Spawned(u32),
}

/// `companion.log` beside the per-user record: where a companion started by a bridge logs.
pub fn log_path() -> Option<PathBuf> {
    Some(super::record::record_path()?.with_file_name("companion.log"))
}

/// Makes sure a companion listens on one of `candidates`, starting one with `start` when none
/// does (the module doc gives the steps).
///
/// # Errors
/// [`AutostartError`]: no home directory, the lock or log cannot be opened, the command cannot
/// be spawned, it exited before listening, or nothing listened within `start.deadline`.
pub async fn ensure_running(
    candidates: &[PathBuf],
    start: &StartCommand,
) -> Result<Started, AutostartError> {
    if any_accepts(candidates).await {
        return Ok(Started::Found);
    }
    let deadline = Instant::now() + start.deadline;
    let user_lock = super::record::user_lock_path().ok_or(AutostartError::NoHome)?;
    let start_lock = user_lock.with_file_name("autostart.lock");
    let lock = open_lock(&start_lock)?;
    // Held until this function returns: later bridges wait here, then find the socket.
    loop {
        match lock.try_lock() {
            Ok(()) => break,
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(e)) => return Err(file_error(&start_lock, &e)),
        }
        if any_accepts(candidates).await {
            return Ok(Started::Found);
        }
        if Instant::now() >= deadline {
            return Err(AutostartError::Timeout {
                waited: start.deadline,
                log: None,
            });
        }
        tokio::time::sleep(POLL).await;
    }
    if any_accepts(candidates).await {
        return Ok(Started::Found);
    }
    if is_held(&user_lock)? {
        tracing::info!("a companion of this user is starting; waiting for its socket");
        return wait_for(candidates, deadline, None)
            .await
            .map(|()| Started::Found)
            .map_err(|()| AutostartError::Timeout {
                waited: start.deadline,
                log: None,
            });
    }
    let log = log_path().ok_or(AutostartError::NoHome)?;
    let (mut child, from) = spawn(start, &log)?;
    let pid = child.id();
    tracing::info!(pid, log = %log.display(), "no companion was running: started one");
    match wait_for(candidates, deadline, Some(&mut child)).await {
        Ok(()) => Ok(Started::Spawned(pid)),
        Err(()) => match child.try_wait() {
            Ok(Some(status)) => Err(AutostartError::Exited {
                status: status.to_string(),
                said: last_lines(&log, from),
                log,
            }),
            _ => Err(AutostartError::Timeout {
                waited: start.deadline,
                log: Some(log),
            }),
        },
    }
}

/// Whether any of `candidates` accepts a connection now (the probe is closed at once; the
/// companion takes a connection that sends nothing as gone).
async fn any_accepts(candidates: &[PathBuf]) -> bool {
    for path in candidates {
        if socket::connect(path).await.is_ok() {
            return true;
        }
    }
    false
}

/// Polls `candidates` until one accepts (`Ok`) or `deadline` passes or `child` exits (`Err`).
async fn wait_for(
    candidates: &[PathBuf],
    deadline: Instant,
    mut child: Option<&mut Child>,
) -> Result<(), ()> {
    loop {
        if any_accepts(candidates).await {
            return Ok(());
        }
        if let Some(child) = child.as_deref_mut()
            && !matches!(child.try_wait(), Ok(None))
        {
            // One more look: it may have listened, and then exited as the second of two.
            return if any_accepts(candidates).await {
                Ok(())
            } else {
                Err(())
            };
        }
        if Instant::now() >= deadline {
            return Err(());
        }
        tokio::time::sleep(POLL).await;
    }
}

fn file_error(path: &Path, e: &std::io::Error) -> AutostartError {
    AutostartError::File {
        path: path.to_owned(),
        reason: e.to_string(),
    }
}

fn open_lock(path: &Path) -> Result<File, AutostartError> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .mode(0o600);
    }
    options.open(path).map_err(|e| file_error(path, &e))
}

/// Whether another process holds the lock at `path` (the per-user companion lock).
fn is_held(path: &Path) -> Result<bool, AutostartError> {
    let file = open_lock(path)?;
    match file.try_lock() {
        // Released when `file` is dropped, before the companion takes it.
        Ok(()) => Ok(false),
        Err(std::fs::TryLockError::WouldBlock) => Ok(true),
        Err(std::fs::TryLockError::Error(e)) => Err(file_error(path, &e)),
    }
}

/// Spawns `start` detached with stderr appended to `log`; returns the child and the log's
/// length before it started (where its own lines begin).
fn spawn(start: &StartCommand, log: &Path) -> Result<(Child, u64), AutostartError> {
    if std::fs::metadata(log).is_ok_and(|m| m.len() > LOG_ROTATE_BYTES) {
        let mut old = log.as_os_str().to_owned();
        old.push(".1");
        let _ = std::fs::rename(log, old);
    }
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(log).map_err(|e| file_error(log, &e))?;
    let from = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut cmd = Command::new(&start.program);
    cmd.args(&start.args);
    // Not the agent's working directory (a project it would keep busy): the home directory.
    if let Some(home) = dirs::home_dir() {
        cmd.current_dir(home);
    }
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(file);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    #[cfg(windows)]
    {
        use std::os::windows::process::CommandExt;
        const DETACHED_PROCESS: u32 = 0x0000_0008;
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        cmd.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP);
    }
    let child = cmd.spawn().map_err(|e| AutostartError::Spawn {
        program: start.program.clone(),
        reason: e.to_string(),
    })?;
    Ok((child, from))
}

/// The last [`QUOTED_LINES`] non-empty lines written to `log` after byte `from`, joined with
/// " / " (at most 64 KiB are read).
fn last_lines(log: &Path, from: u64) -> String {
    let mut text = String::new();
    if let Ok(mut file) = File::open(log)
        && file.seek(SeekFrom::Start(from)).is_ok()
    {
        let mut bytes = Vec::new();
        let _ = file.take(64 * 1024).read_to_end(&mut bytes);
        text = String::from_utf8_lossy(&bytes).into_owned();
    }
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.is_empty() {
        return "it wrote nothing".to_owned();
    }
    lines[lines.len().saturating_sub(QUOTED_LINES)..].join(" / ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_lines_quotes_only_what_was_written_after_the_start() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("companion.log");
        std::fs::write(&log, "old run\n").unwrap();
        let from = std::fs::metadata(&log).unwrap().len();
        assert_eq!(last_lines(&log, from), "it wrote nothing");
        std::fs::write(&log, "old run\na\n\nb\nc\nerror: d\n").unwrap();
        assert_eq!(last_lines(&log, from), "b / c / error: d");
    }
}
