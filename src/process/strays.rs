//! Strays: processes a stdio server started that left its process group (`setsid`, the double
//! fork of a daemon), so the signals to the group ([`super::child`]) miss them. Linux only.
//!
//! Each server is started with [`LAUNCH_ENV`] set to a token of its own launch,
//! `<prefix>-<n>`, where the prefix ([`prefix`]) is this companion's: its pid and start time.
//! Every descendant inherits it unless it clears its environment. Stopping the server signals,
//! besides its group, every other process whose environment (`/proc/PID/environ`) carries the
//! token. When the companion itself is killed, the reaper ([`super::reaper`]) does the same for
//! every token with the companion's prefix.
//!
//! Each process is signalled through a pidfd opened *before* its environment is read, so a
//! process id that is recycled in between is never signalled. A process that cleared its
//! environment, or whose environment cannot be read (another user's, a setuid program), is not
//! found.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The variable every stdio server (and what it starts) carries: its launch's token.
pub const LAUNCH_ENV: &str = "MCP_COMPANION_LAUNCH";

/// This companion's token prefix: `<pid>.<start time in ns since the Unix epoch>`.
pub fn prefix() -> &'static str {
    static PREFIX: OnceLock<String> = OnceLock::new();
    PREFIX.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("{}.{nanos}", std::process::id())
    })
}

/// A new launch token, `<prefix>-<n>`, unique within this companion.
pub fn new_token() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("{}-{}", prefix(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Which launches to signal.
#[derive(Clone, Copy, Debug)]
pub enum Launches<'a> {
    /// The one launch with this token.
    Token(&'a str),
    /// Every launch whose token begins with `<prefix>-` (a companion's, for the reaper).
    Prefix(&'a str),
}

impl Launches<'_> {
    /// Whether the `NAME=value` entry `entry` of an environment names one of these launches.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    fn matches(&self, entry: &[u8]) -> bool {
        let Some(value) = entry
            .strip_prefix(LAUNCH_ENV.as_bytes())
            .and_then(|rest| rest.strip_prefix(b"="))
        else {
            return false;
        };
        match self {
            Launches::Token(token) => value == token.as_bytes(),
            Launches::Prefix(prefix) => value
                .strip_prefix(prefix.as_bytes())
                .is_some_and(|rest| rest.starts_with(b"-")),
        }
    }
}

/// Sends `signal` to every process of `launches` outside process group `skip_group` (which gets
/// its own signal) and other than this process; returns how many were signalled.
#[cfg(target_os = "linux")]
pub fn signal(
    launches: Launches<'_>,
    skip_group: Option<u32>,
    signal: rustix::process::Signal,
) -> usize {
    use rustix::process::{Pid, PidfdFlags};

    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let me = std::process::id();
    let mut signalled = 0;
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Some(raw) = Pid::from_raw(pid as i32).filter(|_| pid != me) else {
            continue;
        };
        // Opened first: if `pid` is recycled after this, the pidfd still names the process
        // whose environment is read below (or one that has exited: signalling it fails).
        let Ok(pidfd) = rustix::process::pidfd_open(raw, PidfdFlags::empty()) else {
            continue;
        };
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        if !environ.split(|b| *b == 0).any(|e| launches.matches(e)) {
            continue;
        }
        let group = rustix::process::getpgid(Some(raw)).ok();
        if skip_group.is_some_and(|g| group.is_some_and(|pg| pg.as_raw_nonzero().get() as u32 == g))
        {
            continue;
        }
        if rustix::process::pidfd_send_signal(&pidfd, signal).is_ok() {
            signalled += 1;
        }
    }
    signalled
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_matches_only_its_own_entry() {
        let token = "41.7-3";
        let t = Launches::Token(token);
        assert!(t.matches(b"MCP_COMPANION_LAUNCH=41.7-3"));
        assert!(!t.matches(b"MCP_COMPANION_LAUNCH=41.7-33"));
        assert!(!t.matches(b"MCP_COMPANION_LAUNCHX=41.7-3"));
        assert!(!t.matches(b"OTHER=MCP_COMPANION_LAUNCH=41.7-3"));
        let p = Launches::Prefix("41.7");
        assert!(p.matches(b"MCP_COMPANION_LAUNCH=41.7-3"));
        assert!(p.matches(b"MCP_COMPANION_LAUNCH=41.7-12"));
        assert!(!p.matches(b"MCP_COMPANION_LAUNCH=41.70-3"));
        assert!(!p.matches(b"MCP_COMPANION_LAUNCH=41.7"));
    }

    #[test]
    fn tokens_are_unique_and_carry_the_prefix() {
        let (a, b) = (new_token(), new_token());
        assert_ne!(a, b);
        assert!(a.starts_with(&format!("{}-", prefix())), "{a}");
        assert!(prefix().starts_with(&format!("{}.", std::process::id())));
    }
}
