//! A task that ended before its server restarted or stopped keeps what the agent was told
//! (MCP 2025-11-25 utilities/tasks: a terminal status never changes), for agents of both
//! eras, against server-everything's `simulate-research-query` (`taskSupport: "required"`):
//! a completed or cancelled task stays so, a result the agent fetched is kept and one it did
//! not is said to be lost, and a 2026-07-28 agent's `tasks/get` is served while the server is
//! stopped (the Tasks extension stays declared while the session has a task).

use std::time::{Duration, Instant};

use mcp_companion::supervisor::ServerState;
use serde_json::{Value, json};

use crate::common::{Companion, everything_js, peers_dir};
use crate::raw::RawAgent;

const RESEARCH: &str = "mcp_everything_simulate-research-query";
const EXTENSION: &str = "io.modelcontextprotocol/tasks";

fn everything(js: &str) -> Value {
    json!({ "mcpServers": { "everything": { "command": "node", "args": [js, "stdio"] } } })
}

/// The 2026-07-28 `_meta` of a request declaring the Tasks extension; `None` for an
/// `initialize`-era agent.
fn meta(modern: bool) -> Option<Value> {
    modern.then(|| {
        json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": { "name": "raw-2026", "version": "0" },
            "io.modelcontextprotocol/clientCapabilities": { "extensions": { EXTENSION: {} } },
        })
    })
}

/// An agent of one era: `modern` sends the 2026-07-28 `_meta` on each request.
struct Agent {
    raw: RawAgent,
    modern: bool,
    id: u64,
}

impl Agent {
    async fn request(&mut self, method: &str, mut params: Value) -> Value {
        if let Some(meta) = meta(self.modern) {
            params["_meta"] = meta;
        }
        self.id += 1;
        self.raw.request(self.id, method, params).await.0
    }

    /// A new task of `simulate-research-query`; its id. An `ambiguous` one stays in
    /// `input_required` until a `tasks/result` takes its question (none is sent here).
    async fn create(&mut self, topic: &str, ambiguous: bool) -> String {
        let arguments = json!({ "topic": topic, "ambiguous": ambiguous });
        let mut params = json!({ "name": RESEARCH, "arguments": arguments });
        if !self.modern {
            params["task"] = json!({ "ttl": 60000 });
        }
        let created = self.request("tools/call", params).await;
        let task = if self.modern {
            &created["result"]
        } else {
            &created["result"]["task"]
        };
        let id = task["taskId"].as_str();
        id.unwrap_or_else(|| panic!("a task: {created}")).to_owned()
    }

    /// `tasks/get` of `task` until it leaves `working` (40 s at most); the last answer.
    async fn until_ended(&mut self, task: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(40);
        loop {
            let got = self.request("tasks/get", json!({ "taskId": task })).await;
            let status = &got["result"]["status"];
            if status != "working" && status != "input_required" {
                return got;
            }
            assert!(Instant::now() < deadline, "still working: {got}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

async fn initialize_era(c: &Companion) -> Agent {
    let mut raw = RawAgent::connect_only(&c.socket).await;
    let init = json!({ "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": { "name": "tasks-ended", "version": "1" } });
    let init = raw.request(0, "initialize", init).await.0;
    assert!(
        init["result"]["capabilities"]["tasks"].is_object(),
        "{init}"
    );
    (raw)
        .send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
        .await;
    Agent {
        raw,
        modern: false,
        id: 0,
    }
}

#[tokio::test]
async fn an_ended_task_keeps_its_status_after_its_server_restarts() {
    let Some(peers) = peers_dir() else { return };
    let js = everything_js(&peers).display().to_string();
    let c = Companion::start(everything(&js));
    c.running().await;
    let mut agent = initialize_era(&c).await;

    let unfetched = agent.create("unfetched", false).await;
    let fetched = agent.create("fetched", false).await;
    let cancelled = agent.create("cancelled", false).await;
    let working = agent.create("working", true).await;
    let acked = (agent)
        .request("tasks/cancel", json!({ "taskId": cancelled }))
        .await;
    assert_eq!(acked["result"]["status"], json!("cancelled"), "{acked}");
    let done = agent.until_ended(&unfetched).await;
    assert_eq!(done["result"]["status"], json!("completed"), "{done}");
    assert_eq!(
        agent.until_ended(&fetched).await["result"]["status"],
        json!("completed")
    );
    let result = (agent)
        .request("tasks/result", json!({ "taskId": fetched }))
        .await;
    assert!(result["result"]["content"].is_array(), "{result}");

    c.restart_process("everything").await;

    // Ended tasks are as they were; only the one still working is lost.
    let got = (agent)
        .request("tasks/get", json!({ "taskId": unfetched }))
        .await;
    assert_eq!(got["result"], done["result"], "{got}");
    let got = (agent)
        .request("tasks/get", json!({ "taskId": cancelled }))
        .await;
    assert_eq!(got["result"]["status"], json!("cancelled"), "{got}");
    let lost = agent
        .request("tasks/get", json!({ "taskId": working }))
        .await;
    assert_eq!(lost["result"]["status"], json!("failed"), "{lost}");

    // The result fetched before is kept; the one not fetched is said to be lost.
    let again = (agent)
        .request("tasks/result", json!({ "taskId": fetched }))
        .await;
    assert_eq!(again["result"], result["result"], "{again}");
    let gone = (agent)
        .request("tasks/result", json!({ "taskId": unfetched }))
        .await;
    assert_eq!(gone["error"]["code"], json!(-32603), "{gone}");
    let message = gone["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(&format!(
            "the result of task \"{unfetched}\" was lost when the server \"everything\" restarted"
        )),
        "{gone}"
    );
    let cancel = (agent)
        .request("tasks/cancel", json!({ "taskId": unfetched }))
        .await;
    assert_eq!(cancel["error"]["code"], json!(-32602), "{cancel}");
    assert!(
        (cancel["error"]["message"].as_str()).is_some_and(|m| m.contains("already ended")),
        "{cancel}"
    );

    let listed = agent.request("tasks/list", json!({})).await;
    let statuses: Vec<&Value> = (listed["result"]["tasks"].as_array().into_iter().flatten())
        .map(|t| &t["status"])
        .collect();
    assert_eq!(
        statuses,
        [
            &json!("completed"),
            &json!("completed"),
            &json!("cancelled"),
            &json!("failed")
        ],
        "{listed}"
    );
}

#[tokio::test]
async fn a_2026_agent_reads_its_tasks_while_their_server_is_stopped() {
    let Some(peers) = peers_dir() else { return };
    let js = everything_js(&peers).display().to_string();
    let c = Companion::start(everything(&js));
    c.running().await;
    let mut agent = Agent {
        raw: RawAgent::connect_only(&c.socket).await,
        modern: true,
        id: 0,
    };
    let completed = agent.create("completed", false).await;
    let cancelled = agent.create("cancelled", false).await;
    let working = agent.create("working", true).await;
    let acked = (agent)
        .request("tasks/cancel", json!({ "taskId": cancelled }))
        .await;
    assert!(acked.get("result").is_some(), "{acked}");
    let done = agent.until_ended(&completed).await;
    assert_eq!(done["result"]["status"], json!("completed"), "{done}");
    assert!(done["result"]["result"]["content"].is_array(), "{done}");

    let stop = c.cli(&["stop", "everything"]);
    assert!(
        stop.status.success(),
        "{}",
        String::from_utf8_lossy(&stop.stderr)
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while c.server("everything").await.state != ServerState::Stopped {
        assert!(Instant::now() < deadline, "not stopped\n{}", c.log());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // The extension is still declared: each task is answered, as it ended or lost.
    let got = (agent)
        .request("tasks/get", json!({ "taskId": completed }))
        .await;
    assert_eq!(got["result"], done["result"], "{got}");
    let got = (agent)
        .request("tasks/get", json!({ "taskId": cancelled }))
        .await;
    assert_eq!(got["result"]["status"], json!("cancelled"), "{got}");
    let lost = agent
        .request("tasks/get", json!({ "taskId": working }))
        .await;
    assert_eq!(lost["result"]["status"], json!("failed"), "{lost}");
    let message = lost["result"]["statusMessage"].as_str().unwrap_or_default();
    assert!(message.contains("\"everything\""), "{lost}");
    let cancel = (agent)
        .request("tasks/cancel", json!({ "taskId": completed }))
        .await;
    assert_eq!(cancel["error"]["code"], json!(-32602), "{cancel}");
    let cancel = (agent)
        .request("tasks/cancel", json!({ "taskId": working }))
        .await;
    assert_eq!(cancel["error"]["code"], json!(-32602), "{cancel}");
    assert!(
        (cancel["error"]["message"].as_str()).is_some_and(|m| m.contains("restarted or stopped")),
        "{cancel}"
    );
}
