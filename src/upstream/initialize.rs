//! Why `initialize` failed, in words that quote the server (MCP "Lifecycle", initialization).
//!
//! A server that refuses `initialize` (typically -32602 for a protocol version it does not
//! speak) often exits right after, when its stdin closes. Its answer is the reason the user
//! needs; "the process exited before answering" is only true when no answer came. [`Failure`]
//! keeps the two apart, and never shows a Rust `Debug` dump of a message.

use rmcp::service::ClientInitializeError;

/// Longest `data` of a JSON-RPC error quoted in a reason, in characters.
const MAX_DATA_CHARS: usize = 300;

/// A failed `initialize`, described.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// What happened, quoting the server when it answered.
    pub reason: String,
    /// Whether the server answered `initialize` at all (with an error or an unusable result).
    pub answered: bool,
}

impl Failure {
    /// Describes what rmcp's client reported.
    pub fn from_rmcp(e: &ClientInitializeError) -> Failure {
        use ClientInitializeError as E;
        let answered = |reason: String| Failure {
            reason,
            answered: true,
        };
        match e {
            E::JsonRpcError(err) => {
                let data = err
                    .data
                    .as_ref()
                    .map(|d| {
                        let text: String = d.to_string().chars().take(MAX_DATA_CHARS).collect();
                        format!("; data: {text}")
                    })
                    .unwrap_or_default();
                answered(format!(
                    "the server answered: {} (JSON-RPC error {}{data})",
                    err.message, err.code.0
                ))
            }
            E::ExpectedInitResult(Some(_)) => answered(
                "the server answered initialize with a result that is not an InitializeResult"
                    .into(),
            ),
            E::NoCompatibleProtocolVersion {
                server_supported, ..
            } => {
                let versions: Vec<String> =
                    server_supported.iter().map(|v| v.to_string()).collect();
                answered(format!(
                    "no protocol version in common: the server speaks {}",
                    versions.join(", ")
                ))
            }
            E::ConflictInitResponseId(expected, got) => answered(format!(
                "the server answered request id {got} instead of {expected}"
            )),
            E::UncorrelatedErrorResponse { expected, received } => answered(format!(
                "the server answered with an error for request id {received} instead of {expected}"
            )),
            E::ExpectedInitResponse(Some(_)) => Failure {
                reason: "the server sent something other than the initialize response".into(),
                answered: false,
            },
            E::ExpectedInitResponse(None) | E::ExpectedInitResult(None) => Failure {
                reason: "the connection closed before the initialize response".into(),
                answered: false,
            },
            other => Failure {
                reason: other.to_string(),
                answered: false,
            },
        }
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
                "the server answered: Unsupported protocol version: 2025-06-18 (JSON-RPC error -32602; data: {\"supported\":[\"2099-01-01\"]})",
                true,
            ),
            (
                ClientInitializeError::JsonRpcError(ErrorData::new(
                    ErrorCode::INTERNAL_ERROR,
                    "boom",
                    None,
                )),
                "the server answered: boom (JSON-RPC error -32603)",
                true,
            ),
            (
                ClientInitializeError::ExpectedInitResult(Some(ServerResult::EmptyResult(
                    EmptyResult {},
                ))),
                "the server answered initialize with a result that is not an InitializeResult",
                true,
            ),
            (
                ClientInitializeError::ConflictInitResponseId(
                    RequestId::Number(0),
                    RequestId::Number(7),
                ),
                "the server answered request id 7 instead of 0",
                true,
            ),
            (
                ClientInitializeError::ExpectedInitResponse(None),
                "the connection closed before the initialize response",
                false,
            ),
            (
                ClientInitializeError::ConnectionClosed("initialize response".into()),
                "connection closed: initialize response",
                false,
            ),
        ];
        for (error, reason, answered) in cases {
            assert_eq!(
                Failure::from_rmcp(&error),
                Failure {
                    reason: reason.into(),
                    answered
                }
            );
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
