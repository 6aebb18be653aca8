//! A remote streamable-HTTP server that stopped listening: the connection is refused before
//! any byte of the call is sent, so the call certainly never reached the server. It is sent
//! again once after a reconnect (docs/src/failures.md "A call is never run twice"), and the
//! agent and `status` read it in plain words — `could not connect to
//! http://127.0.0.1:<port>/mcp: connection refused` — on the fast lane and the rmcp path,
//! never hyper's `client error (Connect)` chain or an `os error` number.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::{CallPath, Companion, call, text};
use crate::remote_fixture::echo_service;

/// Library words that must not reach a person.
const JARGON: [&str; 5] = [
    "client error (Connect)",
    "os error",
    "tcp connect error",
    "error sending request",
    "may or may not have run",
];

/// The echo server on its own runtime, so stopping it closes every connection it holds (not
/// only its listener): a stopped server, as a killed process would be.
struct Stoppable {
    port: u16,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Stoppable {
    fn start() -> Stoppable {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        listener.set_nonblocking(true).expect("nonblocking");
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .expect("runtime");
            rt.spawn(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                // Every answer closes its connection: the next POST needs a new one, which a
                // stopped server refuses (a kept-alive connection would fail differently).
                let app = axum::Router::new()
                    .nest_service("/mcp", echo_service())
                    .layer(axum::middleware::map_response(
                        |mut resp: axum::response::Response| async move {
                            resp.headers_mut().insert(
                                axum::http::header::CONNECTION,
                                axum::http::HeaderValue::from_static("close"),
                            );
                            resp
                        },
                    ));
                let _ = axum::serve(listener, app).await;
            });
            let _ = stopped.recv();
            // Dropping the runtime drops every connection task with its socket.
            rt.shutdown_background();
        });
        Stoppable {
            port,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    fn stop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Stoppable {
    fn drop(&mut self) {
        self.stop();
    }
}

async fn refused_call_is_not_delivered_and_said_plainly(path: CallPath) {
    let mut server = Stoppable::start();
    // The path is left out of every text, as it may hold a secret.
    let origin = format!("http://127.0.0.1:{}", server.port);
    let url = format!("{origin}/mcp");
    let c = Companion::start_on(
        json!({
            "mcpServers": { "gone": { "url": url } },
            "ssrfWhitelist": ["127.0.0.1/32"],
        }),
        path,
    );
    let s = &c.settled().await[0];
    assert_eq!(s.state.as_str(), "running", "{s:?}\n{}", c.log());
    let client = c.client().await;
    let echo = call(&client, "mcp_gone_echo", json!({ "message": "before" })).await;
    assert_eq!(text(&echo), "before", "{echo:?}");

    server.stop();
    let answer = call(&client, "mcp_gone_echo", json!({ "message": "after" })).await;
    let said = text(&answer);
    assert_eq!(answer.is_error, Some(true), "{said}");
    assert!(
        said.contains(&format!(
            "could not connect to {origin}/...: connection refused"
        )),
        "{said}\n{}",
        c.log()
    );
    // Not delivered, so sent again after a reconnect (which the stopped server refuses too),
    // never "may or may not have run".
    assert!(said.contains("could not send the request"), "{said}");
    for jargon in JARGON {
        assert!(!said.contains(jargon), "{jargon:?} in {said}");
    }

    // `status` shows the server's last error in the same words.
    let deadline = Instant::now() + Duration::from_secs(30);
    let why = loop {
        let s = c.server("gone").await;
        if let Some(why) = s.last_error.clone()
            && why.contains("could not connect")
        {
            break why;
        }
        assert!(Instant::now() < deadline, "{s:?}\n{}", c.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        why.contains(&format!(
            "could not connect to {origin}/...: connection refused"
        )),
        "{why}"
    );
    for jargon in JARGON {
        assert!(!why.contains(jargon), "{jargon:?} in {why}");
    }
}

#[tokio::test]
async fn a_refused_connection_on_the_fast_lane_is_not_delivered_and_said_plainly() {
    refused_call_is_not_delivered_and_said_plainly(CallPath::Fast).await;
}

#[tokio::test]
async fn a_refused_connection_on_the_rmcp_path_is_not_delivered_and_said_plainly() {
    refused_call_is_not_delivered_and_said_plainly(CallPath::Slow).await;
}
