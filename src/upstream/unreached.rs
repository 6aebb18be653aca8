//! A server that could not be reached: the connection was never made (refused, unreachable,
//! timed out before it was established), so not one byte of the request was sent and the
//! server certainly did not run it ([`super::http::maybe_delivered`] says no, and the call is
//! sent again after a reconnect, `hub::forward`).
//!
//! Said in plain words, `could not connect to http://127.0.0.1:18931/...: connection refused`,
//! in place of reqwest's and hyper's chain (`error sending request for url (…): client error
//! (Connect): tcp connect error: Connection refused (os error 111)`). Only the socket errors
//! below get words of their own; any other connect failure (an SSRF refusal from the resolver,
//! a TLS failure) keeps its own text, which is ours or the other side's.

use std::error::Error;
use std::io::ErrorKind;

/// `could not connect to <url>: <why>` for a connect failure `r` whose cause is one of the
/// socket errors people know by name; `None` otherwise (not a connect failure, or another
/// cause). The URL is the request's, unredacted: the caller scrubs the whole text.
pub fn words(r: &reqwest::Error) -> Option<String> {
    if !r.is_connect() {
        return None;
    }
    let mut why = None;
    let mut cause: Option<&(dyn Error + 'static)> = r.source();
    while let Some(e) = cause {
        if let Some(words) = e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| socket_words(io.kind()))
        {
            why = Some(words);
            break;
        }
        cause = e.source();
    }
    let why = why?;
    Some(match r.url() {
        Some(url) => format!("could not connect to {url}: {why}"),
        None => format!("could not connect to the server: {why}"),
    })
}

/// The plain words of a socket error that stops a connection being made.
fn socket_words(kind: ErrorKind) -> Option<&'static str> {
    Some(match kind {
        ErrorKind::ConnectionRefused => "connection refused",
        ErrorKind::TimedOut => "the connection timed out",
        ErrorKind::HostUnreachable => "the host is unreachable",
        ErrorKind::NetworkUnreachable => "the network is unreachable",
        ErrorKind::AddrNotAvailable => "the address is not available",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real refused connection: a port that was just listened on and closed again.
    async fn refused() -> (reqwest::Error, String) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
        drop(listener);
        let e = reqwest::Client::new()
            .post(&url)
            .send()
            .await
            .expect_err("nothing listens");
        (e, url)
    }

    #[tokio::test]
    async fn a_refused_connection_is_said_in_plain_words() {
        let (e, url) = refused().await;
        assert_eq!(
            words(&e).as_deref(),
            Some(format!("could not connect to {url}: connection refused").as_str()),
            "{e}"
        );
    }

    #[tokio::test]
    async fn describe_says_a_refused_connection_without_library_words() {
        let (e, _) = refused().await;
        let said = crate::upstream::error_text::describe(&e);
        assert!(
            said.starts_with("could not connect to http://127.0.0.1:"),
            "{said}"
        );
        assert!(said.ends_with(": connection refused"), "{said}");
        for jargon in [
            "client error",
            "os error",
            "tcp connect",
            "error sending request",
        ] {
            assert!(!said.contains(jargon), "{jargon:?} in {said}");
        }
    }

    #[test]
    fn only_socket_errors_that_stop_a_connection_get_words() {
        let cases = [
            (ErrorKind::ConnectionRefused, Some("connection refused")),
            (ErrorKind::TimedOut, Some("the connection timed out")),
            (ErrorKind::PermissionDenied, None),
            (ErrorKind::Other, None),
        ];
        for (kind, want) in cases {
            assert_eq!(socket_words(kind), want, "{kind:?}");
        }
    }
}
