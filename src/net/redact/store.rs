//! The remembered secrets: one set for the process, bounded by [`MAX_SECRETS`], the least
//! recently registered values evicted first.

use std::collections::{BTreeSet, VecDeque};
use std::sync::RwLock;

/// Shorter remembered values are not replaced: they would mangle ordinary words in logs.
pub(super) const MIN_SECRET_LEN: usize = 8;
/// At most this many secrets are remembered (reload and refresh loops must not grow the set
/// forever); the least recently registered go first.
pub const MAX_SECRETS: usize = 1024;
/// What a remembered secret becomes.
pub(super) const MASK: &str = "<redacted>";

/// The remembered values, and their order of registration (oldest first) for eviction.
pub(super) struct Remembered {
    pub(super) set: BTreeSet<String>,
    pub(super) order: VecDeque<String>,
}

pub(super) static SECRETS: RwLock<Remembered> = RwLock::new(Remembered {
    set: BTreeSet::new(),
    order: VecDeque::new(),
});

pub(super) fn remember(found: Vec<String>) {
    SECRETS
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .add(found, MAX_SECRETS);
}

impl Remembered {
    /// Adds `found` as the most recent values, keeping at most `max`.
    pub(super) fn add(&mut self, found: Vec<String>, max: usize) {
        for s in found {
            if s.len() < MIN_SECRET_LEN {
                continue;
            }
            if self.set.contains(&s) {
                self.order.retain(|o| *o != s);
            } else {
                self.set.insert(s.clone());
            }
            self.order.push_back(s);
            while self.order.len() > max {
                if let Some(old) = self.order.pop_front() {
                    self.set.remove(&old);
                }
            }
        }
    }
}
