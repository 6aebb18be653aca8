//! Unit tests of [`super::SessionCheck`]: which answers mean the session is gone.

use super::*;
use rmcp::model::{ErrorCode, ErrorData, JsonRpcError, JsonRpcVersion2_0};

fn guard() -> SessionCheck {
    SessionCheck {
        gone: SessionGone::default(),
    }
}

fn id_less_error(message: &str) -> Result<StreamableHttpPostResponse, HttpError> {
    Ok(StreamableHttpPostResponse::Json(
        JsonRpcMessage::Error(JsonRpcError {
            jsonrpc: JsonRpcVersion2_0,
            id: None,
            error: ErrorData::new(ErrorCode(-32000), message.to_owned(), None),
        }),
        None,
    ))
}

#[tokio::test]
async fn a_400_naming_the_session_is_a_gone_session() {
    let g = guard();
    let answer = g.check_post(
        None,
        true,
        id_less_error("Bad Request: No valid session ID provided"),
    );
    assert!(matches!(answer, Err(StreamableHttpError::SessionExpired)));
    assert_eq!(
        g.gone.wait().await,
        Gone::Session("Bad Request: No valid session ID provided (JSON-RPC error -32000)".into())
    );
}

#[tokio::test]
async fn a_404_is_a_gone_session_and_an_unparsable_400_too() {
    let g = guard();
    let answer = g.check_post(None, true, Err(StreamableHttpError::SessionExpired));
    assert!(matches!(answer, Err(StreamableHttpError::SessionExpired)));
    assert_eq!(
        g.gone.wait().await,
        Gone::Session("HTTP 404 Not Found".into())
    );

    let g = guard();
    let answer = g.check_post(None, true, Err(refusal(400, "session abc is unknown")));
    assert!(matches!(answer, Err(StreamableHttpError::SessionExpired)));
    assert_eq!(
        g.gone.wait().await,
        Gone::Session(r#"HTTP 400 Bad Request: "session abc is unknown""#.into())
    );
}

/// A refusal with `status` and `body`, as [`super::super::http_client`] reports it.
fn refusal(status: u16, body: &str) -> HttpError {
    let body = crate::upstream::http_failure::Body {
        bytes: body.as_bytes().to_vec(),
        end: crate::upstream::http_failure::BodyEnd::Whole,
    };
    HttpFailure::new(status, None, &body).into_error()
}

#[tokio::test]
async fn an_event_stream_refused_400_or_404_is_a_gone_session_quoting_the_server() {
    let g = guard();
    let answer = g.check_get(true, Err(refusal(404, "no such session")));
    assert!(answer.is_err());
    assert_eq!(
        g.gone.wait().await,
        Gone::Session(
            r#"the event stream was refused: HTTP 404 Not Found: "no such session""#.into()
        )
    );
    let g = guard();
    let _ = g.check_get(true, Err(refusal(503, "busy")));
    assert!(!g.gone.fired.is_cancelled());
}

#[test]
fn other_errors_and_requests_without_a_session_pass_through() {
    let g = guard();
    // Before initialize there is no session to lose.
    let answer = g.check_post(
        None,
        false,
        id_less_error("Bad Request: No valid session ID provided"),
    );
    assert!(matches!(answer, Ok(StreamableHttpPostResponse::Json(..))));
    let answer = g.check_post(None, true, id_less_error("Parse error"));
    assert!(matches!(answer, Ok(StreamableHttpPostResponse::Json(..))));
    let answer = g.check_post(None, true, Err(refusal(500, "session store is down")));
    assert!(answer.as_ref().is_err_and(|e| HttpFailure::of(e).is_some()));
    assert!(!g.gone.fired.is_cancelled());
}

#[test]
fn an_id_less_error_answering_a_request_is_given_its_id() {
    let g = guard();
    let id = RequestId::Number(7);
    let answer = g.check_post(
        Some(id.clone()),
        true,
        id_less_error("Bad Request: Parse error"),
    );
    let Ok(StreamableHttpPostResponse::Json(JsonRpcMessage::Error(e), _)) = answer else {
        panic!("{answer:?}");
    };
    assert_eq!(e.id, Some(id));
    assert_eq!(e.error.message, "Bad Request: Parse error");
    assert!(!g.gone.fired.is_cancelled());
}

/// A reqwest error from a connection refused on loopback (a port that was just closed).
async fn refused() -> reqwest::Error {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    reqwest::Client::new()
        .get(format!(
            "http://127.0.0.1:{port}/mcp?token=planted-secret-value"
        ))
        .send()
        .await
        .expect_err("nothing listens")
}

#[tokio::test]
async fn an_event_stream_that_cannot_be_reopened_is_a_gone_session() {
    let g = guard();
    let answer = g.check_get(true, Err(StreamableHttpError::Client(refused().await)));
    assert!(answer.is_err());
    let Gone::Session(said) = g.gone.wait().await else {
        panic!("not a gone session")
    };
    assert!(
        said.starts_with("the event stream could not be opened again: ")
            && said.contains("could not connect to http://127.0.0.1:")
            && said.ends_with(": connection refused"),
        "{said}"
    );
    assert!(!said.contains("planted-secret-value"), "{said}");
}

#[tokio::test]
async fn a_refused_event_stream_before_any_session_is_not_a_gone_session() {
    let g = guard();
    let _ = g.check_get(false, Err(StreamableHttpError::Client(refused().await)));
    assert!(!g.gone.fired.is_cancelled());
}
