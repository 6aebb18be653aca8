//! Which MCP protocol era each upstream session speaks, chosen per server at connect time.
//!
//! Every connection first probes `server/discover` asking for 2026-07-28 ("Stateless
//! requests": no `initialize`, the client's version, info and capabilities in every request's
//! `_meta`). A server that answers it is used in that era; one that answers with a JSON-RPC
//! error (a 2025-era server: -32601, -32602, or -32022 listing only versions with an
//! `initialize` handshake, see [`Probe`]) gets `initialize` on the same connection, as before. A server that
//! does not answer the probe within 10 s gets `initialize` too (rmcp's
//! [`ClientLifecycleMode::Auto`]).
//!
//! | what the server did | era | status shows |
//! |---|---|---|
//! | answered `server/discover` listing 2026-07-28 | 2026-07-28 | `2026-07-28` |
//! | refused `server/discover`, answered `initialize` with a version we know | `initialize` | that version, e.g. `2025-06-18` |
//! | answered `initialize` with a version we do not know | — | refused ([`check`]): the connection fails naming the version |
//!
//! A 2026-07-28 session has no fast lane ([`super::lane`] writes `initialize`-era frames);
//! its calls go through rmcp, which adds the `_meta` envelope and reads `resultType`.

use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorCode, JsonRpcMessage, JsonRpcRequest,
    ProtocolVersion, RequestId, ServerJsonRpcMessage,
};
use rmcp::transport::Transport;
use rmcp::{ClientLifecycleMode, RoleClient};

/// How every upstream connection starts: probe 2026-07-28, fall back to `initialize`. Run it
/// on a [`Probe`]-wrapped transport, which turns a -32022 refusal of the probe into a plain
/// refusal (rmcp's probe gives up on a -32022 that names none of its choices instead of
/// falling back).
pub fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: None,
    }
}

/// A transport that watches the `server/discover` probe: a -32022 answer to it whose
/// `data.supported` does not list 2026-07-28 (a server of the `initialize` era that knows the
/// probe) reaches rmcp as -32601, which rmcp takes as "use `initialize`". Everything else
/// passes unchanged.
pub struct Probe<T> {
    inner: T,
    /// The id of the `server/discover` request, until its answer has come.
    discover: Option<RequestId>,
}

impl<T> Probe<T> {
    /// Wraps `inner`.
    pub fn new(inner: T) -> Self {
        Probe {
            inner,
            discover: None,
        }
    }

    fn judge(&mut self, message: ServerJsonRpcMessage) -> ServerJsonRpcMessage {
        let JsonRpcMessage::Error(mut error) = message else {
            return message;
        };
        let ours = match (&self.discover, &error.id) {
            // A server may echo a numeric id as a string.
            (Some(probe), Some(id)) => probe.to_string() == id.to_string(),
            _ => false,
        };
        if ours && error.error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION {
            self.discover = None;
            let lists_modern = error
                .error
                .data
                .as_ref()
                .and_then(|d| d.get("supported"))
                .and_then(|s| s.as_array())
                .is_some_and(|s| {
                    s.iter()
                        .any(|v| v.as_str() == Some(ProtocolVersion::V_2026_07_28.as_str()))
                });
            if !lists_modern {
                error.error.code = ErrorCode::METHOD_NOT_FOUND;
            }
        }
        JsonRpcMessage::Error(error)
    }
}

impl<T> Transport<RoleClient> for Probe<T>
where
    T: Transport<RoleClient>,
{
    type Error = T::Error;

    fn name() -> std::borrow::Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Request(JsonRpcRequest { id, request, .. }) = &item {
            self.discover =
                matches!(request, ClientRequest::DiscoverRequest(_)).then(|| id.clone());
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        let message = self.inner.receive().await?;
        Some(if self.discover.is_some() {
            self.judge(message)
        } else {
            message
        })
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
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
