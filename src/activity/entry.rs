//! [`Entry`]: one thing that happened, as the call path hands it to the writer — raw
//! (arguments and result as they were), so the work of shaping and masking them happens on the
//! writer thread.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::{Peer, RoleServer};
use serde_json::value::RawValue;

/// The most characters of an agent's `clientInfo` name or version the log keeps.
pub const AGENT_TEXT_MAX: usize = 256;

/// Who made a request: the agent's `clientInfo` (MCP `initialize`), and its process when the
/// endpoint knows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Agent {
    /// `clientInfo.name`, or `control` for the control API (`mcp-companion call`).
    pub name: Option<String>,
    /// `clientInfo.version`.
    pub version: Option<String>,
    /// The peer process id of the connection (on the local socket: the bridge, or the agent
    /// itself when it connects directly).
    pub pid: Option<u32>,
    /// That process's executable.
    pub exe: Option<String>,
}

impl Agent {
    /// The agent of an MCP session, from its `initialize` request.
    pub fn of(peer: &Peer<RoleServer>) -> Agent {
        match peer.peer_info() {
            Some(info) => Agent {
                name: Some(info.client_info.name.clone()),
                version: Some(info.client_info.version.clone()),
                pid: None,
                exe: None,
            },
            None => Agent::default(),
        }
    }

    /// A request through the control API (`mcp-companion call`, the window's "try it").
    pub fn control() -> Agent {
        Agent {
            name: Some("control".to_owned()),
            ..Agent::default()
        }
    }
}

/// The arguments of a call, as the path had them.
#[derive(Debug)]
pub enum Payload {
    /// None were sent.
    None,
    /// Decoded (the rmcp path).
    Object(JsonObject),
    /// The raw JSON text (the fast path).
    Raw(Box<RawValue>),
}

/// How a call ended.
#[derive(Debug)]
pub enum Ended {
    /// With this result (passed through from the server, `isError` or not).
    Result(CallToolResult),
    /// With this `result` as JSON text (the fast path's reply, whose result may be spliced
    /// through unparsed): the reply's own bytes, shared rather than copied, so a large result
    /// costs the log no memory of its own while it waits in the queue.
    Raw(Bytes),
    /// The companion answered `isError` itself: `outcome` is `error`, `timeout`, `withheld`
    /// (the tool waits for the person's approval of its changed definition, so it never
    /// reached the server), or `denied` / `declined` (the call policy); `kind` says which
    /// failure (`unavailable`, `rpc`, `lost`, `withheld`…); `detail` is kept as the entry's
    /// detail (already free of argument values), `message` only when payloads are recorded.
    Failed {
        /// `error`, `timeout`, `withheld`, `denied`, `declined` or `cancelled`.
        outcome: &'static str,
        /// The failure's kind, one word.
        kind: &'static str,
        /// What the entry's detail says in either mode.
        detail: String,
        /// The agent's full error text (may quote the server), kept with `recordPayloads`.
        message: String,
    },
    /// The agent cancelled it, or left, before it was answered.
    Cancelled,
}

/// One call, start to end.
#[derive(Debug)]
pub struct CallEntry {
    /// When it started (Unix ms).
    pub at_ms: u64,
    /// How long until its answer (or its cancel).
    pub duration: Duration,
    /// Who called.
    pub agent: Agent,
    /// The profile of the agent's session (`None`: the default view, every server).
    pub profile: Option<Arc<str>>,
    /// Which forwarding path took it: `fast` or `rmcp`.
    pub path: &'static str,
    /// The server it went to, when it was routed.
    pub server: Option<Arc<str>>,
    /// The wrapped tool name the agent called.
    pub tool: String,
    /// Its arguments.
    pub arguments: Payload,
    /// How many times it was sent to the server (or a send was tried): 0 when it never was,
    /// 2 when it was retried on a new session.
    pub attempts: u32,
    /// How the call policy let it run, when that is worth noting (the person approved it; it
    /// ran unasked with nobody to ask): the entry's detail when nothing else is.
    pub approval: Option<&'static str>,
    /// How it ended.
    pub ended: Ended,
}

/// One `tools/list` page served.
#[derive(Debug)]
pub struct ListingEntry {
    /// When (Unix ms).
    pub at_ms: u64,
    /// Who asked.
    pub agent: Agent,
    /// The profile of the agent's session (`None`: the default view).
    pub profile: Option<Arc<str>>,
    /// `tools/list`.
    pub method: &'static str,
    /// `fast` or `rmcp`.
    pub path: &'static str,
    /// Items on the page.
    pub items: usize,
    /// The cursor the agent sent, if any.
    pub cursor: Option<String>,
}

/// A server changed state.
#[derive(Debug)]
pub struct ServerEntry {
    /// When (Unix ms).
    pub at_ms: u64,
    /// The server.
    pub server: String,
    /// Its new state (`starting`, `running`, `backoff`, `failed`, `stopped`…).
    pub state: String,
    /// Its previous state, when known.
    pub previous: Option<String>,
    /// Its last error, or the tool count when running (secrets masked by the writer).
    pub detail: Option<String>,
}

/// What the writer is handed.
#[derive(Debug)]
pub enum Entry {
    /// A `tools/call`.
    Call(Box<CallEntry>),
    /// A listing.
    Listing(ListingEntry),
    /// A server's state change.
    Server(ServerEntry),
}
