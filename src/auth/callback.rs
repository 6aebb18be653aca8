//! The one-shot loopback redirect listener (RFC 8252 §7.3): `http://127.0.0.1:<random
//! port>/callback`, bound before the browser opens, closed after the first answer that carries
//! the expected `state`.
//!
//! A request with another `state` (a stale tab, a forged link) is answered with an error page
//! and ignored; the listener keeps waiting. An `error=…` redirect (the user clicked "Deny")
//! ends the wait with [`CallbackError::Denied`], quoting the authorization server.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The path the authorization server redirects to.
pub const CALLBACK_PATH: &str = "/callback";
/// Longest request head read, in bytes.
const MAX_HEAD: usize = 16 * 1024;

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
    /// # Errors
    /// [`CallbackError::Timeout`] or [`CallbackError::Denied`].
    pub async fn wait(self, state: &str, timeout: Duration) -> Result<Callback, CallbackError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let accepted = tokio::time::timeout_at(deadline, self.listener.accept())
                .await
                .map_err(|_| CallbackError::Timeout(timeout))?;
            let Ok((stream, _)) = accepted else { continue };
            match answer(stream, state).await {
                Some(outcome) => return outcome,
                None => continue,
            }
        }
    }
}

/// Reads one request and answers it; `Some` when it settled the sign-in.
async fn answer(mut stream: TcpStream, state: &str) -> Option<Result<Callback, CallbackError>> {
    let head = read_head(&mut stream).await?;
    let target = head.split_whitespace().nth(1)?.to_owned();
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

async fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 2048];
    let read = async {
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < MAX_HEAD {
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        Some(())
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .ok()??;
    let line_end = buf.iter().position(|&b| b == b'\r' || b == b'\n')?;
    String::from_utf8(buf[..line_end].to_vec()).ok()
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
