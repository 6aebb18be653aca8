//! The local endpoint and everything that talks over local sockets (DESIGN §10).
//!
//! | module | owns |
//! |---|---|
//! | [`paths`] | where the sockets live, identically for `serve` and a minimal-environment `bridge` |
//! | [`record`] | the per-user file a companion records its socket in, for callers with another environment |
//! | [`socket`] | the private Unix socket / named pipe listener and connector |
//! | `private_dir` | Unix: the socket directory checked without following links, stale sockets |
//! | [`accept`] | the accept loop both sockets share: sessions as tracked tasks |
//! | [`endpoint`] | the aggregated MCP server each agent session talks to |
//! | [`fast`] | the forwarding fast path for `tools/call`, beside the rmcp session (issue 15) |
//! | [`line`](mod@line) | the newline-JSON wire of an agent connection, answering malformed lines |
//! | [`limits`] | what one connection may hold: in-flight requests, queued bytes, connections, deadlines |
//! | [`bounded`] | the agent connection's transport under those limits: backpressure, noticing a gone agent |
//! | [`bridge`] | stdio ⇄ socket for clients that can only spawn a command |
//! | [`control`] | the control API the CLI drives a running companion with |
//! | [`login`] | the control API's `login` / `logout` (OAuth sign-in of a remote server) |
//! | `pipe_acl` | Windows: the owner-only ACL of the named pipes |

pub mod accept;
pub mod bounded;
pub mod bridge;
pub mod control;
pub mod endpoint;
pub mod fast;
pub mod limits;
pub mod line;
pub mod login;
pub mod paths;
#[cfg(windows)]
mod pipe_acl;
#[cfg(unix)]
mod private_dir;
pub mod record;
pub mod socket;
