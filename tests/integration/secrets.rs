//! Proves that secrets planted in a remote server's URL (query, userinfo, fragment), its
//! `headers`, the environment variables they expand, and a stdio server's secret `env` (echoed
//! on its stderr) never reach any output: the trace-level serve log, `status --json`,
//! `doctor`, `logs`, or the error an agent receives; and that configured headers never follow
//! a redirect to another origin.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

use crate::common::{BIN, Companion, call, eventually, text};
use crate::remote_fixture::{mcp_server, mcp_server_at, mcp_server_moved, redirector};

/// Every planted secret; each must be absent from every captured output.
const PLANTED: [&str; 8] = [
    "PLANTED-query-7f3a",
    "PLANTED-user-19c",
    "PLANTED-pass-88d",
    "PLANTED-frag-2b1",
    "PLANTED-header-5e0",
    "PLANTED-env-c4d",
    "PLANTED-stdioenv-3e7",
    "PLANTED-argtoken-a1b",
];

/// A TCP relay to `127.0.0.1:to` that can be cut: the listener closes (new connections are
/// refused) and every relayed connection is dropped.
struct Relay {
    port: u16,
    tasks: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
}

impl Relay {
    async fn start(to: u16) -> Relay {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let tasks: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>> = Arc::default();
        let held = tasks.clone();
        let accept = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let pipe = tokio::spawn(async move {
                    if let Ok(mut outbound) =
                        tokio::net::TcpStream::connect(("127.0.0.1", to)).await
                    {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                held.lock().unwrap().push(pipe);
            }
        });
        tasks.lock().unwrap().push(accept);
        Relay { port, tasks }
    }

    fn cut(&self) {
        for t in self.tasks.lock().unwrap().drain(..) {
            t.abort();
        }
    }
}

fn assert_clean(what: &str, output: &str) {
    for secret in PLANTED {
        assert!(!output.contains(secret), "{what} leaks {secret}:\n{output}");
    }
}

fn stdout_and_stderr(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[tokio::test]
async fn planted_secrets_never_reach_the_trace_log_status_doctor_logs_or_agent_errors() {
    let server = mcp_server().await;
    let relay = Relay::start(server.port).await;
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let url = |port: u16| {
        format!(
            "http://PLANTED-user-19c:PLANTED-pass-88d@127.0.0.1:{port}/mcp\
             ?token=PLANTED-query-7f3a&env=${{MCPC_PLANTED}}#PLANTED-frag-2b1"
        )
    };
    let headers = json!({
        "X-Api-Key": "PLANTED-header-5e0",
        "X-Env-Token": "Bearer ${MCPC_PLANTED}",
    });
    let config = json!({
        "mcpServers": {
            "live": { "url": url(relay.port), "headers": headers },
            "down": { "url": url(closed), "headers": headers, "connectTimeout": 5 },
            // stdio servers that print their API key on stderr, one running, one exiting.
            "echoer": {
                "command": "sh",
                // `$1`, unused by the script: a `${VAR}` of a secret-looking name in the args.
                "args": ["-c", "echo \"my key is $API_KEY\" >&2; exec \"$0\" demo-server", BIN, "--token=${MCPC_PLANTED_TOKEN}"],
                "env": { "API_KEY": "PLANTED-stdioenv-3e7" },
            },
            "crasher": {
                "command": "sh",
                "args": ["-c", "echo \"bad key $API_KEY\" >&2; exit 3"],
                "env": { "API_KEY": "PLANTED-stdioenv-3e7" },
            },
        },
        "ssrfWhitelist": ["127.0.0.1/32"],
    });
    let mut c = Companion::start_with_env(
        config,
        &[
            ("MCPC_PLANTED", Some("PLANTED-env-c4d")),
            ("MCPC_PLANTED_TOKEN", Some("PLANTED-argtoken-a1b")),
            ("RUST_LOG", Some("trace")),
        ],
    );
    let servers = c.settled().await;
    let live = servers.iter().find(|s| s.name == "live").expect("live");
    assert_eq!(live.state.as_str(), "running", "{live:?}\n{}", c.log());
    {
        // The secrets did reach the server: the test plants real values.
        let seen = server.shared.headers.lock().unwrap();
        assert_eq!(seen[0]["x-api-key"], "PLANTED-header-5e0");
        assert_eq!(seen[0]["x-env-token"], "Bearer PLANTED-env-c4d");
    }
    let down = c.server("down").await;
    let down_error = down.last_error.clone().unwrap_or_default();
    assert!(
        down_error.contains("127.0.0.1"),
        "down has no error naming its host: {down:?}"
    );

    let client = c.client().await;
    let ok = call(&client, "mcp_live_echo", json!({"message": "hi"})).await;
    assert_eq!(text(&ok), "hi");
    // The server goes away mid-session: the call fails, the reconnect is refused.
    relay.cut();
    let failed = call(&client, "mcp_live_echo", json!({"message": "again"})).await;
    assert_eq!(failed.is_error, Some(true), "{failed:?}");
    let agent_error = text(&failed);
    assert!(agent_error.contains("live"), "{agent_error}");
    assert_clean("the agent's error", &agent_error);
    assert_clean("down's lastError", &down_error);

    let status = c.cli(&["status", "--json"]);
    let status_text = stdout_and_stderr(&status);
    assert!(status_text.contains("lastError"), "{status_text}");
    assert_clean("status --json", &status_text);
    for server in ["live", "down", "echoer", "crasher"] {
        assert_clean("logs", &stdout_and_stderr(&c.cli(&["logs", server])));
    }
    let echoed = stdout_and_stderr(&c.cli(&["logs", "echoer"]));
    assert!(echoed.contains("my key is <redacted>"), "{echoed}");
    let crasher = c.server("crasher").await.last_error.unwrap_or_default();
    assert!(crasher.contains("bad key <redacted>"), "{crasher}");
    let doctor = std::process::Command::new(BIN)
        .arg("doctor")
        .arg("--config")
        .arg(&c.config)
        .env("HOME", &c.home)
        .env("MCPC_PLANTED", "PLANTED-env-c4d")
        .env("MCPC_PLANTED_TOKEN", "PLANTED-argtoken-a1b")
        .env("RUST_LOG", "trace")
        .output()
        .expect("doctor");
    let doctor_text = stdout_and_stderr(&doctor);
    assert!(doctor_text.contains("127.0.0.1"), "{doctor_text}");
    assert!(
        doctor_text.contains("--token=<${MCPC_PLANTED_TOKEN}>"),
        "{doctor_text}"
    );
    assert_clean("doctor", &doctor_text);

    c.terminate(Duration::from_secs(10));
    let log = c.log();
    // Trace level really was on, for rmcp and the HTTP stack alike.
    for target in ["TRACE", "rmcp::", "hyper"] {
        assert!(log.contains(target), "no {target} in the log");
    }
    assert_clean("the serve log", &log);
}

#[tokio::test]
async fn configured_headers_never_follow_a_redirect_to_another_origin() {
    let target = mcp_server().await;
    // Another origin: a different host (127.0.0.2), or a different port; 127.0.0.0/8 is all
    // loopback.
    let other_host = mcp_server_at("127.0.0.2").await;
    let elsewhere = redirector(format!("http://127.0.0.2:{}/mcp", other_host.port)).await;
    let other_port = redirector(format!("http://127.0.0.1:{}/mcp", target.port)).await;
    let moved = mcp_server_moved().await;
    let c = Companion::start(json!({
        "mcpServers": {
            "elsewhere": {
                "url": format!("http://127.0.0.1:{}/mcp", elsewhere.port),
                "headers": { "X-Api-Key": "redirect-secret-1" },
            },
            "port": {
                "url": format!("http://127.0.0.1:{}/mcp", other_port.port),
                "headers": { "X-Api-Key": "redirect-secret-2" },
            },
            "moved": {
                "url": format!("http://127.0.0.1:{}/old", moved.port),
                "headers": { "X-Api-Key": "same-origin-ok" },
            },
            "bare": { "url": format!("http://127.0.0.1:{}/mcp", other_port.port) },
        },
        "ssrfWhitelist": ["127.0.0.0/8"],
    }));
    let servers = c.settled().await;
    let state = |name: &str| {
        servers
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no {name}"))
            .clone()
    };
    for name in ["elsewhere", "port"] {
        let s = state(name);
        assert_ne!(s.state.as_str(), "running", "{s:?}");
        let err = s.last_error.unwrap_or_default();
        assert!(err.contains("another origin"), "{name}: {err}");
    }
    // A same-origin redirect keeps the headers; without headers a cross-origin one is followed.
    assert_eq!(state("moved").state.as_str(), "running", "{}", c.log());
    assert_eq!(state("bare").state.as_str(), "running", "{}", c.log());
    let moved_headers = moved.shared.headers.lock().unwrap().clone();
    assert!(
        moved_headers
            .iter()
            .filter(|h| h.get("x-api-key").is_some())
            .count()
            >= 2,
        "the same-origin hop lost the header"
    );
    assert!(
        other_host.shared.headers.lock().unwrap().is_empty(),
        "the other host was contacted"
    );
    let target_shared = target.shared.clone();
    // `bare` reached the target through the redirect, with no configured header.
    assert!(
        eventually(Duration::from_secs(5), || !target_shared
            .headers
            .lock()
            .unwrap()
            .is_empty())
        .await
    );
    for h in target.shared.headers.lock().unwrap().iter() {
        assert!(
            h.get("x-api-key").is_none(),
            "a header crossed origins: {h:?}"
        );
    }
}
