//! The reaper: a guardian process that kills every server's process group when the companion
//! dies without cleaning up (SIGKILL, the OOM killer, a crash).
//!
//! The problem: a graceful stop reaches whole process groups, and on Linux `PR_SET_PDEATHSIG`
//! kills each *direct* child when the companion dies — but launchers like `npx` or `sh` leave
//! grandchildren (`node`, …) that survive, reparented to init. Only a process that outlives the
//! companion can clean up after it.
//!
//! The strategy: [`start`] re-executes the current binary with [`REAPER_ENV`] set, in its own
//! process group (so a terminal's Ctrl-C does not reach it). The companion writes `+<pgid>` when
//! it spawns a server and `-<pgid>` when that group is gone, over the reaper's stdin. When the
//! pipe closes — the companion exited, however it exited — the reaper sends SIGTERM to every
//! group still listed, and on Linux to every process carrying one of the companion's launch
//! tokens ([`super::strays`], for what left its group), SIGKILL half a second later,
//! and exits. Every binary that embeds the
//! companion must call [`run_if_reaper`] first thing in `main`.
//!
//! Windows needs none of this: children live in a Job Object that is killed when its last
//! handle closes, which the OS does when the companion dies.

use std::io::Write;
use std::sync::{Mutex, OnceLock};

/// Environment variable that turns a process started from the companion's binary into the
/// reaper.
pub const REAPER_ENV: &str = "MCP_COMPANION_REAPER";

static PIPE: OnceLock<Mutex<std::process::ChildStdin>> = OnceLock::new();

/// Runs the reaper and exits, if this process was started as one; returns otherwise.
pub fn run_if_reaper() {
    if std::env::var_os(REAPER_ENV).is_none() {
        return;
    }
    #[cfg(unix)]
    unix::run();
    std::process::exit(0);
}

/// Starts the reaper for this process (once; later calls do nothing). Without it, servers are
/// still stopped on every orderly exit; only the SIGKILL case is uncovered.
///
/// # Errors
/// The OS error if the reaper cannot be spawned.
pub fn start() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        if PIPE.get().is_some() {
            return Ok(());
        }
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new(std::env::current_exe()?)
            // The value is this companion's launch-token prefix, to find its servers' strays.
            .env(REAPER_ENV, super::strays::prefix())
            .process_group(0)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()?;
        let pipe = child
            .stdin
            .take()
            .ok_or_else(|| std::io::Error::other("reaper stdin was not piped"))?;
        // The reaper exits when the pipe closes; nobody waits for it (init reaps it).
        std::mem::forget(child);
        let _ = PIPE.set(Mutex::new(pipe));
    }
    Ok(())
}

/// Tells the reaper about a new server process group.
pub fn register(pgid: u32) {
    tell(&format!("+{pgid}\n"));
}

/// Tells the reaper a server process group is gone.
pub fn unregister(pgid: u32) {
    tell(&format!("-{pgid}\n"));
}

fn tell(line: &str) {
    if let Some(pipe) = PIPE.get() {
        let mut pipe = pipe.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = pipe.write_all(line.as_bytes()).and_then(|()| pipe.flush()) {
            tracing::debug!(error = %e, "the reaper is gone");
        }
    }
}

#[cfg(unix)]
mod unix {
    use std::collections::BTreeSet;
    use std::io::BufRead;
    use std::time::Duration;

    use rustix::process::{Pid, Signal, kill_process_group};

    /// Grace between SIGTERM and SIGKILL.
    const GRACE: Duration = Duration::from_millis(500);

    pub(super) fn run() {
        let mut groups: BTreeSet<i32> = BTreeSet::new();
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            let (op, pgid) = line.split_at(line.len().min(1));
            let Ok(pgid) = pgid.trim().parse::<i32>() else {
                continue;
            };
            if pgid <= 1 {
                continue;
            }
            match op {
                "+" => {
                    groups.insert(pgid);
                }
                "-" => {
                    groups.remove(&pgid);
                }
                _ => {}
            }
        }
        if groups.is_empty() {
            return;
        }
        let groups: Vec<Pid> = groups.into_iter().filter_map(Pid::from_raw).collect();
        let prefix = std::env::var(super::REAPER_ENV).unwrap_or_default();
        for pgid in &groups {
            let _ = kill_process_group(*pgid, Signal::TERM);
        }
        strays(&prefix, Signal::TERM);
        std::thread::sleep(GRACE);
        for pgid in &groups {
            let _ = kill_process_group(*pgid, Signal::KILL);
        }
        strays(&prefix, Signal::KILL);
    }

    /// Signals what the servers started outside their groups ([`crate::process::strays`]).
    fn strays(prefix: &str, signal: Signal) {
        #[cfg(target_os = "linux")]
        if !prefix.is_empty() {
            let launches = crate::process::strays::Launches::Prefix(prefix);
            crate::process::strays::signal(launches, None, signal);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (prefix, signal);
    }
}
