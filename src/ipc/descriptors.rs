//! How many file descriptors the companion may hold, and the connection caps derived from it.
//!
//! Each agent or control connection holds one descriptor; so do the servers' pipes, HTTP
//! connections and log files. With the caps fixed, a low `RLIMIT_NOFILE` (macOS starts
//! processes at 256) let idle connections use up every descriptor, so neither a real agent nor a
//! server could open one. At start the companion raises its soft limit to the hard one
//! ([`raise_to_hard`]); the caps are then a share of what it got ([`Caps::from_limit`]), so
//! the connections together never take more than about a third of the descriptors.
//!
//! On Windows there is no such limit (handles are not capped per process in this way): the
//! caps are their maxima.

/// The connection caps of the two local sockets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    /// Agent connections served at once.
    pub agents: usize,
    /// Control connections served at once.
    pub control: usize,
}

impl Caps {
    /// The caps for a soft descriptor limit of `limit` (`None`: unlimited or unknown): a
    /// quarter of it for agents and a sixteenth for control connections, each at most its
    /// maximum and at least a handful, so one real agent and `status` still fit.
    pub fn from_limit(limit: Option<u64>, max_agents: usize, max_control: usize) -> Caps {
        let share = |divisor: u64, floor: usize, max: usize| match limit {
            None => max,
            Some(n) => usize::try_from(n / divisor)
                .unwrap_or(usize::MAX)
                .clamp(floor, max),
        };
        Caps {
            agents: share(4, 4, max_agents),
            control: share(16, 2, max_control),
        }
    }
}

/// Raises this process's soft `RLIMIT_NOFILE` to its hard limit (on macOS, where an unlimited
/// hard limit cannot be set, to `OPEN_MAX`, 10240) and returns the soft limit now in effect
/// (`None` when unlimited, or on Windows). A refusal leaves the limit as it was (logged).
///
/// Child processes inherit the raised limit.
#[cfg(unix)]
pub fn raise_to_hard() -> Option<u64> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let before = getrlimit(Resource::Nofile);
    let current = before.current?;
    // Linux's own ceiling (`fs.nr_open`) is 1 048 576 by default; macOS refuses more than
    // OPEN_MAX for the soft limit.
    let ceiling: u64 = if cfg!(target_os = "macos") {
        10_240
    } else {
        1 << 20
    };
    let wanted = before.maximum.unwrap_or(u64::MAX).min(ceiling);
    if wanted <= current {
        return Some(current);
    }
    let raised = Rlimit {
        current: Some(wanted),
        maximum: before.maximum,
    };
    match setrlimit(Resource::Nofile, raised) {
        Ok(()) => {
            tracing::debug!(from = current, to = wanted, "raised the descriptor limit");
            Some(wanted)
        }
        Err(e) => {
            tracing::info!(error = %e, limit = current, "could not raise the descriptor limit; the connection caps follow the current one");
            Some(current)
        }
    }
}

/// Windows: no descriptor limit to raise.
#[cfg(not(unix))]
pub fn raise_to_hard() -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_are_a_share_of_the_limit_between_a_floor_and_their_maximum() {
        let cases = [
            (None, (256, 64)),
            (Some(1 << 20), (256, 64)),
            (Some(1024), (256, 64)),
            (Some(256), (64, 16)),
            (Some(64), (16, 4)),
            (Some(8), (4, 2)),
            (Some(0), (4, 2)),
        ];
        for (limit, (agents, control)) in cases {
            assert_eq!(
                Caps::from_limit(limit, 256, 64),
                Caps { agents, control },
                "limit {limit:?}"
            );
        }
    }
}
