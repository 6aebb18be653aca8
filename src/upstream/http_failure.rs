//! What a remote server said when it refused a request with an HTTP error status: the status
//! line, the start of the body and, for 429 and 503, `Retry-After` — as one line an agent, a
//! status field and the log can carry: `HTTP 503 Service Unavailable: "database is down"`.
//!
//! The body is outside text: at most [`QUOTE_MAX`] bytes of it are read, for at most
//! [`BODY_WAIT`] (a server that sends the headers and then stalls the body cannot hang the
//! request); it is masked with the one redaction mechanism ([`crate::net::scrub_cut`]: URLs,
//! every remembered secret, and a secret cut at the end), and quoted with its control
//! characters, quotes and backslashes escaped, so it cannot forge log lines or terminal output.
//!
//! Used by the streamable HTTP client ([`super::http_client`]) for every refused POST, GET and
//! DELETE, and by the legacy SSE transport ([`super::sse`]).

use std::time::Duration;

use futures::StreamExt;
use rmcp::transport::streamable_http_client::StreamableHttpError;

use super::http_layer::HttpError;

/// The most bytes of a refusal's body quoted: 2 KiB.
pub const QUOTE_MAX: usize = 2048;
/// How long the body of a refusal may take to arrive after its headers.
pub const BODY_WAIT: Duration = Duration::from_secs(3);
/// The most bytes of a `Retry-After` value quoted (a date is 29).
const RETRY_AFTER_MAX: usize = 64;

/// How much of a body arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyEnd {
    /// All of it.
    Whole,
    /// More than was read: the rest was dropped unread.
    Cut,
    /// The rest did not arrive within [`BODY_WAIT`].
    Stalled,
    /// The connection failed while it was read.
    Broken,
}

/// The start of a response body: up to the `max` bytes asked for, and how it ended.
#[derive(Debug)]
pub struct Body {
    /// The bytes read (at most `max`).
    pub bytes: Vec<u8>,
    /// Whether that is all of it.
    pub end: BodyEnd,
}

/// Reads at most `max` bytes of `resp`'s body, waiting at most [`BODY_WAIT`] for them.
pub async fn read_body(resp: reqwest::Response, max: usize) -> Body {
    let deadline = tokio::time::Instant::now() + BODY_WAIT;
    let mut stream = resp.bytes_stream();
    let mut bytes = Vec::new();
    let end = loop {
        match tokio::time::timeout_at(deadline, stream.next()).await {
            Err(_) => break BodyEnd::Stalled,
            Ok(None) => break BodyEnd::Whole,
            Ok(Some(Err(_))) => break BodyEnd::Broken,
            Ok(Some(Ok(chunk))) => {
                if chunk.len() > max - bytes.len() {
                    bytes.extend_from_slice(&chunk[..max - bytes.len()]);
                    break BodyEnd::Cut;
                }
                bytes.extend_from_slice(&chunk);
            }
        }
    };
    Body { bytes, end }
}

/// A refusal as the server sent it, masked and escaped (see the module docs); its `Display`
/// is the one line people read: `HTTP 429 Too Many Requests: "slow down" (Retry-After: 30)`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.line())]
pub struct HttpFailure {
    /// The HTTP status code.
    pub status: u16,
    /// The start of the body, masked, as UTF-8 (invalid bytes replaced), trimmed; not escaped.
    pub body: String,
    /// How much of the body arrived.
    pub end: BodyEnd,
    /// The `Retry-After` header (a delay in seconds or an HTTP date), masked, when present.
    pub retry_after: Option<String>,
}

impl HttpFailure {
    /// The failure of `resp` (whose status is not a success), reading its body.
    pub async fn read(resp: reqwest::Response) -> HttpFailure {
        let (status, retry_after) = head(&resp);
        let body = read_body(resp, QUOTE_MAX).await;
        HttpFailure::new(status, retry_after, &body)
    }

    /// The failure with status `status`, `Retry-After` value `retry_after` and `body` (only
    /// its first [`QUOTE_MAX`] bytes are kept).
    pub fn new(status: u16, retry_after: Option<String>, body: &Body) -> HttpFailure {
        let kept = &body.bytes[..body.bytes.len().min(QUOTE_MAX)];
        let end = match body.end {
            BodyEnd::Whole if kept.len() < body.bytes.len() => BodyEnd::Cut,
            end => end,
        };
        let text = String::from_utf8_lossy(kept);
        let body = match end {
            BodyEnd::Whole => crate::net::scrub(text.trim()),
            _ => crate::net::scrub_cut(text.trim_start())
                .trim_end()
                .to_owned(),
        };
        let retry_after = retry_after.map(|v| crate::net::scrub(v.trim()));
        HttpFailure {
            status,
            body,
            end,
            retry_after,
        }
    }

    /// `HTTP 503 Service Unavailable: "database is down"` (see the type's docs).
    fn line(&self) -> String {
        let mut out = status_line(self.status);
        if !self.body.is_empty() {
            out.push_str(&format!(": {:?}", self.body));
            match self.end {
                BodyEnd::Whole => {}
                BodyEnd::Cut => out.push_str(&format!(" (its first {QUOTE_MAX} bytes)")),
                BodyEnd::Stalled => out.push_str(&format!(
                    " (the rest of the body did not arrive within {} s)",
                    BODY_WAIT.as_secs()
                )),
                BodyEnd::Broken => out.push_str(" (the connection broke in the body)"),
            }
        } else if self.end == BodyEnd::Stalled {
            out.push_str(&format!(
                " (the body did not arrive within {} s)",
                BODY_WAIT.as_secs()
            ));
        }
        if let Some(after) = &self.retry_after {
            out.push_str(&format!(" (Retry-After: {})", after.escape_debug()));
        }
        out
    }

    /// The `Retry-After` value as a delay, when it is delay-seconds (`"30"`).
    pub fn retry_delay(&self) -> Option<std::time::Duration> {
        self.retry_after
            .as_deref()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(std::time::Duration::from_secs)
    }

    /// This failure as the streamable HTTP client's error (see [`Self::of`]).
    pub fn into_error(self) -> HttpError {
        StreamableHttpError::Io(std::io::Error::other(self))
    }

    /// The failure `e` carries, when it is one of ours ([`Self::into_error`]).
    pub fn of(e: &HttpError) -> Option<&HttpFailure> {
        match e {
            StreamableHttpError::Io(io) => io.get_ref()?.downcast_ref::<HttpFailure>(),
            _ => None,
        }
    }
}

/// The status of `resp` and its `Retry-After` value (at most 64 bytes; else none).
pub fn head(resp: &reqwest::Response) -> (u16, Option<String>) {
    let retry_after = resp
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .filter(|v| v.len() <= RETRY_AFTER_MAX)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    (resp.status().as_u16(), retry_after)
}

/// `HTTP 401 Unauthorized`.
pub fn status_line(status: u16) -> String {
    let reason = reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    format!("HTTP {status} {reason}").trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(text: &str, end: BodyEnd) -> Body {
        Body {
            bytes: text.as_bytes().to_vec(),
            end,
        }
    }

    #[test]
    fn a_refusal_reads_as_status_quoted_body_and_retry_after() {
        let cases = [
            (
                503,
                None,
                body("database is down\n", BodyEnd::Whole),
                r#"HTTP 503 Service Unavailable: "database is down""#.to_owned(),
            ),
            (
                429,
                Some("30".to_owned()),
                body("slow down", BodyEnd::Whole),
                r#"HTTP 429 Too Many Requests: "slow down" (Retry-After: 30)"#.to_owned(),
            ),
            (
                500,
                None,
                body("", BodyEnd::Whole),
                "HTTP 500 Internal Server Error".to_owned(),
            ),
            (
                502,
                None,
                body("line one\r\n\u{1b}[31mforged\u{7}\"q\"\\", BodyEnd::Whole),
                r#"HTTP 502 Bad Gateway: "line one\r\n\u{1b}[31mforged\u{7}\"q\"\\""#.to_owned(),
            ),
            (
                500,
                None,
                body("partial", BodyEnd::Stalled),
                format!(
                    r#"HTTP 500 Internal Server Error: "partial" (the rest of the body did not arrive within {} s)"#,
                    BODY_WAIT.as_secs()
                ),
            ),
            (
                500,
                None,
                body(&"x".repeat(QUOTE_MAX + 10), BodyEnd::Whole),
                format!(
                    r#"HTTP 500 Internal Server Error: "{}" (its first {QUOTE_MAX} bytes)"#,
                    "x".repeat(QUOTE_MAX)
                ),
            ),
        ];
        for (status, retry_after, body, want) in cases {
            assert_eq!(
                HttpFailure::new(status, retry_after, &body).to_string(),
                want
            );
        }
    }

    #[test]
    fn a_failure_rides_in_the_client_error_and_is_found_again() {
        let failure = HttpFailure::new(503, None, &body("down", BodyEnd::Whole));
        let e = failure.clone().into_error();
        assert_eq!(HttpFailure::of(&e), Some(&failure));
        assert_eq!(HttpFailure::of(&StreamableHttpError::SessionExpired), None);
    }
}
