//! What a failed remote request says to people: the HTTP status, the server's own error text,
//! and for 401/403 the `error` and `error_description` of its `WWW-Authenticate` challenge
//! (RFC 6750 §3) — never a Rust `Debug` dump or a type name (rmcp's transport errors carry
//! `Transport [rmcp::transport::worker::WorkerTransport<…>] error`), and every URL redacted.
//!
//! [`describe`] walks an error and its sources, renders the rmcp and reqwest errors it knows,
//! skips the wrappers that only add a type name, and scrubs the result ([`crate::net::scrub`]).

use std::error::Error;

use rmcp::ErrorData;
use rmcp::service::{ClientInitializeError, ServiceError};
use rmcp::transport::DynamicTransportError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

use super::bad_answer::BadAnswer;
use super::http_failure::{HttpFailure, status_line};

/// The text of `e` for a status field or an agent: see the module docs.
pub fn describe(e: &(dyn Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    collect(e, &mut parts);
    crate::net::scrub(&parts.join(": "))
}

/// The `Retry-After` delay of the HTTP refusal inside `e` (walked like [`describe`]), when the
/// server sent one in delay-seconds (RFC 9110 §10.2.3; an HTTP-date is quoted in the text but
/// not waited for).
pub fn retry_after(e: &(dyn Error + 'static)) -> Option<std::time::Duration> {
    if let Some(s) = e.downcast_ref::<ServiceError>()
        && let ServiceError::TransportSend(d) = s
    {
        return retry_after(d.error.as_ref());
    }
    if let Some(d) = e.downcast_ref::<DynamicTransportError>() {
        return retry_after(d.error.as_ref());
    }
    if let Some(ClientInitializeError::TransportError { error, .. }) =
        e.downcast_ref::<ClientInitializeError>()
    {
        return retry_after(error.error.as_ref());
    }
    if let Some(h) = e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        return HttpFailure::of(h).and_then(HttpFailure::retry_delay);
    }
    e.source().and_then(retry_after)
}

fn push(parts: &mut Vec<String>, text: String) {
    if !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
        parts.push(text);
    }
}

fn collect(e: &(dyn Error + 'static), parts: &mut Vec<String>) {
    if let Some(s) = e.downcast_ref::<ServiceError>() {
        return match s {
            ServiceError::TransportSend(d) => collect(d.error.as_ref(), parts),
            ServiceError::McpError(d) => push(parts, rpc_error(d)),
            ServiceError::TransportClosed => push(parts, "the connection closed".to_owned()),
            other => push(parts, other.to_string()),
        };
    }
    if let Some(d) = e.downcast_ref::<DynamicTransportError>() {
        return collect(d.error.as_ref(), parts);
    }
    if let Some(c) = e.downcast_ref::<ClientInitializeError>() {
        return match c {
            ClientInitializeError::TransportError { error, context } => {
                push(parts, format!("cannot {context}"));
                collect(error.error.as_ref(), parts);
            }
            ClientInitializeError::JsonRpcError(d) => {
                push(
                    parts,
                    format!("the server refused initialize: {}", rpc_error(d)),
                );
            }
            ClientInitializeError::ExpectedInitResponse(Some(m)) => push(
                parts,
                format!(
                    "the server answered initialize with {}",
                    json_shape(&serde_json::to_value(m).unwrap_or_default())
                ),
            ),
            ClientInitializeError::ExpectedInitResult(Some(r)) => push(
                parts,
                format!(
                    "the server answered initialize with {} instead of an initialize result",
                    json_shape(&serde_json::to_value(r).unwrap_or_default())
                ),
            ),
            ClientInitializeError::ExpectedInitResponse(None)
            | ClientInitializeError::ExpectedInitResult(None) => push(
                parts,
                "the connection closed before the initialize answer".to_owned(),
            ),
            ClientInitializeError::ConnectionClosed(context) => {
                push(parts, format!("the connection closed during {context}"));
            }
            other => push(parts, other.to_string()),
        };
    }
    if let Some(h) = e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        return match h {
            StreamableHttpError::AuthRequired(a) => {
                push(parts, challenge(401, &a.www_authenticate_header));
            }
            StreamableHttpError::InsufficientScope(i) => {
                push(parts, challenge(403, &i.www_authenticate_header));
            }
            StreamableHttpError::HttpStatus(s) => push(parts, status_line(s.status)),
            StreamableHttpError::Io(_) if HttpFailure::of(h).is_some() => {
                push(
                    parts,
                    HttpFailure::of(h)
                        .map(ToString::to_string)
                        .unwrap_or_default(),
                );
            }
            StreamableHttpError::Client(r) => collect(r, parts),
            _ if BadAnswer::find(h).is_some() => push(
                parts,
                BadAnswer::find(h)
                    .map(|bad| bad.to_string())
                    .unwrap_or_default(),
            ),
            other => push(parts, other.to_string()),
        };
    }
    if let Some(words) = e
        .downcast_ref::<reqwest::Error>()
        .and_then(super::unreached::words)
    {
        return push(parts, words);
    }
    push(parts, e.to_string());
    if let Some(source) = e.source() {
        collect(source, parts);
    }
}

/// What a non-success HTTP response says, for our own HTTP requests outside rmcp (the legacy
/// SSE transport): `HTTP 401 Unauthorized: invalid_token: …` from a 401/403 challenge, else
/// the [`HttpFailure`] (status line, the start of the body quoted, `Retry-After`), masked.
pub async fn http_failure(resp: reqwest::Response) -> String {
    let status = resp.status().as_u16();
    let challenge_header = resp
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if let (401 | 403, Some(header)) = (status, &challenge_header) {
        return crate::net::scrub(&challenge(status, header));
    }
    crate::net::scrub(&HttpFailure::read(resp).await.to_string())
}

/// `invalid params (JSON-RPC error -32602)`.
fn rpc_error(d: &ErrorData) -> String {
    format!(
        "{} (JSON-RPC error {})",
        crate::net::scrub_known(&d.message),
        d.code.0
    )
}

/// `HTTP 401 Unauthorized: invalid_token: The access token expired`, from the challenge's
/// `error` and `error_description`; the whole challenge when it has neither.
fn challenge(status: u16, header: &str) -> String {
    let params = auth_params(header);
    let get = |k: &str| {
        params
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(k))
            .map(|(_, v)| v.as_str())
    };
    let mut out = status_line(status);
    match (get("error"), get("error_description")) {
        (None, None) => out.push_str(&format!(
            ": the server requires authorization (WWW-Authenticate: {header})"
        )),
        (error, description) => {
            for part in [error, description].into_iter().flatten() {
                out.push_str(": ");
                out.push_str(part);
            }
        }
    }
    if let Some(scope) = get("scope") {
        out.push_str(&format!(" (scope: {scope})"));
    }
    out
}

/// The value of auth-param `key` (any case) of challenge `header`: `scope` of
/// `Bearer error="insufficient_scope", scope="files:write"` is `files:write`.
pub fn auth_param(header: &str, key: &str) -> Option<String> {
    auth_params(header)
        .into_iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v)
}

/// The `key=value` auth-params of a challenge (`Bearer realm="x", error="invalid_token"`),
/// quoted-string values unescaped.
fn auth_params(header: &str) -> Vec<(String, String)> {
    let mut rest = header.trim();
    // The scheme is the first token unless it is already a param.
    if let Some(space) = rest.find(' ')
        && !rest[..space].contains('=')
    {
        rest = rest[space..].trim_start();
    }
    let mut out = Vec::new();
    while !rest.is_empty() {
        let Some(eq) = rest.find('=') else { break };
        let key = rest[..eq].trim().trim_start_matches(',').trim().to_owned();
        rest = rest[eq + 1..].trim_start();
        let value = if let Some(quoted) = rest.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, escaped)) = chars.next() {
                            value.push(escaped);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => value.push(c),
                }
            }
            rest = &quoted[end.min(quoted.len())..];
            value
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            let value = rest[..end].trim().to_owned();
            rest = &rest[end..];
            value
        };
        rest = rest.trim_start().trim_start_matches(',').trim_start();
        out.push((key, value));
    }
    out
}

/// `a JSON-RPC error -32602 "bad version"` / `a result with fields tools, nextCursor`: what a
/// message is, by its JSON shape.
fn json_shape(v: &serde_json::Value) -> String {
    if let Some(err) = v.get("error") {
        let code = err.get("code").map(|c| c.to_string()).unwrap_or_default();
        let message = err.get("message").and_then(|m| m.as_str()).unwrap_or("");
        return format!(
            "JSON-RPC error {code}: {}",
            crate::net::scrub_known(message)
        );
    }
    let body = v.get("result").unwrap_or(v);
    match body.as_object() {
        Some(map) if !map.is_empty() => {
            let names: Vec<&str> = map.keys().map(String::as_str).take(8).collect();
            format!("a result with fields {}", names.join(", "))
        }
        _ => match v.get("method").and_then(|m| m.as_str()) {
            Some(method) => format!("a {method} message"),
            None => "an empty result".to_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_name_status_error_and_description() {
        let cases = [
            (
                401,
                r#"Bearer realm="mcp", error="invalid_token", error_description="The access token expired""#,
                "HTTP 401 Unauthorized: invalid_token: The access token expired",
            ),
            (
                403,
                r#"Bearer error="insufficient_scope", scope="files:write", error_description="needs \"write\"""#,
                r#"HTTP 403 Forbidden: insufficient_scope: needs "write" (scope: files:write)"#,
            ),
            (
                401,
                r#"Bearer realm="example""#,
                r#"HTTP 401 Unauthorized: the server requires authorization (WWW-Authenticate: Bearer realm="example")"#,
            ),
            (
                401,
                "Basic error=bad_creds",
                "HTTP 401 Unauthorized: bad_creds",
            ),
        ];
        for (status, header, want) in cases {
            assert_eq!(challenge(status, header), want, "{header}");
        }
    }

    #[test]
    fn transport_wrappers_add_no_type_names() {
        let inner = StreamableHttpError::<reqwest::Error>::AuthRequired(
            rmcp::transport::streamable_http_client::AuthRequiredError::new(
                r#"Bearer error="invalid_token", error_description="expired""#.to_owned(),
            ),
        );
        let wrapped = ServiceError::TransportSend(DynamicTransportError::from_parts(
            "rmcp::transport::worker::WorkerTransport<Some<Type>>",
            std::any::TypeId::of::<()>(),
            Box::new(inner),
        ));
        let text = describe(&wrapped);
        assert_eq!(text, "HTTP 401 Unauthorized: invalid_token: expired");
    }

    #[test]
    fn an_unexpected_initialize_answer_is_described_not_dumped() {
        let result = rmcp::model::ServerResult::empty(());
        let e = ClientInitializeError::ExpectedInitResult(Some(result));
        let text = describe(&e);
        assert!(
            text.starts_with("the server answered initialize with"),
            "{text}"
        );
        assert!(
            !text.contains("EmptyResult") && !text.contains("Some("),
            "{text}"
        );
    }

    #[test]
    fn initialize_refusals_quote_the_server() {
        let e = ClientInitializeError::JsonRpcError(ErrorData::invalid_params(
            "unsupported protocol version",
            None,
        ));
        assert_eq!(
            describe(&e),
            "the server refused initialize: unsupported protocol version (JSON-RPC error -32602)"
        );
        let closed = ClientInitializeError::ConnectionClosed("initialize response".into());
        assert!(
            !describe(&closed).contains("Error"),
            "{}",
            describe(&closed)
        );
    }
}
