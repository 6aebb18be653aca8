//! The DNS resolver `reqwest` uses for remote servers: it resolves with the system resolver
//! (tokio's `lookup_host`) and refuses the host when any address is blocked, so the address
//! connected to is the address checked (no DNS-rebinding gap), on every request and every
//! redirect hop.
//!
//! IP-literal hosts never reach a resolver; [`super::Guard::check_url_literal`] covers them.

use std::collections::HashSet;
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::Guard;

/// A [`Resolve`] that applies the SSRF [`Guard`] to every resolved address.
#[derive(Clone, Debug)]
pub struct GuardedResolver {
    guard: Guard,
    /// Proxy hosts from the environment (`HTTPS_PROXY`…): chosen by the user, so not checked;
    /// the target host is checked before connecting instead.
    proxies: Arc<HashSet<String>>,
}

impl GuardedResolver {
    /// A resolver applying `guard`, exempting the hosts in `proxies`.
    pub fn new(guard: Guard, proxies: HashSet<String>) -> GuardedResolver {
        GuardedResolver {
            guard,
            proxies: Arc::new(proxies),
        }
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let guard = self.guard.clone();
        let exempt = self.proxies.contains(name.as_str());
        Box::pin(async move {
            let host = name.as_str();
            let addrs = if exempt {
                tokio::net::lookup_host((host, 0)).await?.collect()
            } else {
                guard.resolve(host, 0).await?
            };
            tracing::debug!(host, addresses = addrs.len(), "resolved");
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}
