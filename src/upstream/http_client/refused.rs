//! The answer rmcp gets for a POST the server refused with an error status ([`refused_post`]):
//! the JSON-RPC error its body holds when that answers the request, else the quoted refusal
//! ([`HttpFailure`]); and the fallback answer of a `server/discover` a server of an older
//! revision refuses ([`discover_refused`]).

use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorData, JsonRpcMessage, ServerJsonRpcMessage,
};
use rmcp::transport::streamable_http_client::{
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};

use super::{Kind, kind};
use crate::upstream::bad_answer::BadAnswer;
use crate::upstream::http_failure::{self, BodyEnd, HttpFailure, QUOTE_MAX};
use crate::upstream::http_layer::PostAnswer;

/// The answer rmcp gets for a refused POST (see the module docs).
///
/// A JSON-RPC error in the body under another request's id answers nobody: the request fails
/// at once with [`BadAnswer::NotTheAnswer`] naming it, instead of waiting out its timeout.
pub(super) async fn refused_post(
    resp: reqwest::Response,
    message: &ClientJsonRpcMessage,
    attached: bool,
    session: Option<String>,
    limits: &StreamableHttpResponseLimits,
) -> PostAnswer {
    let (status, retry_after) = http_failure::head(&resp);
    // The JSON body of a refusal may be the JSON-RPC error answering the request: read whole.
    let rpc = kind(&resp) == Kind::Json && !matches!(status, 401 | 403 | 429);
    let max = if rpc {
        limits.max_json_response_size.max(QUOTE_MAX)
    } else {
        QUOTE_MAX
    };
    let body = http_failure::read_body(resp, max).await;
    if rpc
        && body.end == BodyEnd::Whole
        && let Ok(JsonRpcMessage::Error(e)) =
            serde_json::from_slice::<ServerJsonRpcMessage>(&body.bytes)
    {
        if let Some(answer) = discover_refused(message, attached, status, || e.error.clone()) {
            return Ok(answer);
        }
        let answer = JsonRpcMessage::Error(e);
        if let Some(bad) = BadAnswer::not_answering(message, Some(status), &answer) {
            return Err(bad.into_error());
        }
        return Ok(StreamableHttpPostResponse::Json(answer, session));
    }
    let failure = HttpFailure::new(status, retry_after, &body);
    let refused =
        || ErrorData::invalid_request(format!("server/discover refused: {failure}"), None);
    if let Some(answer) = discover_refused(message, attached, status, refused) {
        return Ok(answer);
    }
    Err(failure.into_error())
}

/// A `server/discover` sent before any session and refused with a 4xx (other than 401/403)
/// is answered with `error()`, under its id: the server does not speak 2026-07-28, and
/// rmcp's lifecycle reads that answer to fall back to `initialize`.
fn discover_refused(
    message: &ClientJsonRpcMessage,
    attached: bool,
    status: u16,
    error: impl FnOnce() -> ErrorData,
) -> Option<StreamableHttpPostResponse> {
    if attached || !(400..500).contains(&status) || matches!(status, 401 | 403) {
        return None;
    }
    let JsonRpcMessage::Request(request) = message else {
        return None;
    };
    if !matches!(request.request, ClientRequest::DiscoverRequest(_)) {
        return None;
    }
    Some(StreamableHttpPostResponse::Json(
        ServerJsonRpcMessage::error(error(), Some(request.id.clone())),
        None,
    ))
}
