//! Why `initialize` failed, and whether the server answered at all (MCP "Lifecycle",
//! initialization).
//!
//! A server that refuses `initialize` (typically -32602 for a protocol version it does not
//! speak) often exits right after, when its stdin closes. Its answer is the reason the user
//! needs; "the process exited before answering" is only true when no answer came. [`Failure`]
//! keeps the two apart; the words come from [`error_text::describe`], plus the `data` of a
//! JSON-RPC error (often the versions the server does speak).

use rmcp::service::ClientInitializeError;

use super::error_text;

/// Longest `data` of a JSON-RPC error quoted in a reason, in characters.
const MAX_DATA_CHARS: usize = 300;

/// A failed `initialize`, described.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// What happened, quoting the server when it answered.
    pub reason: String,
    /// Whether the server answered `initialize` (with an error or an unusable result).
    pub answered: bool,
}

impl Failure {
    /// Describes what rmcp's client reported.
    pub fn from_rmcp(e: &ClientInitializeError) -> Failure {
        use ClientInitializeError as E;
        // Both the `server/discover` probe and `initialize` failed: the second answer is the
        // one about the lifecycle the server speaks.
        if let E::LegacyFallbackFailed { fallback, .. } = e {
            return Failure::from_rmcp(fallback);
        }
        let mut reason = error_text::describe(e);
        if let E::JsonRpcError(err) = e
            && let Some(data) = &err.data
        {
            let text: String = data.to_string().chars().take(MAX_DATA_CHARS).collect();
            reason.push_str(&format!("; data: {}", crate::net::scrub(&text)));
        }
        let answered = matches!(
            e,
            E::JsonRpcError(_)
                | E::ExpectedInitResult(Some(_))
                | E::NoCompatibleProtocolVersion { .. }
                | E::ConflictInitResponseId(..)
                | E::UncorrelatedErrorResponse { .. }
        );
        Failure { reason, answered }
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{EmptyResult, ErrorCode, ErrorData, RequestId, ServerResult};
    use serde_json::json;

    use super::*;

    #[test]
    fn a_server_answer_is_quoted_and_marked_answered() {
        let refused = ClientInitializeError::JsonRpcError(ErrorData::new(
            ErrorCode::INVALID_PARAMS,
            "Unsupported protocol version: 2025-06-18",
            Some(json!({"supported": ["2099-01-01"]})),
        ));
        let cases = [
            (
                refused,
                &[
                    "Unsupported protocol version: 2025-06-18",
                    "JSON-RPC error -32602",
                    "data: {\"supported\":[\"2099-01-01\"]}",
                ][..],
                true,
            ),
            (
                ClientInitializeError::ExpectedInitResult(Some(ServerResult::EmptyResult(
                    EmptyResult {},
                ))),
                &["instead of an initialize result"][..],
                true,
            ),
            (
                ClientInitializeError::ConflictInitResponseId(
                    RequestId::Number(0),
                    RequestId::Number(7),
                ),
                &["7"][..],
                true,
            ),
            (
                ClientInitializeError::ExpectedInitResponse(None),
                &["closed before the initialize answer"][..],
                false,
            ),
            (
                ClientInitializeError::ConnectionClosed("initialize response".into()),
                &["the connection closed during initialize response"][..],
                false,
            ),
        ];
        for (error, words, answered) in cases {
            let failure = Failure::from_rmcp(&error);
            assert_eq!(failure.answered, answered, "{error}");
            for w in words {
                assert!(failure.reason.contains(w), "{}", failure.reason);
            }
            assert!(!failure.reason.contains("Some("), "{}", failure.reason);
        }
    }

    #[test]
    fn long_error_data_is_cut() {
        let error = ClientInitializeError::JsonRpcError(ErrorData::new(
            ErrorCode::INVALID_PARAMS,
            "no",
            Some(json!("x".repeat(10_000))),
        ));
        let reason = Failure::from_rmcp(&error).reason;
        assert!(reason.len() < MAX_DATA_CHARS + 100, "{reason}");
    }
}
