//! Proves that remote servers (streamable HTTP and legacy SSE) work when loopback is
//! whitelisted: FastMCP (Python SDK) and server-everything over both transports, reached by rmcp
//! and the Python SDK through `bridge`; progress and `toolTimeout`; config headers with `${VAR}`
//! reaching the server but never the log; reconnect after the server forgets the session (HTTP
//! 404, or a restarted server), with `tools/list_changed` sent to agents; DELETE on stop.
//! The refusals are in `ssrf.rs`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::ClientConfig;
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use serde_json::json;

use crate::common::{
    BIN, Companion, agent_call, call, client_config, eventually, run_agent, text, tool_names,
};
use crate::raw::{RawAgent, progress_for};
use crate::remote_fixture::{everything, fastmcp, fastmcp_on, mcp_server, peer_python};

#[tokio::test]
async fn fastmcp_over_sse_and_streamable_http_is_listed_and_callable_when_whitelisted() {
    let Some(py) = peer_python() else { return };
    let sse = fastmcp(&py, "sse", &[]);
    let http = fastmcp(&py, "http", &[]);
    let json_resp = fastmcp(&py, "http", &["--json-response"]);
    let stateless = fastmcp(&py, "http", &["--stateless"]);
    let c = Companion::start(json!({
        "mcpServers": {
            "sse": { "url": format!("http://127.0.0.1:{}/sse", sse.port) },
            "http": { "url": format!("http://127.0.0.1:{}/mcp", http.port) },
            "json": { "type": "http", "url": format!("http://127.0.0.1:{}/mcp", json_resp.port) },
            "stateless": { "type": "streamableHttp", "url": format!("http://127.0.0.1:{}/mcp", stateless.port) },
        },
        "ssrfWhitelist": ["127.0.0.1/32"],
    }));
    let servers = c.running().await;
    assert_eq!(
        servers.iter().find(|s| s.name == "sse").unwrap().transport,
        "sse"
    );
    let client = c.client().await;
    let names = tool_names(&client).await;
    for server in ["sse", "http", "json", "stateless"] {
        assert!(names.contains(&format!("mcp_{server}_echo")), "{names:?}");
        let echo = call(
            &client,
            &format!("mcp_{server}_echo"),
            json!({"message": "hi"}),
        )
        .await;
        assert!(text(&echo).contains("hi"), "{server}: {echo:?}");
        let image = call(
            &client,
            &format!("mcp_{server}_image"),
            json!({"width": 2, "height": 2}),
        )
        .await;
        assert!(
            image
                .content
                .iter()
                .any(|b| b.as_image().is_some_and(|i| i.mime_type == "image/png")),
            "{server}: {image:?}"
        );
        let fail = call(
            &client,
            &format!("mcp_{server}_fail"),
            json!({"message": "boom"}),
        )
        .await;
        assert_eq!(fail.is_error, Some(true), "{server}: {fail:?}");
        assert!(text(&fail).contains("boom"), "{server}: {fail:?}");
    }

    // The official Python SDK client through `bridge`, as an agent would connect.
    let socket = c.socket.to_string_lossy().into_owned();
    let run = run_agent(
        &py,
        &[
            "--list",
            "--call",
            "mcp_sse_echo",
            r#"{"message": "py"}"#,
            "--call",
            "mcp_http_image",
            r#"{"width": 1, "height": 1}"#,
            "--call",
            "mcp_json_fail",
            r#"{"message": "bad"}"#,
            "--",
            BIN,
            "bridge",
            "--socket",
            &socket,
        ],
        &c.home,
        Duration::from_secs(60),
    );
    assert_eq!(run["exit"], 0, "{run:#}");
    let tools = run["tools"].to_string();
    for name in [
        "mcp_sse_echo",
        "mcp_http_image",
        "mcp_json_fail",
        "mcp_stateless_echo",
    ] {
        assert!(tools.contains(name), "{name} not in {tools}");
    }
    assert!(
        agent_call(&run, "mcp_sse_echo").to_string().contains("py"),
        "{run:#}"
    );
    let image = agent_call(&run, "mcp_http_image");
    assert!(
        image["content"].to_string().contains("image/png"),
        "{image:#}"
    );
    let fail = agent_call(&run, "mcp_json_fail");
    assert_eq!(fail["isError"], true, "{fail:#}");
    assert!(fail["content"].to_string().contains("bad"), "{fail:#}");
}

/// Counts `notifications/tools/list_changed`.
#[derive(Clone)]
struct Counting(Arc<AtomicUsize>);

impl ClientHandler for Counting {
    fn get_info(&self) -> ClientConfig {
        client_config()
    }

    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn headers_reach_the_server_secrets_stay_out_of_logs_and_an_expired_session_reconnects() {
    let server = mcp_server().await;
    let secret = "s3cr3t-token-value-9d1e";
    let c = Companion::start_with_env(
        json!({
            "mcpServers": { "remote": {
                "url": format!("http://127.0.0.1:{}/mcp?key={secret}", server.port),
                "headers": { "Authorization": "Bearer ${MCPC_TEST_TOKEN}", "X-Plain": "yes" },
            } },
            "ssrfWhitelist": ["127.0.0.1"],
        }),
        &[("MCPC_TEST_TOKEN", Some(secret))],
    );
    let status = c.settled().await;
    assert_eq!(
        status[0].state.as_str(),
        "running",
        "{status:?}\n{}",
        c.log()
    );
    {
        let seen = server.shared.headers.lock().unwrap();
        assert!(!seen.is_empty());
        for h in seen.iter() {
            assert_eq!(h["authorization"], format!("Bearer {secret}").as_str());
            assert_eq!(h["x-plain"], "yes");
        }
    }

    let notes = Arc::new(AtomicUsize::new(0));
    let client = c.client_with(Counting(notes.clone())).await;
    let first = call(&client, "mcp_remote_echo", json!({"message": "one"})).await;
    assert_eq!(text(&first), "one");
    let before = notes.load(Ordering::SeqCst);

    server.shared.expire_next.store(true, Ordering::SeqCst);
    let second = call(&client, "mcp_remote_echo", json!({"message": "two"})).await;
    assert_eq!(text(&second), "two", "{second:?}\n{}", c.log());
    assert_eq!(
        server.shared.sessions.lock().unwrap().len(),
        2,
        "one reconnect"
    );
    assert!(
        eventually(Duration::from_secs(30), || notes.load(Ordering::SeqCst)
            > before)
        .await,
        "no tools/list_changed after the reconnect"
    );
    // That list_changed may be the one for the old session's tools leaving; the new session's
    // tools are folded in by the next coalesced rebuild (status says running from then on).
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while c.server("remote").await.state.as_str() != "running" {
        assert!(
            std::time::Instant::now() < deadline,
            "not running again after the reconnect: {:?}",
            c.server("remote").await
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }

    // Stopping the server deletes its session (MCP 2025-03-26 "Session Management").
    let current = server.shared.sessions.lock().unwrap().last().cloned();
    mcp_companion::control::request(
        &c.control,
        &mcp_companion::control::ControlRequest::Stop {
            server: "remote".into(),
        },
    )
    .await
    .expect("stop");
    let shared = server.shared.clone();
    assert!(
        eventually(Duration::from_secs(30), || shared
            .requests
            .lock()
            .unwrap()
            .iter()
            .any(|(m, s)| m == "DELETE" && *s == current))
        .await,
        "no DELETE for the session: {:?}",
        server.shared.requests.lock().unwrap()
    );

    let log = c.log();
    assert!(log.contains("reconnecting"), "{log}");
    assert!(!log.contains(secret), "a secret reached the log:\n{log}");
}

#[tokio::test]
async fn server_everything_over_sse_and_streamable_http_works_when_whitelisted() {
    let (Some(sse), Some(http)) = (everything("sse"), everything("streamableHttp")) else {
        return;
    };
    let c = Companion::start(json!({
        "mcpServers": {
            "evsse": { "url": format!("http://127.0.0.1:{}/sse", sse.port) },
            "evhttp": { "url": format!("http://127.0.0.1:{}/mcp", http.port) },
        },
        "ssrfWhitelist": ["127.0.0.1/32"],
    }));
    c.running().await;
    let client = c.client().await;
    for server in ["evsse", "evhttp"] {
        let echo = call(
            &client,
            &format!("mcp_{server}_echo"),
            json!({"message": "hi"}),
        )
        .await;
        assert!(text(&echo).contains("hi"), "{server}: {echo:?}");
    }
}

/// Progress from remote servers reaches the agent before the result (checked on the wire:
/// FastMCP reports once, right before its result), and `toolTimeout` bounds a call the server
/// would run for a minute.
#[tokio::test]
async fn remote_calls_forward_progress_and_time_out_with_tool_timeout() {
    let Some(py) = peer_python() else { return };
    let sse = fastmcp(&py, "sse", &[]);
    let http = fastmcp(&py, "http", &[]);
    let c = Companion::start(json!({
        "mcpServers": {
            "sse": { "url": format!("http://127.0.0.1:{}/sse", sse.port), "toolTimeout": 3 },
            "http": { "url": format!("http://127.0.0.1:{}/mcp", http.port), "toolTimeout": 3 },
        },
        "ssrfWhitelist": ["127.0.0.1/32"],
    }));
    c.settled().await;
    let mut agent = RawAgent::connect(&c.socket).await;
    let client = c.client().await;
    for (id, server) in [(1_u64, "sse"), (2, "http")] {
        agent
            .call_with_progress(
                id,
                &format!("mcp_{server}_sleep"),
                json!({"seconds": 0.6}),
                server,
            )
            .await;
        let (answer, before) = agent.until_response(&json!(id)).await;
        assert_eq!(
            answer["result"]["content"][0]["text"], "slept 0.6s",
            "{server}: {answer}"
        );
        assert_eq!(progress_for(&before, server), [1.0], "{server}: {before:?}");

        // Without a progress token (rmcp's client always sends one, and progress moves the
        // deadline): the call ends at toolTimeout.
        let started = std::time::Instant::now();
        agent
            .send(
                &json!({"jsonrpc": "2.0", "id": id + 10, "method": "tools/call",
                "params": {"name": format!("mcp_{server}_sleep"), "arguments": {"seconds": 60}}}),
            )
            .await;
        let (slow, _) = agent.until_response(&json!(id + 10)).await;
        assert_eq!(slow["result"]["isError"], true, "{server}: {slow}");
        let said = slow["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(said.contains("timed out after 3 s"), "{said}");
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{server}: {:?}",
            started.elapsed()
        );
        let echo = call(
            &client,
            &format!("mcp_{server}_echo"),
            json!({"message": "after"}),
        )
        .await;
        assert!(text(&echo).contains("after"), "{server}: {echo:?}");
    }
}

#[tokio::test]
async fn a_restarted_fastmcp_http_server_is_reconnected_on_the_next_call() {
    let Some(py) = peer_python() else { return };
    let http = fastmcp(&py, "http", &[]);
    let port = http.port;
    let c = Companion::start(json!({
        "mcpServers": { "http": { "url": format!("http://127.0.0.1:{port}/mcp") } },
        "ssrfWhitelist": ["127.0.0.1/32"],
    }));
    c.settled().await;
    let notes = Arc::new(AtomicUsize::new(0));
    let client = c.client_with(Counting(notes.clone())).await;
    assert!(text(&call(&client, "mcp_http_echo", json!({"message": "a"})).await).contains("a"));
    drop(http);
    let _again = fastmcp_on(&py, "http", &[], port);
    let before = notes.load(Ordering::SeqCst);
    let after = call(&client, "mcp_http_echo", json!({"message": "back"})).await;
    assert!(text(&after).contains("back"), "{after:?}\n{}", c.log());
    assert!(
        eventually(Duration::from_secs(30), || notes.load(Ordering::SeqCst)
            > before)
        .await,
        "no tools/list_changed after the reconnect"
    );
}

/// reqwest sends a URL's `user:password@` as `Authorization: Basic …` on every request, where
/// it replaced a configured `Authorization` header; the header is the one meant, and the
/// userinfo alone still works.
#[tokio::test]
async fn a_configured_authorization_header_wins_over_the_urls_userinfo() {
    let (with_header, userinfo_only) = (mcp_server().await, mcp_server().await);
    let c = Companion::start(json!({
        "mcpServers": {
            "both": {
                "url": format!("http://alice:pw1@127.0.0.1:{}/mcp", with_header.port),
                "headers": { "authorization": "Bearer the-header" },
            },
            "basic": { "url": format!("http://alice:pw1@127.0.0.1:{}/mcp", userinfo_only.port) },
        },
        "ssrfWhitelist": ["127.0.0.1"],
    }));
    let status = c.settled().await;
    assert!(
        status.iter().all(|s| s.state.as_str() == "running"),
        "{status:?}\n{}",
        c.log()
    );
    let sent = |fixture: &crate::remote_fixture::HttpFixture| -> Vec<Vec<String>> {
        let seen = fixture.shared.headers.lock().unwrap();
        seen.iter()
            .map(|h| {
                h.get_all("authorization")
                    .iter()
                    .map(|v| v.to_str().unwrap_or("<not text>").to_owned())
                    .collect()
            })
            .collect()
    };
    let header_side = sent(&with_header);
    assert!(!header_side.is_empty());
    for values in &header_side {
        assert_eq!(values, &["Bearer the-header"], "{header_side:?}");
    }
    // base64("alice:pw1")
    for values in sent(&userinfo_only) {
        assert_eq!(values, ["Basic YWxpY2U6cHcx"]);
    }
    let warnings = c.status().await.warnings;
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("\"both\"") && warnings[0].contains("not sent"),
        "{warnings:?}"
    );
}
