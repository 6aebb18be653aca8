//! [`Hub::fast_target`]: whether a `tools/call` can take the fast path (issue 15), and what it
//! needs to. Every other case — unknown tool, resource or prompt target, server not running, no
//! fast lane (remote servers, or the fast path switched off) — takes [`Hub::call`], which
//! answers it as it always has.

use std::sync::Arc;
use std::time::Duration;

use super::Hub;
use crate::catalog::Target;
use crate::config::DEFAULT_TOOL_TIMEOUT;
use crate::upstream::lane::FastLane;

/// A call the fast path may forward.
#[derive(Debug)]
pub struct FastTarget {
    /// The server name as configured.
    pub server: Arc<str>,
    /// The upstream tool name.
    pub raw_name: String,
    /// The live session's fast lane.
    pub lane: FastLane,
    /// The server's `toolTimeout`.
    pub timeout: Duration,
    /// Whether the tool declares `readOnlyHint` or `idempotentHint`: only such a call is
    /// retried (the slow way) when its session breaks while the call is in flight.
    pub retry_in_flight: bool,
    /// The session's calls in flight: a fast-path call enters it too, so the server's requests
    /// during the call reach its agent.
    pub askers: crate::upstream::askers::Askers,
}

impl Hub {
    /// The fast-path target of the wrapped tool `name`, or `None` when the call must take
    /// [`Hub::call`].
    pub fn fast_target(&self, name: &str) -> Option<FastTarget> {
        let catalog = self.catalog();
        let route = catalog.route(name)?;
        let Target::Tool { name: raw_name } = &route.target else {
            return None;
        };
        let server = self.server(&route.server)?;
        let live = server.live()?;
        let lane = live.lane.clone()?;
        if lane.ended().is_some() {
            return None;
        }
        let annotations = catalog.tool(name).and_then(|t| t.annotations.as_ref());
        let retry_in_flight = annotations
            .is_some_and(|a| a.read_only_hint == Some(true) || a.idempotent_hint == Some(true));
        Some(FastTarget {
            server: route.server.clone(),
            raw_name: raw_name.clone(),
            lane,
            timeout: server
                .config()
                .map_or(DEFAULT_TOOL_TIMEOUT, |c| c.tool_timeout),
            retry_in_flight,
            askers: live.askers.clone(),
        })
    }
}
