//! The lifetime of stdio servers' processes (DESIGN §7): nothing a server started outlives its
//! stop, a restart, or the companion itself.
//!
//! | file | owns |
//! |---|---|
//! | [`child`] | spawning a [`launch`](crate::launch) plan with piped stdio in its own process group (Unix) or Job Object (Windows), and stopping it: SIGTERM, a grace period, SIGKILL |
//! | [`strays`] | Linux: the launch token that finds what a server started outside its group, and signalling it |
//! | [`identity`] | which process a pid is: its user, executable and parent (`agents`) |
//! | [`reaper`] | the guardian process that kills every registered group (and the strays) when the companion dies |
//!
//! The imports run one way: `child` uses `strays` and `reaper`, `reaper` uses `strays`, and
//! `strays` uses neither. The MCP session on a child's pipes is `upstream`'s; this room only
//! knows processes.

pub mod child;
pub mod identity;
pub mod reaper;
pub mod strays;
