//! The bottom of the streamable HTTP client stack (MCP 2025-11-25 "Transports", Streamable
//! HTTP): rmcp's [`StreamableHttpClient`] on the guarded `reqwest::Client` ([`crate::net`]),
//! with the POSTs, GETs and DELETEs made here so that a refusal is quoted.
//!
//! rmcp's own client on `reqwest` keeps only the status of a 429 or 5xx answer (and of a
//! refused GET or DELETE): the agent, `status` and the log would read `HTTP 500` and nothing
//! of what the server said. [`GuardedHttp`] answers rmcp as rmcp's client does, except that
//! every refusal carries an [`HttpFailure`] (`HTTP 503 Service Unavailable: "database is
//! down"`, with `Retry-After` for 429; masked, escaped, at most 2 KiB read within 3 s):
//!
//! | answer to a POST | what rmcp gets |
//! |---|---|
//! | 401 / 403 with `WWW-Authenticate` | `AuthRequired` / `InsufficientScope` (sign-in, more scope) |
//! | 202, 204 to a notification or response | `Accepted` |
//! | 202, 204 to a request | [`BadAnswer::NoResult`] (the spec answers a request on its POST) |
//! | 404 to a request carrying our session | `SessionExpired` |
//! | another refusal whose JSON body is a JSON-RPC error (not 401, 403, 429) | that error ([`BadAnswer::NotTheAnswer`] under another request's id) |
//! | `server/discover` refused with a 4xx before any session | a JSON-RPC error answering it |
//! | any other refusal | [`HttpFailure`] |
//! | a success with an event stream | its events, each at most `max_sse_event_size` bytes ([`super::http_events`]) |
//! | a success with JSON | the message (at most `max_json_response_size` bytes); for a request, a [`BadAnswer`] when it is no message or does not answer it |
//! | another success | `Accepted` for a notification or response, else [`BadAnswer::ContentType`] |
//!
//! A GET is refused with `ServerDoesNotSupportSse` on 405, with the challenge on 401/403, else
//! with an [`HttpFailure`]; a DELETE answered 405 is fine (the server keeps no sessions to end).
//! Every connection is made through the guarded client, so the SSRF guard, the configured
//! headers and the redirect rules apply as to everything else.

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use http::{HeaderName, HeaderValue};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, WWW_AUTHENTICATE};
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_LAST_EVENT_ID, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, InsufficientScopeError, StreamableHttpClient, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};

mod refused;

use self::refused::refused_post;
use super::bad_answer::BadAnswer;
use super::http_events::events;
use super::http_failure::HttpFailure;
use super::http_layer::{HttpError, PostAnswer, SseStream};

/// The `Accept` of every POST and GET: both answers the spec allows.
const ACCEPT_BOTH: &str = "text/event-stream, application/json";
/// Headers the transport sets itself; a configured header may not replace them.
/// (`MCP-Protocol-Version` is rmcp's to add, through the same custom headers.)
const RESERVED: [&str; 3] = ["accept", HEADER_SESSION_ID, HEADER_LAST_EVENT_ID];
/// The default event size limit, for rmcp's calls that give none: 16 MiB (rmcp's own).
const DEFAULT_MAX_EVENT: usize = 16 * 1024 * 1024;

/// The guarded `reqwest::Client` as rmcp's streamable HTTP client (see the module docs).
#[derive(Clone)]
pub struct GuardedHttp(pub reqwest::Client);

/// The media type of an answer.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Kind {
    EventStream,
    Json,
    /// Another one (its `Content-Type`), or none.
    Other(Option<String>),
}

pub(super) fn kind(resp: &reqwest::Response) -> Kind {
    let Some(value) = resp.headers().get(CONTENT_TYPE) else {
        return Kind::Other(None);
    };
    let essence = String::from_utf8_lossy(value.as_bytes());
    let essence = essence.split(';').next().unwrap_or("").trim();
    if essence.eq_ignore_ascii_case(EVENT_STREAM_MIME_TYPE) {
        Kind::EventStream
    } else if essence.eq_ignore_ascii_case(JSON_MIME_TYPE) {
        Kind::Json
    } else {
        Kind::Other(Some(String::from_utf8_lossy(value.as_bytes()).into_owned()))
    }
}

/// `builder` with the bearer token, the session id and rmcp's custom headers.
fn with_headers(
    mut builder: reqwest::RequestBuilder,
    session: Option<&str>,
    token: Option<String>,
    custom: HashMap<HeaderName, HeaderValue>,
) -> Result<reqwest::RequestBuilder, HttpError> {
    if let Some(token) = token {
        builder = builder.bearer_auth(token);
    }
    for (name, value) in custom {
        if RESERVED
            .iter()
            .any(|r| name.as_str().eq_ignore_ascii_case(r))
        {
            return Err(StreamableHttpError::ReservedHeaderConflict(
                name.to_string(),
            ));
        }
        builder = builder.header(name, value);
    }
    if let Some(id) = session {
        builder = builder.header(HEADER_SESSION_ID, id);
    }
    Ok(builder)
}

/// The sign-in refusal of a 401 or 403 that carries a `WWW-Authenticate` challenge.
fn challenge(resp: &reqwest::Response) -> Option<HttpError> {
    let status = resp.status();
    if !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
        return None;
    }
    let Ok(header) = resp.headers().get(WWW_AUTHENTICATE)?.to_str() else {
        return Some(StreamableHttpError::UnexpectedServerResponse(
            "invalid www-authenticate header value".into(),
        ));
    };
    let header = header.to_owned();
    Some(if status == StatusCode::UNAUTHORIZED {
        StreamableHttpError::AuthRequired(AuthRequiredError::new(header))
    } else {
        let scope = super::error_text::auth_param(&header, "scope");
        StreamableHttpError::InsufficientScope(InsufficientScopeError::new(header, scope))
    })
}

/// Whether `message` expects no answer (a notification, a response or an error we send).
fn awaits_no_answer(message: &ClientJsonRpcMessage) -> bool {
    !matches!(message, JsonRpcMessage::Request(_))
}

/// The body of a successful JSON answer, at most `max` bytes.
async fn json_body(resp: reqwest::Response, max: usize) -> Result<Vec<u8>, HttpError> {
    let too_large = StreamableHttpError::ResponseBodyTooLarge { max_size: max };
    if resp.content_length().is_some_and(|n| n > max as u64) {
        return Err(too_large);
    }
    let mut stream = resp.bytes_stream();
    let mut body = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        if chunk.len() > max - body.len() {
            return Err(too_large);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

impl StreamableHttpClient for GuardedHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> PostAnswer {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> PostAnswer {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> PostAnswer {
        let attached = session_id.is_some();
        let builder = self.0.post(uri.as_ref()).header(ACCEPT, ACCEPT_BOTH);
        let resp = with_headers(builder, session_id.as_deref(), auth_header, custom_headers)?
            .json(&message)
            .send()
            .await?;
        if let Some(refusal) = challenge(&resp) {
            return Err(refusal);
        }
        let status = resp.status();
        let quiet = awaits_no_answer(&message);
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            if quiet {
                return Ok(StreamableHttpPostResponse::Accepted);
            }
            let status = status.as_u16();
            return Err(BadAnswer::NoResult { status }.into_error());
        }
        if status == StatusCode::NOT_FOUND && attached {
            return Err(StreamableHttpError::SessionExpired);
        }
        let session = resp
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if !status.is_success() {
            return refused_post(resp, &message, attached, session, &limits).await;
        }
        // Some servers answer a notification with an empty 200 instead of 202.
        if quiet && resp.content_length() == Some(0) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        match kind(&resp) {
            Kind::EventStream => Ok(StreamableHttpPostResponse::Sse(
                events(resp, limits.max_sse_event_size),
                session,
            )),
            Kind::Json => {
                let body = json_body(resp, limits.max_json_response_size).await?;
                let kept = super::listing::keep_execution(&body);
                match serde_json::from_slice::<ServerJsonRpcMessage>(
                    kept.as_deref().unwrap_or(&body),
                ) {
                    Ok(answer) => {
                        let status = Some(status.as_u16());
                        match BadAnswer::not_answering(&message, status, &answer) {
                            Some(bad) => Err(bad.into_error()),
                            None => Ok(StreamableHttpPostResponse::Json(answer, session)),
                        }
                    }
                    // Nothing waits for an answer to a notification: its body does not matter.
                    Err(_) if quiet => Ok(StreamableHttpPostResponse::Accepted),
                    Err(_) => Err(BadAnswer::of_body(&body).into_error()),
                }
            }
            Kind::Other(_) if quiet => Ok(StreamableHttpPostResponse::Accepted),
            Kind::Other(content_type) => {
                Err(BadAnswer::content_type(content_type.as_deref()).into_error())
            }
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        let builder = self.0.delete(uri.as_ref());
        let resp = with_headers(builder, Some(&session_id), auth_header, custom_headers)?
            .send()
            .await?;
        if resp.status() == StatusCode::METHOD_NOT_ALLOWED || resp.status().is_success() {
            return Ok(());
        }
        Err(HttpFailure::read(resp).await.into_error())
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<SseStream, HttpError> {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            DEFAULT_MAX_EVENT,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<SseStream, HttpError> {
        let mut builder = self.0.get(uri.as_ref()).header(ACCEPT, ACCEPT_BOTH);
        if let Some(id) = last_event_id {
            builder = builder.header(HEADER_LAST_EVENT_ID, id);
        }
        let resp = with_headers(builder, session_id.as_deref(), auth_header, custom_headers)?
            .send()
            .await?;
        if resp.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if let Some(refusal) = challenge(&resp) {
            return Err(refusal);
        }
        if !resp.status().is_success() {
            return Err(HttpFailure::read(resp).await.into_error());
        }
        match kind(&resp) {
            Kind::EventStream | Kind::Json => Ok(events(resp, max_sse_event_size)),
            Kind::Other(content_type) => {
                Err(StreamableHttpError::UnexpectedContentType(content_type))
            }
        }
    }
}
