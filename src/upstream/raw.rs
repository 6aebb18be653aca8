//! Requests whose params or result rmcp 3.11's model cannot carry whole, sent as JSON and
//! answered as JSON: the MCP 2025-11-25 Tasks utility (`tools/call` with `params.task`,
//! answered by a `CreateTaskResult`; `tasks/get`, `tasks/result`, `tasks/cancel`,
//! `tasks/list`). rmcp reads `tasks/get` and `tasks/cancel` as the later Tasks extension's
//! (other result shapes) and drops `params.task` from a `tools/call`.
//!
//! | session | how |
//! |---|---|
//! | a stdio server with a fast lane | the request line written as built, the answer line read back untouched ([`FastLane`]) |
//! | any other | rmcp's custom request; the answer as rmcp decoded it, turned back into JSON: a `tasks/get` or `tasks/cancel` answer loses `ttl` and `pollInterval` (rmcp reads it as the later extension's task, `from_rmcp`) |

use std::time::Duration;

use rmcp::model::{ClientRequest, CustomRequest, ErrorData};
use rmcp::service::ServiceError;
use rmcp::{Peer, RoleClient};
use serde_json::Value;

use super::lane::{FastLane, Interrupted, NoAnswer, Unsent};

/// Sends `method` with `params` (a JSON object) and returns the answer's `result`.
///
/// # Errors
/// The server's JSON-RPC error as [`ServiceError::McpError`]; [`ServiceError::TransportClosed`]
/// when the session ended first; [`ServiceError::Timeout`] after `timeout`;
/// [`ServiceError::UnexpectedResponse`] for an answer with neither `result` nor `error`.
pub async fn request(
    peer: &Peer<RoleClient>,
    lane: Option<&FastLane>,
    method: &str,
    params: Value,
    timeout: Duration,
) -> Result<Value, ServiceError> {
    if let Some(lane) = lane
        && lane.ended().is_none()
    {
        return on_lane(lane, method, &params, timeout).await;
    }
    let request = ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)));
    let answer = tokio::time::timeout(timeout, peer.send_request(request))
        .await
        .map_err(|_| ServiceError::Timeout { timeout })??;
    from_rmcp(answer)
}

/// The JSON of an answer rmcp decoded. A 2025-11-25 `tasks/get` or `tasks/cancel` answer is
/// decoded as the later Tasks extension's `GetTaskResult`, which drops `ttl` and
/// `pollInterval` and adds `resultType` and `ttlMs`: those two are taken out again.
fn from_rmcp(answer: rmcp::model::ServerResult) -> Result<Value, ServiceError> {
    let task = matches!(answer, rmcp::model::ServerResult::GetTaskResult(_));
    let value = serde_json::to_value(answer).map_err(|_| ServiceError::UnexpectedResponse)?;
    // From a stdio server: the answer as the server wrote it.
    let mut value = super::exact::json_of(value);
    if task && let Some(fields) = value.as_object_mut() {
        for added in ["resultType", "ttlMs", "pollIntervalMs"] {
            fields.remove(added);
        }
    }
    Ok(value)
}

async fn on_lane(
    lane: &FastLane,
    method: &str,
    params: &Value,
    timeout: Duration,
) -> Result<Value, ServiceError> {
    let mut ticket = lane
        .open(timeout)
        .map_err(|_| ServiceError::TransportClosed)?;
    let method = Value::from(method);
    let mut frame = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":{method},\"params\":{params}}}",
        ticket.id_json()
    )
    .into_bytes();
    frame.push(b'\n');
    // Bounded by the ticket's timeout too: a server that stops reading its input must not
    // hold the request past it.
    match ticket
        .send_until(&frame, std::future::pending::<()>())
        .await
    {
        Ok(()) => {}
        Err(Unsent::Stopped {
            begun: true,
            why: Interrupted::NoAnswer(NoAnswer::TimedOut),
        }) => {
            ticket.cancel("request timeout");
            return Err(ServiceError::Timeout { timeout });
        }
        Err(Unsent::Stopped {
            why: Interrupted::NoAnswer(NoAnswer::TimedOut),
            ..
        }) => return Err(ServiceError::Timeout { timeout }),
        Err(_) => return Err(ServiceError::TransportClosed),
    }
    let line = match ticket.answer().await {
        Ok(line) => line,
        Err(NoAnswer::TimedOut) => {
            ticket.cancel("request timeout");
            return Err(ServiceError::Timeout { timeout });
        }
        Err(NoAnswer::Ended(_)) => return Err(ServiceError::TransportClosed),
    };
    answer_of(&line)
}

/// The `result` of the answer `line`, or its `error` as [`ServiceError::McpError`].
fn answer_of(line: &[u8]) -> Result<Value, ServiceError> {
    let mut answer =
        serde_json::from_slice::<Value>(line).map_err(|_| ServiceError::UnexpectedResponse)?;
    if let Some(error) = answer.get_mut("error").map(Value::take) {
        let error = serde_json::from_value::<ErrorData>(error)
            .map_err(|_| ServiceError::UnexpectedResponse)?;
        return Err(ServiceError::McpError(error));
    }
    match answer.get_mut("result").map(Value::take) {
        Some(result @ Value::Object(_)) => Ok(result),
        _ => Err(ServiceError::UnexpectedResponse),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_answer_is_its_result_or_its_error() {
        let ok = answer_of(br#"{"jsonrpc":"2.0","id":"fp-1","result":{"task":{"taskId":"a"}}}"#);
        assert_eq!(ok.expect("a result"), json!({ "task": { "taskId": "a" } }));
        let refused = answer_of(
            br#"{"jsonrpc":"2.0","id":"fp-2","error":{"code":-32602,"message":"no such task"}}"#,
        );
        assert!(matches!(refused, Err(ServiceError::McpError(e)) if e.message == "no such task"));
        assert!(matches!(
            answer_of(br#"{"jsonrpc":"2.0","id":"fp-3"}"#),
            Err(ServiceError::UnexpectedResponse)
        ));
    }
}

#[cfg(test)]
mod rmcp_model {
    use rmcp::model::ServerResult;
    use serde_json::json;

    use super::from_rmcp;

    #[test]
    fn tasks_answers_through_rmcp_keep_their_shape_but_ttl_and_poll_interval() {
        let task = json!({ "taskId": "t1", "status": "working", "statusMessage": "go",
            "createdAt": "2026-12-04T00:00:00Z", "lastUpdatedAt": "2026-12-04T00:00:01Z",
            "ttl": 60000, "pollInterval": 1000 });
        let whole = [
            json!({ "task": task }),
            json!({ "tasks": [task], "nextCursor": "2" }),
            json!({ "content": [{ "type": "text", "text": "r" }],
                    "_meta": { "io.modelcontextprotocol/related-task": { "taskId": "t1" } } }),
        ];
        for answer in whole {
            let decoded: ServerResult = serde_json::from_value(answer.clone()).expect("decodes");
            assert_eq!(from_rmcp(decoded).expect("encodes"), answer);
        }
        // rmcp reads a 2025-11-25 `tasks/get` answer as the later extension's, which names
        // `ttl` and `pollInterval` otherwise: those two are lost, nothing else.
        let decoded: ServerResult = serde_json::from_value(task).expect("decodes");
        assert_eq!(
            from_rmcp(decoded).expect("encodes"),
            json!({ "taskId": "t1", "status": "working", "statusMessage": "go",
                "createdAt": "2026-12-04T00:00:00Z", "lastUpdatedAt": "2026-12-04T00:00:01Z" })
        );
    }
}
