//! The connection caps of the two local sockets follow the descriptor limit; connections that
//! never finish their handshake make room for real clients; and what is refused at the cap
//! says so, on the wire, in `bridge` and in `status`.
//!
//! Each companion here runs with `RLIMIT_NOFILE` 64 (soft and hard), so its caps are 16 agent
//! and 4 control connections (a quarter and a sixteenth).

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use crate::bounds::raw_agent;
use crate::common::{BIN, Companion, demo};

const NOFILE: u64 = 64;
const AGENTS: usize = 16;
const CONTROL: usize = 4;

async fn limited() -> Companion {
    let c = Companion::start_with_nofile(json!({ "mcpServers": { "demo": demo(&[]) } }), NOFILE);
    c.settled().await;
    c
}

/// The first line `conn` receives within 30 s (empty when it is closed first).
async fn first_line(conn: &mut BufReader<UnixStream>) -> String {
    let mut line = String::new();
    tokio::time::timeout(Duration::from_secs(30), conn.read_line(&mut line))
        .await
        .expect("a line or a close within 30 s")
        .expect("read");
    line
}

/// Whether the companion closes `conn` within 30 s (end of file; anything read first is
/// skipped).
async fn closed_soon(conn: &mut UnixStream) -> bool {
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        match tokio::time::timeout(Duration::from_secs(1), conn.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) | Err(_) => {}
        }
    }
    false
}

/// `mcp-companion ARGS --socket S` with `stdin`; its exit code, stdout and stderr.
fn cli(c: &Companion, args: &[&str], stdin: &[u8]) -> (Option<i32>, String, String) {
    let mut child = std::process::Command::new(BIN)
        .args(args)
        .arg("--socket")
        .arg(&c.socket)
        .env("HOME", &c.home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the CLI");
    let mut input = child.stdin.take().expect("stdin");
    std::io::Write::write_all(&mut input, stdin).expect("write stdin");
    drop(input);
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// With 16 initialized agents a 17th connection gets one JSON-RPC error saying the companion is
/// at its connection limit, and is closed; the CLI and `bridge` say the same (not "stopped or
/// crashed"); once one agent leaves, a newcomer is served again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_connections_are_capped_by_the_descriptor_limit_and_refused_in_words() {
    let c = limited().await;
    let mut agents = Vec::new();
    for _ in 0..AGENTS {
        agents.push(raw_agent(&c).await);
    }
    let mut over = BufReader::new(UnixStream::connect(&c.socket).await.expect("connect"));
    let line = first_line(&mut over).await;
    let refusal: Value = serde_json::from_str(&line).expect("a refusal line");
    assert_eq!(refusal["id"], Value::Null, "{refusal}");
    assert_eq!(refusal["error"]["code"], -32000, "{refusal}");
    assert_eq!(
        refusal["error"]["data"]["reason"], "connectionLimit",
        "{refusal}"
    );
    let message = refusal["error"]["message"].as_str().expect("message");
    assert!(
        message.contains(&format!(
            "at its connection limit ({AGENTS} agent connections"
        )),
        "{message}"
    );
    assert_eq!(first_line(&mut over).await, "", "closed after the refusal");

    // A client that writes its request at once reads the refusal and then end of file: no
    // "Broken pipe" on its write, no "Connection reset" after the line.
    let request = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n";
    for _ in 0..5 {
        let mut conn = UnixStream::connect(&c.socket).await.expect("connect");
        conn.write_all(request).await.expect("the request is taken");
        let mut got = Vec::new();
        tokio::time::timeout(Duration::from_secs(30), conn.read_to_end(&mut got))
            .await
            .expect("closed within 30 s")
            .expect("the refusal, then end of file, without a reset");
        let got = String::from_utf8_lossy(&got);
        assert_eq!(got.lines().count(), 1, "{got}");
        assert!(got.contains("\"reason\":\"connectionLimit\""), "{got}");
    }

    let (code, _, err) = cli(&c, &["tools"], b"");
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.starts_with("error: MCP handshake with the companion failed: "),
        "{err}"
    );

    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "b", "version": "0" } } });
    // stdin stays open while the bridge runs: write the request, keep the pipe until it exits.
    let mut bridge = tokio::process::Command::new(BIN)
        .arg("bridge")
        .arg("--socket")
        .arg(&c.socket)
        .env("HOME", &c.home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bridge");
    let mut stdin = bridge.stdin.take().expect("stdin");
    stdin
        .write_all(format!("{init}\n").as_bytes())
        .await
        .expect("write");
    let out = tokio::time::timeout(Duration::from_secs(30), bridge.wait_with_output())
        .await
        .expect("bridge exits within 30 s")
        .expect("wait");
    drop(stdin);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("at its connection limit") && !stderr.contains("stopped or crashed"),
        "{stderr}"
    );
    // The refusal reaches the agent once, as the answer to its request (not also as the
    // companion's own line without an id).
    let lines: Vec<&str> = stdout.lines().collect();
    let [line] = lines.as_slice() else {
        panic!("{} lines for one request: {stdout}", lines.len());
    };
    let answer: Value = serde_json::from_str(line).expect("JSON");
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(answer["error"]["code"], -32000, "{answer}");
    let message = answer["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("at its connection limit") && message.ends_with("the request was not run"),
        "{message}"
    );

    // One leaves; a newcomer is served again (once the companion has seen it leave).
    drop(agents.pop());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut conn = BufReader::new(UnixStream::connect(&c.socket).await.expect("connect"));
        let ping = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
        // A connection still refused may be closed before the ping is written: try again.
        let answer = match conn.get_mut().write_all(ping).await {
            Err(e) => format!("write failed: {e}"),
            Ok(()) => first_line(&mut conn).await,
        };
        if let Ok(v) = serde_json::from_str::<Value>(&answer)
            && v["id"] == 1
        {
            assert_eq!(v["result"], json!({}), "{v}");
            break;
        }
        assert!(Instant::now() < deadline, "still refused: {answer}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        c.log().matches("too many connections").count(),
        1,
        "{}",
        c.log()
    );
}

/// With every agent slot held by connections that never sent `initialize`, a real agent is
/// still served: the oldest idle connection is closed to make room.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_agent_connections_make_room_for_an_agent_that_initializes() {
    let c = limited().await;
    let mut idle = Vec::new();
    for _ in 0..AGENTS {
        idle.push(UnixStream::connect(&c.socket).await.expect("connect"));
    }
    // `raw_agent` asserts that its `initialize` is answered.
    let _agent = raw_agent(&c).await;
    assert!(
        closed_soon(&mut idle[0]).await,
        "the oldest idle connection was closed"
    );
    assert!(
        c.log()
            .contains("closed the oldest connection that had not finished its handshake"),
        "{}",
        c.log()
    );
}

/// With every control slot held by clients that sent a request, `status` says the companion is
/// at its limit (it said "Broken pipe" when the refusal raced its request); with every slot held
/// by clients that never sent one, `status` is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_connections_at_the_cap_refuse_status_in_words_and_idle_ones_make_room() {
    let c = limited().await;
    // More idle clients than slots: the oldest idle ones are closed without a word to make room,
    // so none of them is sent the `busy` refusal, and `status` is served.
    let mut idle = Vec::new();
    for _ in 0..CONTROL + 2 {
        idle.push(BufReader::new(
            UnixStream::connect(&c.control).await.expect("connect"),
        ));
    }
    for conn in &mut idle {
        let mut line = String::new();
        if let Ok(read) =
            tokio::time::timeout(Duration::from_millis(500), conn.read_line(&mut line)).await
        {
            read.expect("read");
            assert!(!line.contains("busy"), "an idle client was refused: {line}");
        }
    }
    let (code, out, err) = cli(&c, &["status"], b"");
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("demo"), "{out}");
    drop(idle);

    // Every slot held by a client that sent a request: `status` is refused in words.
    let mut busy = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while busy.len() < CONTROL {
        let mut conn = BufReader::new(UnixStream::connect(&c.control).await.expect("connect"));
        let written = conn.get_mut().write_all(b"{\"method\":\"status\"}\n").await;
        let answer = first_line(&mut conn).await;
        // A slot of a client that just left may not be free yet.
        if written.is_ok() && answer.contains("\"pid\"") {
            busy.push(conn);
        }
        assert!(
            Instant::now() < deadline,
            "control slots not free: {answer}"
        );
    }
    for _ in 0..5 {
        let (code, _, err) = cli(&c, &["status"], b"");
        assert_eq!(code, Some(1), "{err}");
        assert!(
            err.contains(&format!("at its limit of {CONTROL} control connections"))
                && !err.to_lowercase().contains("broken pipe"),
            "{err}"
        );
    }
}
