//! nanobot-ai 0.3.5 (the agent whose MCP client rules this product follows) as a real agent:
//! its model is a fake OpenAI-compatible chat-completions server on 127.0.0.1, its MCP server is
//! our `bridge`. The fake model first asks for the wrapped `echo` tool, then answers with text
//! quoting the tool result; the result must reach both the model's second request and
//! nanobot's final answer (facts in the peers README §7). With `toolSearch` on, a model that
//! is offered no demo tool finds `echo` with `search_tools` and calls it through `call_tool`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

use crate::common::{BIN, Companion, demo, peers_root};

/// What the agent is asked to echo; unique so the test cannot pass by accident.
const SECRET_WORD: &str = "marmalade-4711";

/// The nanobot executable from `tests/peers/setup.sh`, or `None` (skipped, unless peers are
/// required).
fn nanobot() -> Option<PathBuf> {
    let bin = peers_root().join("venv-nanobot/bin/nanobot");
    if bin.exists() {
        return Some(bin);
    }
    assert!(
        std::env::var_os("MCP_REQUIRE_PEERS").is_none(),
        "MCP_REQUIRE_PEERS is set but nanobot is missing at {}",
        bin.display()
    );
    eprintln!("SKIPPED nanobot test: run tests/peers/setup.sh");
    None
}

/// One HTTP request: path and JSON body.
async fn read_request(
    stream: &mut BufReader<tokio::net::TcpStream>,
) -> std::io::Result<(String, Value)> {
    let mut request_line = String::new();
    stream.read_line(&mut request_line).await?;
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .to_owned();
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        stream.read_line(&mut header).await?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    stream.read_exact(&mut body).await?;
    Ok((path, serde_json::from_slice(&body).unwrap_or(Value::Null)))
}

/// The fake model's answer to `request`: a call of the wrapped echo tool while no tool result
/// is in the conversation, then text quoting the result.
fn answer(request: &Value) -> Value {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    if let Some(result) = messages.iter().find(|m| m["role"] == "tool") {
        let content = match &result["content"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join(" "),
            other => other.to_string(),
        };
        return json!({ "role": "assistant", "content": format!("The tool answered: {content}") });
    }
    let tool = request["tools"]
        .as_array()
        .and_then(|tools| {
            tools.iter().find_map(|t| {
                t["function"]["name"]
                    .as_str()
                    .filter(|n| n.ends_with("mcp_demo_echo"))
            })
        })
        .unwrap_or("no-echo-tool-offered")
        .to_owned();
    json!({ "role": "assistant", "content": null, "tool_calls": [{
        "index": 0, "id": "call_1", "type": "function",
        "function": { "name": tool, "arguments": json!({ "message": SECRET_WORD }).to_string() }
    }] })
}

/// The HTTP response carrying `message`: SSE chunks when the request streams, else one JSON.
fn response(request: &Value, message: &Value) -> String {
    let finish = if message.get("tool_calls").is_some() {
        "tool_calls"
    } else {
        "stop"
    };
    if request["stream"] == json!(true) {
        let chunk = |delta: Value, finish: Value| {
            json!({ "id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "fake-model",
                    "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }] })
        };
        let body = format!(
            "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
            chunk(message.clone(), Value::Null),
            chunk(json!({}), json!(finish))
        );
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n{body}"
        )
    } else {
        let body =
            json!({ "id": "c1", "object": "chat.completion", "created": 0, "model": "fake-model",
            "choices": [{ "index": 0, "message": message, "finish_reason": finish }],
            "usage": { "prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2 } })
            .to_string();
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
    }
}

/// Serves chat completions on `listener` as `script` answers them, recording every request
/// body.
async fn fake_model(
    listener: TcpListener,
    seen: Arc<Mutex<Vec<Value>>>,
    script: fn(&Value) -> Value,
) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            return;
        };
        let seen = seen.clone();
        tokio::spawn(async move {
            let mut stream = BufReader::new(stream);
            let Ok((path, request)) = read_request(&mut stream).await else {
                return;
            };
            let reply = if path.ends_with("/chat/completions") {
                seen.lock().expect("lock").push(request.clone());
                response(&request, &script(&request))
            } else {
                let body = r#"{"error":{"message":"not found"}}"#;
                format!(
                    "HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                )
            };
            let _ = stream.get_mut().write_all(reply.as_bytes()).await;
            let _ = stream.get_mut().shutdown().await;
        });
    }
}

/// Runs nanobot once ("Please echo the secret word.") against `c` through `bridge`, its model
/// answering as `script` says; returns its output and every request its model got.
async fn run_nanobot(
    nanobot: PathBuf,
    c: &Companion,
    script: fn(&Value) -> Value,
) -> (std::process::Output, Vec<Value>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let model = tokio::spawn(fake_model(listener, seen.clone(), script));

    let home = tempfile::tempdir().expect("home");
    let config = json!({
        "agents": { "defaults": { "model": "fake-model", "provider": "custom" } },
        "providers": { "custom": { "apiKey": "sk-fake", "apiBase": format!("http://127.0.0.1:{port}/v1") } },
        "tools": { "mcpServers": { "companion": {
            "command": BIN, "args": ["bridge", "--socket", c.socket.display().to_string()]
        } } }
    });
    std::fs::create_dir_all(home.path().join(".nanobot")).expect("config dir");
    std::fs::write(
        home.path().join(".nanobot/config.json"),
        serde_json::to_vec_pretty(&config).expect("json"),
    )
    .expect("write config");

    let home_path = home.path().to_owned();
    let out = tokio::task::spawn_blocking(move || {
        let mut child = std::process::Command::new(&nanobot)
            .args([
                "agent",
                "-m",
                "Please echo the secret word.",
                "--logs",
                "--no-markdown",
            ])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home_path)
            .env("NO_PROXY", "127.0.0.1")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn nanobot");
        let deadline = Instant::now() + Duration::from_secs(180);
        while child.try_wait().expect("wait").is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        child.wait_with_output().expect("nanobot output")
    })
    .await
    .expect("join");
    model.abort();
    let requests = seen.lock().expect("lock").clone();
    (out, requests)
}

#[tokio::test]
async fn nanobot_calls_a_wrapped_tool_through_the_bridge_and_quotes_its_result() {
    let Some(nanobot) = nanobot() else { return };
    let c = Companion::start(json!({ "mcpServers": { "demo": demo(&[]) } }));
    c.settled().await;
    let (out, requests) = run_nanobot(nanobot, &c, answer).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "nanobot failed ({:?})\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    assert!(
        requests.len() >= 2,
        "the model saw {} requests\nstdout:\n{stdout}\nstderr:\n{stderr}",
        requests.len()
    );
    let offered: Vec<&str> = requests[0]["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["function"]["name"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        offered.iter().any(|n| n.ends_with("mcp_demo_echo")),
        "{offered:?}"
    );
    let tool_message = requests[1]["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "tool"))
        .cloned()
        .unwrap_or(Value::Null);
    assert!(
        tool_message.to_string().contains(SECRET_WORD),
        "the tool result reached the model's second request: {tool_message}"
    );
    assert!(
        stdout.contains(&format!("The tool answered: {SECRET_WORD}")),
        "the final answer quotes the tool result:\n{stdout}\nstderr:\n{stderr}"
    );
}

/// The text of a chat `tool` message.
fn tool_text(message: &Value) -> String {
    match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(" "),
        other => other.to_string(),
    }
}

/// The offered function whose name ends with `suffix` (nanobot prefixes the server's name).
fn offered(request: &Value, suffix: &str) -> String {
    request["tools"]
        .as_array()
        .and_then(|tools| {
            tools.iter().find_map(|t| {
                t["function"]["name"]
                    .as_str()
                    .filter(|n| n.ends_with(suffix))
            })
        })
        .unwrap_or("not-offered")
        .to_owned()
}

/// A model that knows no tool by name: it searches for what it wants, calls through
/// `call_tool` the first tool of the search's answer whose name ends in `echo`, then answers
/// with text quoting the result.
fn search_then_call(request: &Value) -> Value {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let results: Vec<String> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(tool_text)
        .collect();
    let call = |name: String, arguments: Value| {
        json!({ "role": "assistant", "content": null, "tool_calls": [{
            "index": 0, "id": format!("call_{}", results.len() + 1), "type": "function",
            "function": { "name": name, "arguments": arguments.to_string() }
        }] })
    };
    match results.as_slice() {
        [] => call(
            offered(request, "search_tools"),
            json!({ "query": "repeat a message back unchanged" }),
        ),
        [found] => {
            // The search's text lists one JSON object per tool after its first line.
            let name = found
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .find(|n| n.ends_with("echo"))
                .unwrap_or_else(|| "nothing-found".to_owned());
            call(
                offered(request, "call_tool"),
                json!({ "name": name, "arguments": { "message": SECRET_WORD } }),
            )
        }
        [.., last] => {
            json!({ "role": "assistant", "content": format!("The tool answered: {last}") })
        }
    }
}

#[tokio::test]
async fn nanobot_finds_a_hidden_tool_by_search_and_calls_it_through_call_tool() {
    let Some(nanobot) = nanobot() else { return };
    let c = Companion::start(json!({
        "mcpServers": { "demo": demo(&[]) },
        "toolSearch": true
    }));
    c.settled().await;
    let (out, requests) = run_nanobot(nanobot, &c, search_then_call).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && requests.len() >= 3,
        "nanobot failed ({:?}, {} model requests)\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status,
        requests.len()
    );
    let names: Vec<&str> = requests[0]["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["function"]["name"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        names.iter().any(|n| n.ends_with("search_tools")),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|n| n.ends_with("mcp_demo_echo")),
        "the catalog is hidden: {names:?}"
    );
    assert!(
        stdout.contains(&format!("The tool answered: {SECRET_WORD}")),
        "the final answer quotes the tool result:\n{stdout}\nstderr:\n{stderr}"
    );
}
