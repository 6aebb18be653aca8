//! Spawning and stopping a stdio server's process tree (DESIGN §7).
//!
//! The child runs in its own process group (Unix) or Job Object (Windows), so stopping it reaches
//! `npx`'s grandchildren too. On Linux the child also gets `PR_SET_PDEATHSIG`, so it dies if the
//! companion is killed with SIGKILL, and a launch token that finds what it started outside its
//! group ([`super::strays`]). Stop is SIGTERM to the group (and the strays), a grace period, then
//! SIGKILL; dropping a [`StdioChild`] kills what is left at once. On Windows no console
//! window opens (`CREATE_NO_WINDOW`), and a command `launch` wrapped in `cmd.exe /d /v:off /s /c` gets its
//! pre-quoted command line verbatim (`raw_arg`), so std's quoting cannot double-quote it.

use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use process_wrap::tokio::{ChildWrapper, CommandWrap};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};

use crate::launch::LaunchSpec;

/// How long a stopped server gets between SIGTERM and SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(2);

/// A running stdio server process (the leader of its own process group).
pub struct StdioChild {
    child: Box<dyn ChildWrapper>,
    pid: Option<u32>,
    exited: Option<ExitStatus>,
    /// The launch token its processes carry in [`super::strays::LAUNCH_ENV`] (Linux).
    launch: Option<String>,
}

/// The pipes of a freshly spawned child.
pub struct ChildPipes {
    /// The child's stdin (our JSON-RPC output).
    pub stdin: ChildStdin,
    /// The child's stdout (our JSON-RPC input).
    pub stdout: ChildStdout,
    /// The child's stderr, to be drained by [`crate::upstream::stderr::spawn_drain`].
    pub stderr: ChildStderr,
}

impl std::fmt::Debug for StdioChild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioChild")
            .field("pid", &self.pid)
            .field("exited", &self.exited)
            .finish()
    }
}

/// Spawns `spec` with piped stdio, a cleared environment plus `spec.env`, in a new process group
/// (Unix) or a kill-on-close Job Object with `CREATE_NO_WINDOW` (Windows).
///
/// # Errors
/// The OS error from spawning (e.g. permission denied); a missing program is caught earlier by
/// [`crate::launch::plan`].
pub fn spawn(spec: &LaunchSpec) -> std::io::Result<(StdioChild, ChildPipes)> {
    let mut cmd = tokio::process::Command::new(&spec.program);
    apply_args(&mut cmd, spec);
    cmd.env_clear()
        .envs(&spec.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = &spec.cwd {
        cmd.current_dir(dir);
    }
    #[cfg(target_os = "linux")]
    let launch = {
        let token = super::strays::new_token();
        cmd.env(super::strays::LAUNCH_ENV, &token);
        Some(token)
    };
    #[cfg(not(target_os = "linux"))]
    let launch = None;
    #[cfg(target_os = "linux")]
    // SAFETY: the closure runs between fork and exec and only makes the prctl(2) system call
    // (rustix calls it directly); it allocates nothing and touches no locks.
    unsafe {
        cmd.pre_exec(|| {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
                .map_err(std::io::Error::from)
        });
    }

    let mut wrap = CommandWrap::from(cmd);
    #[cfg(unix)]
    wrap.wrap(process_wrap::tokio::ProcessGroup::leader());
    #[cfg(windows)]
    {
        use windows::Win32::System::Threading::CREATE_NO_WINDOW;
        // Flags set on the Command directly would be overwritten by JobObject: it reads them from
        // the CreationFlags wrapper. KillOnDrop makes the job kill-on-close, so the whole tree
        // dies with its handle, even if the companion itself is killed.
        wrap.wrap(process_wrap::tokio::CreationFlags(CREATE_NO_WINDOW));
        wrap.wrap(process_wrap::tokio::JobObject);
        wrap.wrap(process_wrap::tokio::KillOnDrop);
    }

    let mut child = wrap.spawn()?;
    let missing = |what: &str| std::io::Error::other(format!("child {what} was not piped"));
    let stdin = child.stdin().take().ok_or_else(|| missing("stdin"))?;
    let stdout = child.stdout().take().ok_or_else(|| missing("stdout"))?;
    let stderr = child.stderr().take().ok_or_else(|| missing("stderr"))?;
    let pid = child.id();
    #[cfg(unix)]
    if let Some(pgid) = pid {
        super::reaper::register(pgid);
    }
    Ok((
        StdioChild {
            child,
            pid,
            exited: None,
            launch,
        },
        ChildPipes {
            stdin,
            stdout,
            stderr,
        },
    ))
}

/// Passes the arguments: on Windows a planned raw command line (`cmd.exe /d /v:off /s /c "…"`, already quoted
/// for cmd.exe) goes verbatim through `raw_arg`; everything else gets the standard quoting.
fn apply_args(cmd: &mut tokio::process::Command, spec: &LaunchSpec) {
    #[cfg(windows)]
    if let Some(raw) = &spec.raw_args {
        cmd.raw_arg(raw);
        return;
    }
    cmd.args(&spec.args);
}

impl StdioChild {
    /// SIGTERM (SIGKILL when `kill`) to the processes of this launch outside its group
    /// ([`super::strays`]); nothing off Linux. After SIGKILL nothing of the launch is left, so
    /// the token is dropped and later calls (`Drop` after `terminate`) scan nothing again.
    fn signal_strays(&mut self, kill: bool) {
        #[cfg(target_os = "linux")]
        if let Some(token) = &self.launch {
            use rustix::process::Signal;
            let signal = if kill { Signal::KILL } else { Signal::TERM };
            let launches = super::strays::Launches::Token(token);
            let count = super::strays::signal(launches, self.pid, signal);
            if count > 0 {
                tracing::info!(
                    count,
                    signal = if kill { "SIGKILL" } else { "SIGTERM" },
                    "signalled processes the server started outside its process group"
                );
            }
            if kill {
                self.launch = None;
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (kill, &self.launch);
    }

    /// The leader's process id (also the process group id on Unix).
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Waits until the leader exits, and reaps what is left of its group. Cancel-safe.
    pub async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        if let Some(status) = self.exited {
            return Ok(status);
        }
        let status = self.child.wait().await?;
        self.exited = Some(status);
        Ok(status)
    }

    /// Stops the process tree: SIGTERM to the group and its strays (Windows: terminate the
    /// job), up to `grace` for the leader to exit, then SIGKILL to the group and the strays.
    /// Returns the leader's exit status when known.
    pub async fn terminate(&mut self, grace: Duration) -> Option<ExitStatus> {
        if let Some(status) = self.exited {
            // The leader is gone, but its group may not be: finish the job.
            let _ = self.child.start_kill();
            self.signal_strays(true);
            return Some(status);
        }
        #[cfg(unix)]
        {
            if let Err(e) = self.child.signal(rustix::process::Signal::TERM.as_raw()) {
                tracing::debug!(error = %e, "SIGTERM to the process group failed");
            }
            self.signal_strays(false);
            if let Ok(Ok(status)) = tokio::time::timeout(grace, self.wait()).await {
                // Stragglers in the group (and strays) that ignored SIGTERM.
                let _ = self.child.start_kill();
                self.signal_strays(true);
                return Some(status);
            }
        }
        #[cfg(not(unix))]
        let _ = grace;
        if let Err(e) = self.child.start_kill() {
            tracing::debug!(error = %e, "kill of the process tree failed");
        }
        self.signal_strays(true);
        match tokio::time::timeout(grace, self.wait()).await {
            Ok(Ok(status)) => Some(status),
            _ => None,
        }
    }
}

impl Drop for StdioChild {
    fn drop(&mut self) {
        if self.exited.is_none() {
            // Never leave a process behind, even when a task is aborted mid-stop.
            let _ = self.child.start_kill();
        }
        self.signal_strays(true);
        #[cfg(unix)]
        if let Some(pgid) = self.pid {
            super::reaper::unregister(pgid);
        }
    }
}

/// One-line description of an exit status: `exit code 3`, `signal 9 (SIGKILL)`.
pub fn describe_exit(status: &ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit code {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            use rustix::process::Signal;
            const NAMES: [(Signal, &str); 5] = [
                (Signal::TERM, " (SIGTERM)"),
                (Signal::KILL, " (SIGKILL)"),
                (Signal::SEGV, " (SIGSEGV)"),
                (Signal::ABORT, " (SIGABRT)"),
                (Signal::INT, " (SIGINT)"),
            ];
            let name = NAMES
                .iter()
                .find(|(s, _)| s.as_raw() == sig)
                .map_or("", |(_, name)| name);
            return format!("signal {sig}{name}");
        }
    }
    status.to_string()
}
