//! A small MCP registry for the tests: the generic registry API's read side
//! (`GET /v0.1/servers`, `/v0.1/servers/{name}/versions`, `/v0.1/servers/{name}/versions/{v}`)
//! on 127.0.0.1, serving the `server.json` documents in `tests/fixtures/registry/` plus one
//! generated on the fly with a 10 MB description (`io.github.fixture/huge`, listed only when
//! the search term contains `huge`). It records every request path and `Authorization` header.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

/// What the fixture holds and saw.
pub struct Registry {
    /// `ServerResponse` documents, in file-name order.
    docs: Vec<Value>,
    /// Request path + query, and the Authorization header, of every request.
    pub seen: Mutex<Vec<(String, Option<String>)>>,
}

const HUGE: &str = "io.github.fixture/huge";

fn huge() -> Value {
    json!({"server": {"name": HUGE, "version": "1.0.0", "description": "x".repeat(10 * 1024 * 1024),
        "packages": [{"registryType": "npm", "identifier": "huge", "version": "1.0.0"}]}})
}

fn name_of(doc: &Value) -> &str {
    doc.pointer("/server/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn version_of(doc: &Value) -> &str {
    doc.pointer("/server/version")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn is_latest(doc: &Value) -> bool {
    doc.pointer("/_meta/io.modelcontextprotocol.registry~1official/isLatest")
        .and_then(Value::as_bool)
        .unwrap_or(true)
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn ok_json(body: Value) -> Response {
    json_response(StatusCode::OK, &body)
}

fn not_found() -> Response {
    json_response(StatusCode::NOT_FOUND, &json!({"error": "Server not found"}))
}

fn record(reg: &Registry, uri: &Uri, headers: &HeaderMap) {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    reg.seen.lock().unwrap().push((uri.to_string(), auth));
}

async fn list(State(reg): State<Arc<Registry>>, uri: Uri, headers: HeaderMap) -> Response {
    record(&reg, &uri, &headers);
    let q: HashMap<String, String> =
        url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes())
            .into_owned()
            .collect();
    let search = q.get("search").cloned().unwrap_or_default();
    if search.contains("huge") {
        return ok_json(json!({"servers": [huge()], "metadata": {"count": 1}}));
    }
    let limit: usize = q.get("limit").and_then(|l| l.parse().ok()).unwrap_or(30);
    let mut matching: Vec<&Value> = reg
        .docs
        .iter()
        .filter(|d| is_latest(d) && name_of(d).contains(&search))
        .collect();
    matching.sort_by_key(|d| name_of(d).to_owned());
    let start = match q.get("cursor") {
        Some(c) => matching
            .iter()
            .position(|d| name_of(d) > c.as_str())
            .unwrap_or(matching.len()),
        None => 0,
    };
    let page: Vec<&Value> = matching.iter().skip(start).take(limit).copied().collect();
    let next = (start + page.len() < matching.len())
        .then(|| page.last().map(|d| name_of(d).to_owned()))
        .flatten();
    ok_json(json!({"servers": page, "metadata": {"nextCursor": next, "count": page.len()}}))
}

async fn versions(
    State(reg): State<Arc<Registry>>,
    uri: Uri,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Response {
    record(&reg, &uri, &headers);
    let mut all: Vec<&Value> = reg.docs.iter().filter(|d| name_of(d) == name).collect();
    if all.is_empty() {
        return not_found();
    }
    all.sort_by_key(|d| std::cmp::Reverse(is_latest(d)));
    ok_json(json!({"servers": all, "metadata": {"count": all.len()}}))
}

async fn version(
    State(reg): State<Arc<Registry>>,
    uri: Uri,
    headers: HeaderMap,
    Path((name, version)): Path<(String, String)>,
) -> Response {
    record(&reg, &uri, &headers);
    if name == HUGE {
        return ok_json(huge());
    }
    reg.docs
        .iter()
        .find(|d| {
            name_of(d) == name
                && (version_of(d) == version || (version == "latest" && is_latest(d)))
        })
        .map_or_else(not_found, |d| ok_json(d.clone()))
}

/// A running fixture registry.
pub struct Fixture {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// Its state.
    pub registry: Arc<Registry>,
}

/// Starts the fixture on an ephemeral 127.0.0.1 port (runs until the test's runtime ends).
pub async fn start() -> Fixture {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/registry");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let docs = files
        .iter()
        .map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap())
        .collect();
    let registry = Arc::new(Registry {
        docs,
        seen: Mutex::new(Vec::new()),
    });
    let app = axum::Router::new()
        .route("/v0.1/servers", get(list))
        .route("/v0.1/servers/{name}/versions", get(versions))
        .route("/v0.1/servers/{name}/versions/{version}", get(version))
        .with_state(registry.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Fixture { url, registry }
}
