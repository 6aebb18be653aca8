//! [`Hub::fast_target`]: whether a `tools/call` can take the fast path, and what it
//! needs to. Every other case — unknown tool, resource or prompt target, server not running, no
//! fast lane (legacy SSE servers, or the fast path switched off), a server some of whose URIs are
//! rewritten (its results must be rewritten too, `native.rs`), the search tools of a view
//! with `toolSearch` on (`search.rs`), a tool whose call policy is not plainly `allow`
//! (`approve.rs`) — takes [`Hub::call`], which
//! answers it as it always has.

use std::sync::Arc;

use super::Hub;
use super::forward::Forward;
use crate::catalog::Target;
use crate::supervisor::ServerHandle;
use crate::upstream::http_lane::HttpLane;
use crate::upstream::lane::FastLane;

/// The fast lane a call goes on.
#[derive(Clone, Debug)]
pub enum Lane {
    /// A stdio server's ([`crate::upstream::lane`]).
    Stdio(FastLane),
    /// A streamable HTTP server's ([`crate::upstream::http_lane`]).
    Http(HttpLane),
}

/// A call the fast path may forward.
#[derive(Debug)]
pub struct FastTarget {
    /// The server name as configured.
    pub server: Arc<str>,
    /// The upstream tool name.
    pub raw_name: String,
    /// The live session's fast lane.
    pub lane: Lane,
    /// The call's rules ([`Forward`]): its deadline, its one retry and its error texts.
    pub forward: Forward,
    /// The server, for a retry ([`Hub::resend`]).
    pub handle: ServerHandle,
    /// Which of the server's sessions `lane` belongs to: a retry reconnects from it.
    pub generation: u64,
    /// How that session ended, once its process exited: a lost call quotes it
    /// ([`crate::upstream::ending::explain`]).
    pub ending: Option<crate::upstream::ending::Ending>,
    /// The session's calls in flight: a fast-path call enters it too, so the server's requests
    /// during the call reach its agent.
    pub askers: crate::upstream::askers::Askers,
    /// The tool's default wrapped name when a profile serves it under another: what its
    /// activity entry names it by ([`super::record::CallRecord::wrapped_as`]).
    pub wrapped_as: Option<String>,
}

impl Hub {
    /// The fast-path target of the wrapped tool `name`, or `None` when the call must take
    /// [`Hub::call`].
    pub fn fast_target(&self, name: &str) -> Option<FastTarget> {
        let catalog = self.catalog();
        if catalog.searching() && crate::catalog::search::is_search_tool(name) {
            return None;
        }
        let route = catalog.route(name)?;
        let Target::Tool { name: raw_name } = &route.target else {
            return None;
        };
        let server = self.server(&route.server)?;
        // Only plainly allowed calls: `approve.rs` decides the rest, on the rmcp path.
        if super::approve::policy_of(route, &server).0 != crate::config::Policy::Allow {
            return None;
        }
        let live = server.live()?;
        let lane = match (&live.lane, &live.http_lane) {
            (Some(lane), _) if lane.ended().is_none() => Lane::Stdio(lane.clone()),
            (None, Some(lane)) if !lane.ended() => Lane::Http(lane.clone()),
            _ => return None,
        };
        let wrapped_as =
            (route.base != name && self.profile().is_some()).then(|| route.base.clone());
        Some(FastTarget {
            wrapped_as,
            server: route.server.clone(),
            raw_name: raw_name.clone(),
            lane,
            forward: Forward::new(name, route, &server),
            askers: live.askers.clone(),
            generation: live.generation,
            ending: live.ending.clone(),
            handle: server,
        })
    }
}
