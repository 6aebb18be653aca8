//! Which MCP protocol era each upstream session speaks, chosen per server at connect time.
//!
//! Every server gets `initialize` first, as before: most servers speak both eras (the SDKs do),
//! and in the `initialize` era a server can send its requests (elicitation, sampling, roots)
//! while a call runs, and its calls take the fast lane. A server that refuses `initialize`
//! with -32022 listing 2026-07-28 and no version with `initialize` ([`refused_as_modern_only`];
//! what rmcp's modern-only server answers, over stdio and over streamable HTTP, where an HTTP
//! 4xx whose body is that error counts the same, [`super::http_client`]) speaks only 2026-07-28
//! ("Stateless requests": no `initialize`, the client's version, info and capabilities in every
//! request's `_meta`). It is reached through `server/discover` ([`modern_lifecycle`]): a stdio
//! server is started again; a streamable HTTP server gets a new transport on the same guarded
//! client (SSRF guard, headers, sign-in and timeouts as for the first attempt).
//!
//! | what the server did | era | status shows |
//! |---|---|---|
//! | answered `initialize` with a version we know | `initialize` | that version, e.g. `2025-11-25` |
//! | refused `initialize`, speaking only 2026-07-28 (stdio, streamable HTTP) | 2026-07-28 | `2026-07-28` |
//! | answered `initialize` with a version we do not know | — | refused ([`check`]): the connection fails naming the version |
//!
//! Legacy SSE (2024-11-05) stays in the `initialize` era: a server that refuses `initialize`
//! there is refused with its answer as the error. On streamable HTTP a 2026-07-28 session has
//! no `Mcp-Session-Id`, so there is no session for a restarted server to forget: a server that
//! went away is noticed when a request to it fails (the same retry rule as every transport).
//!
//! The era a server's session spoke is remembered ([`Remembered`], in memory, per server): its
//! reconnects try `server/discover` first when it spoke 2026-07-28, so they do not take the
//! refused `initialize` first (up to twice `connectTimeout`).
//!
//! A 2026-07-28 session has no fast lane ([`super::lane`] writes `initialize`-era frames);
//! its calls go through rmcp, which adds the `_meta` envelope and reads `resultType`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::ClientLifecycleMode;
use rmcp::model::{ErrorCode, ProtocolVersion};
use rmcp::service::ClientInitializeError;

/// Which era a server's last session spoke, kept in memory for its next connect: a server that
/// spoke only 2026-07-28 is reached through `server/discover` first, instead of being sent
/// `initialize` again only to refuse it. Forgotten when that first try fails: a server that
/// answered it with an error (it changed era) gets `initialize` at once; any other failure
/// is the connect's failure, and the next connect starts with `initialize`. Cheap to clone;
/// clones share it.
#[derive(Clone, Debug, Default)]
pub struct Remembered(Arc<AtomicBool>);

impl Remembered {
    /// Whether the last session spoke 2026-07-28.
    pub fn modern(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Remembers the era of the session just made (or forgets: `false`).
    pub fn set(&self, modern: bool) {
        self.0.store(modern, Ordering::Relaxed);
    }
}

/// How a server that speaks only 2026-07-28 is reached: `server/discover`, then requests
/// with the modern `_meta`.
pub fn modern_lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

/// Whether `e`, a failed `initialize`, says the server speaks only 2026-07-28: -32022 whose
/// `data.supported` lists 2026-07-28 and no version with `initialize`.
pub fn refused_as_modern_only(e: &ClientInitializeError) -> bool {
    let ClientInitializeError::JsonRpcError(error) = e else {
        return false;
    };
    if error.code != ErrorCode::UNSUPPORTED_PROTOCOL_VERSION {
        return false;
    }
    let supported: Vec<ProtocolVersion> = error
        .data
        .as_ref()
        .and_then(|d| d.get("supported"))
        .cloned()
        .and_then(|s| serde_json::from_value(s).ok())
        .unwrap_or_default();
    supported.contains(&ProtocolVersion::V_2026_07_28)
        && !supported.iter().any(ProtocolVersion::has_initialize)
}

/// Whether `version` is of the 2026-07-28 era.
pub fn is_modern(version: &ProtocolVersion) -> bool {
    version.as_str() >= ProtocolVersion::V_2026_07_28.as_str()
}

/// The version a server settled on, if this build knows it.
///
/// # Errors
/// A sentence naming the server's version and ours: a server answering `initialize` with a
/// version we do not know would be run by rules it does not follow.
pub fn check(version: &ProtocolVersion) -> Result<(), String> {
    if ProtocolVersion::KNOWN_VERSIONS.contains(version) {
        return Ok(());
    }
    let known: Vec<&str> = ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .map(ProtocolVersion::as_str)
        .collect();
    let shown: String = version.as_str().chars().take(64).collect();
    Err(format!(
        "the server answered initialize with protocol version \"{}\", which MCP Companion does not know (it speaks {})",
        crate::net::scrub(&shown),
        known.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_versions_pass_and_others_are_named() {
        for v in ProtocolVersion::KNOWN_VERSIONS {
            assert!(check(v).is_ok(), "{v}");
        }
        let future: ProtocolVersion = serde_json::from_str("\"2099-01-01\"").expect("a version");
        let e = check(&future).expect_err("unknown");
        assert!(e.contains("\"2099-01-01\""), "{e}");
        assert!(e.contains("2026-07-28") && e.contains("2025-11-25"), "{e}");
    }

    #[test]
    fn eras_are_told_apart() {
        assert!(is_modern(&ProtocolVersion::V_2026_07_28));
        assert!(!is_modern(&ProtocolVersion::V_2025_11_25));
    }
}
