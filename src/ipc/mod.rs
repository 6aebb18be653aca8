//! Local transport (DESIGN §10): the private sockets and named pipes agents and the CLI reach a
//! running companion on, where they live, and the accept loop both servers share. What is
//! spoken on them is not this module's: the agents' MCP endpoint is [`crate::endpoint`], the
//! control API [`crate::control`].
//!
//! | module | owns |
//! |---|---|
//! | [`paths`] | where the sockets live, identically for `serve` and a minimal-environment `bridge` |
//! | [`record`] | the per-user file a companion records its socket in, for callers with another environment |
//! | [`socket`] | the private Unix socket / named pipe listener and connector |
//! | `private_dir` | Unix: the socket directory checked without following links, stale sockets |
//! | [`accept`] | the accept loop both sockets share: sessions as tracked tasks, the connection cap |
//! | [`descriptors`] | the descriptor limit, raised at start, and the connection caps derived from it |
//! | [`bridge`] | stdio ⇄ socket for clients that can only spawn a command (why it is here: its module doc) |
//! | [`autostart`] | the bridge starting a detached companion when none listens, one at a time |
//! | `handoff` | Unix: the bridge hands its stdin/stdout to the companion over the socket (`SCM_RIGHTS`) |
//! | [`peer`] | the process at the other end of an agent connection, as the kernel reports it |
//! | [`quick`] | how long a local client waits for an answer the companion gives at once |
//! | `pipe_acl` | Windows: the owner-only ACL of the named pipes |

pub mod accept;
pub mod autostart;
pub mod bridge;
pub mod descriptors;
#[cfg(unix)]
pub mod handoff;
pub mod paths;
pub mod peer;
#[cfg(windows)]
mod pipe_acl;
#[cfg(unix)]
mod private_dir;
pub mod quick;
pub mod record;
pub mod socket;
