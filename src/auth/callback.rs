//! The one-shot loopback redirect listener (RFC 8252 §7.3): `http://127.0.0.1:<random
//! port>/callback`, bound before the browser opens, closed after the first answer that carries
//! the expected `state`.
//!
//! A request with another `state` (a stale tab, a forged link) is answered with an error page
//! and ignored; the listener keeps waiting. An `error=…` redirect (the user clicked "Deny")
//! ends the wait with [`CallbackError::Denied`], quoting the authorization server.
//!
//! The request head is parsed with `httparse` (hyper's parser): a head that is not HTTP/1.x,
//! or is not complete within 16 KiB and 10 s, is dropped unanswered. Connections are read
//! concurrently (at most 64 at once, the oldest closed first beyond that), so another local
//! process holding connections open cannot delay or block the browser's redirect.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// The path the authorization server redirects to.
pub const CALLBACK_PATH: &str = "/callback";
/// Longest request head read, in bytes, per connection.
const MAX_HEAD: usize = 16 * 1024;
/// How long one connection may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections read at once (at most [`MAX_HEAD`] bytes each).
const MAX_CONNECTIONS: usize = 64;

/// What the authorization server sent back.
pub struct Callback {
    /// The authorization code (a secret: never logged).
    pub code: String,
    /// The `state`, equal to the one sent.
    pub state: String,
    /// The `iss` parameter (RFC 9207), when sent.
    pub issuer: Option<String>,
}

/// Why the redirect did not bring a code.
#[derive(Debug, thiserror::Error)]
pub enum CallbackError {
    /// The listener could not be bound.
    #[error("cannot listen on 127.0.0.1 for the sign-in redirect: {0}")]
    Bind(String),
    /// Nobody came back in time.
    #[error("no answer from the browser within {} s", .0.as_secs())]
    Timeout(Duration),
    /// The authorization server redirected with an error.
    #[error("the authorization server refused: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Denied {
        /// The `error` parameter (`access_denied`…).
        error: String,
        /// The `error_description` parameter.
        description: Option<String>,
    },
}

/// A bound, not yet answered redirect listener.
pub struct CallbackListener {
    listener: TcpListener,
    port: u16,
}

impl CallbackListener {
    /// Binds `127.0.0.1` on a port chosen by the OS.
    ///
    /// # Errors
    /// [`CallbackError::Bind`].
    pub async fn bind() -> Result<CallbackListener, CallbackError> {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| CallbackError::Bind(e.to_string()))?;
        let port = listener
            .local_addr()
            .map_err(|e| CallbackError::Bind(e.to_string()))?
            .port();
        Ok(CallbackListener { listener, port })
    }

    /// The `redirect_uri` to register and send.
    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{CALLBACK_PATH}", self.port)
    }

    /// Waits for the redirect carrying `state`, at most `timeout`.
    ///
    /// Connections are served concurrently, each with its own limits (16 KiB of request head,
    /// 10 s): a local process holding idle connections open cannot delay the browser's. At
    /// most 64 are read at once; a new one beyond that closes the oldest.
    ///
    /// # Errors
    /// [`CallbackError::Timeout`] or [`CallbackError::Denied`].
    pub async fn wait(self, state: &str, timeout: Duration) -> Result<Callback, CallbackError> {
        let deadline = tokio::time::Instant::now() + timeout;
        let (settled_tx, mut settled) = mpsc::channel(1);
        let mut open: VecDeque<AbortOnDrop> = VecDeque::new();
        let state: Arc<str> = Arc::from(state);
        loop {
            let accepted = tokio::select! {
                a = self.listener.accept() => a,
                Some(outcome) = settled.recv() => return outcome,
                () = tokio::time::sleep_until(deadline) => {
                    return Err(CallbackError::Timeout(timeout));
                }
            };
            let Ok((stream, _)) = accepted else { continue };
            open.retain(|c| !c.0.is_finished());
            if open.len() >= MAX_CONNECTIONS {
                open.pop_front();
            }
            let (state, settled_tx) = (state.clone(), settled_tx.clone());
            open.push_back(AbortOnDrop(tokio::spawn(async move {
                if let Some(outcome) = answer(stream, &state).await {
                    let _ = settled_tx.send(outcome).await;
                }
            })));
        }
    }
}

/// A connection's task, ended when the listener stops waiting or needs its place.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Reads one request and answers it; `Some` when it settled the sign-in.
async fn answer(mut stream: TcpStream, state: &str) -> Option<Result<Callback, CallbackError>> {
    let target = read_target(&mut stream).await?;
    let url = url::Url::parse(&format!("http://127.0.0.1{target}")).ok()?;
    if url.path() != CALLBACK_PATH {
        respond(&mut stream, "404 Not Found", "Not found.").await;
        return None;
    }
    let param = |k: &str| {
        url.query_pairs()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.into_owned())
    };
    if param("state").as_deref() != Some(state) {
        tracing::warn!("sign-in redirect with an unknown state ignored");
        respond(
            &mut stream,
            "400 Bad Request",
            "This sign-in link is stale or was not started here. Start the sign-in again.",
        )
        .await;
        return None;
    }
    if let Some(error) = param("error") {
        respond(
            &mut stream,
            "200 OK",
            "Sign-in was refused. You can close this tab.",
        )
        .await;
        return Some(Err(CallbackError::Denied {
            error,
            description: param("error_description"),
        }));
    }
    let Some(code) = param("code") else {
        respond(&mut stream, "400 Bad Request", "The redirect has no code.").await;
        return None;
    };
    respond(
        &mut stream,
        "200 OK",
        "Signed in. You can close this tab and return to MCP Companion.",
    )
    .await;
    Some(Ok(Callback {
        code,
        state: state.to_owned(),
        issuer: param("iss"),
    }))
}

/// Reads one request head and returns its target (`/callback?code=…`); `None` for a head that
/// does not parse, ends early, or is not complete within [`MAX_HEAD`] bytes and [`HEAD_TIMEOUT`].
async fn read_target(stream: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 2048];
    let read = async {
        loop {
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut request = httparse::Request::new(&mut headers);
            if let httparse::Status::Complete(_) = request.parse(&buf).ok()? {
                return request.path.map(str::to_owned);
            }
            if buf.len() >= MAX_HEAD {
                return None;
            }
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
    };
    tokio::time::timeout(HEAD_TIMEOUT, read).await.ok()?
}

async fn respond(stream: &mut TcpStream, status: &str, text: &str) {
    let body = format!(
        "<!doctype html><meta charset=\"utf-8\"><title>MCP Companion</title>\
         <p style=\"font:16px system-ui;margin:3em\">{text}</p>"
    );
    let reply = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(reply.as_bytes()).await;
    let _ = stream.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(uri: &str, path: &str) -> String {
        let port = url::Url::parse(uri).unwrap().port().unwrap();
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn a_wrong_state_is_ignored_and_the_right_one_brings_the_code() {
        let l = CallbackListener::bind().await.unwrap();
        let uri = l.redirect_uri();
        assert!(uri.starts_with("http://127.0.0.1:") && uri.ends_with("/callback"));
        let wait = tokio::spawn(l.wait("s1", Duration::from_secs(20)));
        let forged = get(&uri, "/callback?code=evil&state=other").await;
        assert!(forged.starts_with("HTTP/1.1 400"), "{forged}");
        let ok = get(&uri, "/callback?code=c0de&state=s1&iss=https%3A%2F%2Fas").await;
        assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
        let cb = wait.await.unwrap().unwrap();
        assert_eq!(cb.code, "c0de");
        assert_eq!(cb.issuer.as_deref(), Some("https://as"));
    }

    /// Sends `bytes` in pieces of `piece` bytes and returns the whole answer.
    async fn raw(uri: &str, bytes: &[u8], piece: usize) -> String {
        let port = url::Url::parse(uri).unwrap().port().unwrap();
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        for part in bytes.chunks(piece) {
            s.write_all(part).await.unwrap();
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let mut out = String::new();
        let _ = s.read_to_string(&mut out).await;
        out
    }

    #[tokio::test]
    async fn a_head_that_is_not_http_is_dropped_and_one_sent_in_pieces_is_read() {
        let l = CallbackListener::bind().await.unwrap();
        let uri = l.redirect_uri();
        let wait = tokio::spawn(l.wait("s", Duration::from_secs(20)));
        for junk in [
            &b"\x16\x03\x01 not http\r\n\r\n"[..],
            b"GET /callback?code=x&state=s\r\n\r\n",
        ] {
            assert_eq!(raw(&uri, junk, 1024).await, "", "{junk:?} answered");
        }
        let split = b"GET /callback?code=c&state=s HTTP/1.1\r\nHost: x\r\n\r\n";
        assert!(raw(&uri, split, 7).await.starts_with("HTTP/1.1 200"));
        assert_eq!(wait.await.unwrap().unwrap().code, "c");
    }

    #[tokio::test]
    async fn idle_connections_do_not_delay_the_redirect() {
        let l = CallbackListener::bind().await.unwrap();
        let uri = l.redirect_uri();
        let port = url::Url::parse(&uri).unwrap().port().unwrap();
        // Served one at a time, 30 silent connections would hold the listener 30 × 10 s, far
        // past the wait's 60 s; served side by side they cost nothing.
        let mut idle = Vec::new();
        for _ in 0..30 {
            idle.push(TcpStream::connect(("127.0.0.1", port)).await.unwrap());
        }
        let mut half = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        half.write_all(b"GET /callback?code=x&st").await.unwrap();
        let wait = tokio::spawn(l.wait("s", Duration::from_secs(60)));
        let ok = get(&uri, "/callback?code=c0de&state=s").await;
        assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
        assert_eq!(wait.await.unwrap().unwrap().code, "c0de");
        drop(idle);
    }

    #[tokio::test]
    async fn beyond_the_connection_cap_the_oldest_idle_connection_is_closed() {
        let l = CallbackListener::bind().await.unwrap();
        let uri = l.redirect_uri();
        let port = url::Url::parse(&uri).unwrap().port().unwrap();
        let wait = tokio::spawn(l.wait("s", Duration::from_secs(60)));
        let mut oldest = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let mut idle = Vec::new();
        for _ in 0..MAX_CONNECTIONS {
            idle.push(TcpStream::connect(("127.0.0.1", port)).await.unwrap());
        }
        // The listener closes the first connection to make room: it reads end of file long
        // before its own head timeout would have closed it.
        let mut buf = [0u8; 1];
        let n = tokio::time::timeout(HEAD_TIMEOUT / 2, oldest.read(&mut buf))
            .await
            .expect("the oldest connection was closed to make room")
            .unwrap_or(0);
        assert_eq!(n, 0);
        let ok = get(&uri, "/callback?code=c&state=s").await;
        assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
        assert_eq!(wait.await.unwrap().unwrap().code, "c");
    }

    #[tokio::test]
    async fn a_refusal_quotes_the_authorization_server() {
        let l = CallbackListener::bind().await.unwrap();
        let uri = l.redirect_uri();
        let wait = tokio::spawn(l.wait("s", Duration::from_secs(20)));
        get(
            &uri,
            "/callback?error=access_denied&error_description=no+thanks&state=s",
        )
        .await;
        let err = wait.await.unwrap().err().expect("denied").to_string();
        assert_eq!(
            err,
            "the authorization server refused: access_denied (no thanks)"
        );
    }
}
