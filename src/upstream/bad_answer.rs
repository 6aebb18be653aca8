//! A streamable HTTP server's answer to a request that carries no answer to it, and what came
//! back instead ([`BadAnswer`]): the one text an agent, `status` and the log read for it, on
//! both forwarding paths (rmcp's and the fast lane, which share the client that finds it,
//! [`super::http_client`]).
//!
//! MCP 2025-11-25 "Transports", Streamable HTTP: a POST carrying a request is answered with
//! `application/json` (the response) or `text/event-stream`; `202 Accepted` is for
//! notifications and responses only. An answer that breaks this is no lost connection: the
//! server got the request (so it may have run it) and is still there. The request fails at
//! once instead of waiting out `toolTimeout` for an answer that will not come
//! ([`super::call::CallError::BadAnswer`]).
//!
//! Every quoted part is outside text: masked ([`crate::net::scrub`], [`crate::net::scrub_cut`]
//! for a cut prefix), capped, and quoted with its control characters escaped.

use std::error::Error;

use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::StreamableHttpError;

use super::http_failure::status_line;
use super::http_layer::HttpError;

/// The most bytes of a body quoted in [`BadAnswer::NotJson`] and [`BadAnswer::NotJsonRpc`].
pub const PREFIX_MAX: usize = 120;
/// The most bytes of a parser's complaint, a content type, an id or a message quoted.
const PART_MAX: usize = 200;

/// What a server answered a request with, when that is not its answer (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadAnswer {
    /// A success whose `Content-Type` is neither JSON nor an event stream (the header, masked;
    /// `None` without one).
    #[error("{}", content_type(.0.as_deref()))]
    ContentType(Option<String>),
    /// A JSON answer with no body (or only white space).
    #[error("the server answered with an empty body")]
    EmptyBody,
    /// A JSON answer that does not parse as JSON.
    #[error("the server's answer is not JSON: {error}: {start}")]
    NotJson {
        /// The parser's complaint (`expected value at line 1 column 1`).
        error: String,
        /// The body's first bytes.
        start: Prefix,
    },
    /// JSON that is no JSON-RPC message (rmcp's parser says no more than that).
    #[error("the server's answer is not a JSON-RPC message: {start}")]
    NotJsonRpc {
        /// The body's first bytes.
        start: Prefix,
    },
    /// A result whose `content` is malformed: which block and which field ([`content_problem`]).
    #[error("the server sent an invalid result: {0}")]
    InvalidResult(String),
    /// A body larger than the client reads.
    #[error("the server's answer is larger than {max_size} bytes")]
    TooLarge {
        /// The limit, in bytes.
        max_size: usize,
    },
    /// `202 Accepted` or `204 No Content` answering a request.
    #[error("the server answered {} with no result", status_line(*.status))]
    NoResult {
        /// The HTTP status.
        status: u16,
    },
    /// A JSON-RPC message that does not answer the request.
    #[error("the server answered {}with {what}", status_prefix(*.status))]
    NotTheAnswer {
        /// The HTTP status, when known.
        status: Option<u16>,
        /// What the message was.
        what: Other,
    },
}

/// A JSON-RPC message that answers another request, or answers none ([`BadAnswer::NotTheAnswer`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Other {
    /// A result under another id (the id as JSON, capped).
    #[error("a result for another request (id {id})")]
    Result {
        /// The id it carries.
        id: String,
    },
    /// An error under another id.
    #[error("a JSON-RPC error for another request (id {id}): {message} (JSON-RPC error {code})")]
    Error {
        /// The id it carries.
        id: String,
        /// Its code.
        code: i32,
        /// Its message, masked and capped.
        message: String,
    },
    /// A request or notification of the server's own (`method` is its method, capped).
    #[error("a \"{method}\" {kind} instead of the result")]
    Message {
        /// `request` or `notification`.
        kind: &'static str,
        /// Its method.
        method: String,
    },
}

/// The first bytes of a body ([`PREFIX_MAX`] at most): masked, as UTF-8 (invalid bytes
/// replaced); shown quoted with its control characters escaped, and `(its first 120 bytes)`
/// after it when the body is longer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prefix {
    /// The bytes kept, masked, not escaped.
    pub text: String,
    /// Whether the body went on.
    pub cut: bool,
}

impl Prefix {
    /// The start of `body`.
    pub fn of(body: &[u8]) -> Prefix {
        let cut = body.len() > PREFIX_MAX;
        let mut kept = &body[..body.len().min(PREFIX_MAX)];
        // A character the cut split in two is dropped, not replaced.
        if let Err(e) = std::str::from_utf8(kept)
            && cut
            && e.error_len().is_none()
        {
            kept = &kept[..e.valid_up_to()];
        }
        let text = String::from_utf8_lossy(kept);
        let text = if cut {
            crate::net::scrub_cut(text.trim_start())
        } else {
            crate::net::scrub(text.trim())
        };
        Prefix { text, cut }
    }
}

impl std::fmt::Display for Prefix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.text)?;
        if self.cut {
            write!(f, " (its first {PREFIX_MAX} bytes)")?;
        }
        Ok(())
    }
}

impl BadAnswer {
    /// A success answered with `Content-Type` `header` (`None`: without one), masked and capped.
    pub fn content_type(header: Option<&str>) -> BadAnswer {
        BadAnswer::ContentType(header.map(|h| part(&crate::net::scrub(h))))
    }

    /// What the JSON answer `body` is, when it did not parse as a JSON-RPC message.
    pub fn of_body(body: &[u8]) -> BadAnswer {
        if body.iter().all(u8::is_ascii_whitespace) {
            return BadAnswer::EmptyBody;
        }
        let value = match serde_json::from_slice::<serde_json::Value>(body) {
            Ok(value) => value,
            Err(syntax) => {
                return BadAnswer::NotJson {
                    error: part(&syntax.to_string()),
                    start: Prefix::of(body),
                };
            }
        };
        if let Some(problem) = value.get("result").and_then(content_problem) {
            return BadAnswer::InvalidResult(problem);
        }
        BadAnswer::NotJsonRpc {
            start: Prefix::of(body),
        }
    }

    /// What `answer` is when it does not answer `message`, sent with HTTP `status`
    /// ([`Self::not_the_answer`]); `None` when it does, and when `message` is no request.
    pub fn not_answering(
        message: &ClientJsonRpcMessage,
        status: Option<u16>,
        answer: &ServerJsonRpcMessage,
    ) -> Option<BadAnswer> {
        match message {
            JsonRpcMessage::Request(request) => Self::not_the_answer(&request.id, status, answer),
            _ => None,
        }
    }

    /// What `answer` is when it does not answer request `request`, sent with HTTP `status`:
    /// a result or error under another id, or a message of the server's own. `None` when it
    /// answers it — an error without an id included (the server could not read the request's).
    pub fn not_the_answer(
        request: &RequestId,
        status: Option<u16>,
        answer: &ServerJsonRpcMessage,
    ) -> Option<BadAnswer> {
        let what = match answer {
            JsonRpcMessage::Response(r) if answers(request, &r.id) => return None,
            JsonRpcMessage::Error(e) if e.id.as_ref().is_none_or(|id| answers(request, id)) => {
                return None;
            }
            JsonRpcMessage::Response(r) => Other::Result { id: id_text(&r.id) },
            JsonRpcMessage::Error(e) => Other::Error {
                id: e.id.as_ref().map(id_text).unwrap_or_default(),
                code: e.error.code.0,
                message: part(&crate::net::scrub_known(&e.error.message)),
            },
            JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => Other::Message {
                kind: if matches!(answer, JsonRpcMessage::Request(_)) {
                    "request"
                } else {
                    "notification"
                },
                method: serde_json::to_value(answer)
                    .ok()
                    .and_then(|v| v.get("method")?.as_str().map(part))
                    .unwrap_or_default(),
            },
        };
        Some(BadAnswer::NotTheAnswer { status, what })
    }

    /// What kind of answer it was, without the server's words (no body, id, message or
    /// content type): for the activity log's detail.
    pub fn summary(&self) -> String {
        match self {
            BadAnswer::ContentType(_) => "the server answered with the wrong content type".into(),
            BadAnswer::NotJson { .. } => "the server's answer is not JSON".into(),
            BadAnswer::NotJsonRpc { .. } => "the server's answer is not a JSON-RPC message".into(),
            BadAnswer::InvalidResult(_) => "the server sent an invalid result".into(),
            BadAnswer::NotTheAnswer { status, what } => {
                let what = match what {
                    Other::Result { .. } => "a result for another request",
                    Other::Error { .. } => "a JSON-RPC error for another request",
                    Other::Message {
                        kind: "request", ..
                    } => "a request of its own",
                    Other::Message { .. } => "a notification",
                };
                format!("the server answered {}with {what}", status_prefix(*status))
            }
            BadAnswer::EmptyBody | BadAnswer::TooLarge { .. } | BadAnswer::NoResult { .. } => {
                self.to_string()
            }
        }
    }

    /// This answer as the streamable HTTP client's error (found again by [`Self::of`]).
    pub fn into_error(self) -> HttpError {
        StreamableHttpError::Io(std::io::Error::other(self))
    }

    /// The bad answer `e` carries, when it is one of ours ([`Self::into_error`]).
    pub fn of(e: &HttpError) -> Option<&BadAnswer> {
        match e {
            StreamableHttpError::Io(io) => io.get_ref()?.downcast_ref::<BadAnswer>(),
            _ => None,
        }
    }

    /// The bad answer anywhere in `e` and its sources: ours, or rmcp's own words for one
    /// (a wrong content type, a body over the limit).
    pub fn find(e: &(dyn Error + 'static)) -> Option<BadAnswer> {
        let mut next = Some(e);
        while let Some(err) = next {
            let found = match err.downcast_ref::<HttpError>() {
                Some(StreamableHttpError::UnexpectedContentType(kind)) => {
                    Some(BadAnswer::content_type(kind.as_deref()))
                }
                Some(StreamableHttpError::ResponseBodyTooLarge { max_size }) => {
                    Some(BadAnswer::TooLarge {
                        max_size: *max_size,
                    })
                }
                Some(other) => BadAnswer::of(other).cloned(),
                None => None,
            };
            if found.is_some() {
                return found;
            }
            next = err.source();
        }
        None
    }
}

/// Whether response id `response` answers request id `request`: the same id, or — as rmcp
/// matches them — a string spelling the request's number.
fn answers(request: &RequestId, response: &RequestId) -> bool {
    request == response
        || matches!(
            (request, response),
            (RequestId::Number(n), RequestId::String(s)) if s.parse::<i64>().ok() == Some(*n)
        )
}

/// An id as JSON (`999`, `"abc"`), masked and capped.
fn id_text(id: &RequestId) -> String {
    part(&crate::net::scrub_known(
        &serde_json::to_string(id).unwrap_or_default(),
    ))
}

/// `text` capped at [`PART_MAX`] bytes.
fn part(text: &str) -> String {
    crate::net::capped_at(text, PART_MAX).into_owned()
}

/// `HTTP 500 Internal Server Error ` for a known status, else nothing.
fn status_prefix(status: Option<u16>) -> String {
    status
        .map(|s| format!("{} ", status_line(s)))
        .unwrap_or_default()
}

/// `the server answered with content type "text/plain", not application/json or
/// text/event-stream` (the type quoted as a JSON string).
fn content_type(kind: Option<&str>) -> String {
    match kind {
        Some(kind) => format!(
            "the server answered with content type {}, not application/json or text/event-stream",
            serde_json::Value::from(kind)
        ),
        None => "the server answered without a content type, not with application/json or text/event-stream".to_owned(),
    }
}

/// The content block types of MCP 2025-06-18 `CallToolResult.content` and the fields each
/// requires.
const BLOCKS: &[(&str, &[&str])] = &[
    ("text", &["text"]),
    ("image", &["data", "mimeType"]),
    ("audio", &["data", "mimeType"]),
    ("resource_link", &["uri", "name"]),
    ("resource", &["resource"]),
];

/// The first problem in `result.content`: `content block 1: field "type" is "blob" (expected
/// one of text, image, audio, resource_link, resource)`; `None` when every block is well formed.
pub fn content_problem(result: &serde_json::Value) -> Option<String> {
    let blocks = result.get("content")?.as_array()?;
    for (i, block) in blocks.iter().enumerate() {
        let Some(obj) = block.as_object() else {
            return Some(format!("content block {i} is not an object"));
        };
        let Some(kind) = obj.get("type").and_then(|t| t.as_str()) else {
            return Some(format!("content block {i}: field \"type\" is missing"));
        };
        let Some((_, required)) = BLOCKS.iter().find(|(name, _)| *name == kind) else {
            let known: Vec<&str> = BLOCKS.iter().map(|(name, _)| *name).collect();
            return Some(format!(
                "content block {i}: field \"type\" is {} (expected one of {})",
                serde_json::Value::from(part(kind)),
                known.join(", ")
            ));
        };
        for field in *required {
            let ok = match obj.get(*field) {
                Some(serde_json::Value::String(_)) => *field != "resource",
                Some(serde_json::Value::Object(_)) => *field == "resource",
                _ => false,
            };
            if !ok {
                return Some(format!(
                    "content block {i} (type \"{kind}\"): field \"{field}\" is missing or not a {}",
                    if *field == "resource" {
                        "object"
                    } else {
                        "string"
                    }
                ));
            }
        }
    }
    None
}

#[cfg(test)]
#[path = "bad_answer_tests.rs"]
mod tests;
