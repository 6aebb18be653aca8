//! The restart policy for servers that exit or fail to start (DESIGN §7).
//!
//! Delays double from 1 s to at most 60 s. A server that ran healthily for 5 minutes starts
//! over at 1 s. After [`MAX_FAILURES`] failures in a row the server gives up (`failed`) until
//! the user starts it again. A remote server that refused with `Retry-After` is not tried
//! before that many seconds (at most [`MAX_RETRY_AFTER`]).

use std::time::Duration;

/// First restart delay.
pub const INITIAL_DELAY: Duration = Duration::from_secs(1);
/// Longest restart delay.
pub const MAX_DELAY: Duration = Duration::from_secs(60);
/// A session that lasted this long resets the failure count.
pub const HEALTHY_AFTER: Duration = Duration::from_secs(5 * 60);
/// The longest `Retry-After` a server's refusal makes a restart wait (a larger one is cut to
/// this: the person can always start the server by hand).
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(15 * 60);
/// Failures in a row after which the server stays `failed`.
pub const MAX_FAILURES: u32 = 5;

/// What to do after a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Try again after this delay.
    RetryAfter(Duration),
    /// Give up until the user starts the server again.
    GiveUp,
}

/// The delay before the restart that follows the `failures`-th failure in a row (1-based):
/// 1 s, 2 s, 4 s, … capped at [`MAX_DELAY`].
pub fn delay_for(failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    INITIAL_DELAY
        .saturating_mul(1u32 << doublings)
        .min(MAX_DELAY)
}

/// Consecutive-failure bookkeeping for one server.
#[derive(Clone, Debug, Default)]
pub struct Backoff {
    failures: u32,
}

impl Backoff {
    /// Records a failure; `ran_for` is how long the failed session had been running (zero for a
    /// failed start).
    pub fn failed(&mut self, ran_for: Duration) -> Verdict {
        if ran_for >= HEALTHY_AFTER {
            self.failures = 0;
        }
        self.failures += 1;
        if self.failures >= MAX_FAILURES {
            return Verdict::GiveUp;
        }
        Verdict::RetryAfter(delay_for(self.failures))
    }

    /// Forgets past failures (the user started the server by hand).
    pub fn reset(&mut self) {
        self.failures = 0;
    }

    /// Failures in a row so far.
    pub fn failures(&self) -> u32 {
        self.failures
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_then_give_up_after_five_failures() {
        let mut b = Backoff::default();
        let verdicts: Vec<_> = (0..5).map(|_| b.failed(Duration::ZERO)).collect();
        assert_eq!(
            verdicts,
            vec![
                Verdict::RetryAfter(Duration::from_secs(1)),
                Verdict::RetryAfter(Duration::from_secs(2)),
                Verdict::RetryAfter(Duration::from_secs(4)),
                Verdict::RetryAfter(Duration::from_secs(8)),
                Verdict::GiveUp,
            ]
        );
    }

    #[test]
    fn a_healthy_run_resets_the_count() {
        let mut b = Backoff::default();
        for _ in 0..4 {
            b.failed(Duration::ZERO);
        }
        assert_eq!(b.failed(HEALTHY_AFTER), Verdict::RetryAfter(INITIAL_DELAY));
        assert_eq!(b.failures(), 1);
    }

    #[test]
    fn delay_doubles_and_is_capped_at_sixty_seconds() {
        let secs: Vec<u64> = [1, 2, 3, 4, 5, 6, 7, 8, 40]
            .iter()
            .map(|n| delay_for(*n).as_secs())
            .collect();
        assert_eq!(secs, vec![1, 2, 4, 8, 16, 32, 60, 60, 60]);
    }

    #[test]
    fn reset_forgets_failures() {
        let mut b = Backoff::default();
        b.failed(Duration::ZERO);
        b.failed(Duration::ZERO);
        b.reset();
        assert_eq!(b.failed(Duration::ZERO), Verdict::RetryAfter(INITIAL_DELAY));
    }
}
