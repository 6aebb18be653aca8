//! OpenTelemetry export (`src/telemetry`) of a real companion with a real stdio server, to an
//! OTLP/HTTP receiver this test runs on loopback (decoding the protobuf with
//! `opentelemetry-proto`): the spans of calls and listings with their attributes and status,
//! the call metrics, the header sent but never logged, and the SSRF guard on the endpoint.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::metric::Data;
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode as SpanStatus;
use prost::Message as _;
use serde_json::{Value, json};

use crate::common::{Companion, demo, eventually};
use crate::raw::RawAgent;

/// The bearer token the config's header carries (through `${OTEL_TEST_TOKEN}`).
const TOKEN: &str = "otel-token-5f1e9c2a7b";

/// What the receiver got.
#[derive(Default)]
struct Received {
    spans: Vec<Span>,
    metrics: Vec<ExportMetricsServiceRequest>,
    authorization: Vec<String>,
}

/// An OTLP/HTTP receiver on 127.0.0.1; `refuse` answers 401 quoting the request's
/// Authorization header (a collector that echoes the credential back).
async fn receiver(refuse: bool) -> (u16, Arc<Mutex<Received>>) {
    let got = Arc::new(Mutex::new(Received::default()));
    let handler = |signal: &'static str| {
        let got = got.clone();
        move |headers: HeaderMap, body: Bytes| {
            let got = got.clone();
            async move {
                let auth = headers
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned();
                if refuse {
                    return (StatusCode::UNAUTHORIZED, format!("token rejected: {auth}"));
                }
                let mut g = got.lock().expect("lock");
                g.authorization.push(auth);
                match signal {
                    "traces" => {
                        let req = ExportTraceServiceRequest::decode(body).expect("trace protobuf");
                        for rs in req.resource_spans {
                            for ss in rs.scope_spans {
                                g.spans.extend(ss.spans);
                            }
                        }
                    }
                    _ => {
                        let req =
                            ExportMetricsServiceRequest::decode(body).expect("metric protobuf");
                        g.metrics.push(req);
                    }
                }
                (StatusCode::OK, String::new())
            }
        }
    };
    let app = axum::Router::new()
        .route("/v1/traces", axum::routing::post(handler("traces")))
        .route("/v1/metrics", axum::routing::post(handler("metrics")));
    let (port, _serving) = crate::remote_fixture::listen(app).await;
    (port, got)
}

fn config(port: u16, whitelisted: bool) -> Value {
    let mut c = json!({
        "mcpServers": { "demo": demo(&[]) },
        "telemetry": {
            "otlpEndpoint": format!("http://127.0.0.1:{port}"),
            "headers": {"Authorization": "Bearer ${OTEL_TEST_TOKEN}"},
            "exportIntervalSeconds": 1
        },
        "profiles": { "work": { "servers": ["demo"] } }
    });
    if whitelisted {
        c["ssrfWhitelist"] = json!(["127.0.0.1/32"]);
    }
    c
}

fn start(config: Value) -> Companion {
    Companion::start_with_env(config, &[("OTEL_TEST_TOKEN", Some(TOKEN))])
}

fn attr<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a any_value::Value> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v: &AnyValue| v.value.as_ref())
}

fn text_attr(attributes: &[KeyValue], key: &str) -> Option<String> {
    match attr(attributes, key) {
        Some(any_value::Value::StringValue(s)) => Some(s.clone()),
        _ => None,
    }
}

fn span_named<'a>(spans: &'a [Span], name: &str) -> Vec<&'a Span> {
    spans.iter().filter(|s| s.name == name).collect()
}

/// The sum of the newest data points of counter `name` whose `gen_ai.tool.name` is `tool`
/// (cumulative: the newest export has the total).
fn counter(metrics: &[ExportMetricsServiceRequest], name: &str, tool: &str) -> Option<i64> {
    metrics.iter().rev().find_map(|req| {
        let points: Vec<i64> = req
            .resource_metrics
            .iter()
            .flat_map(|r| &r.scope_metrics)
            .flat_map(|s| &s.metrics)
            .filter(|m| m.name == name)
            .filter_map(|m| match &m.data {
                Some(Data::Sum(sum)) => Some(sum.data_points.clone()),
                _ => None,
            })
            .flatten()
            .filter(|p| text_attr(&p.attributes, "gen_ai.tool.name").as_deref() == Some(tool))
            .filter_map(|p| match p.value {
                Some(opentelemetry_proto::tonic::metrics::v1::number_data_point::Value::AsInt(
                    n,
                )) => Some(n),
                _ => None,
            })
            .collect();
        (!points.is_empty()).then(|| points.iter().sum())
    })
}

/// The count of the newest histogram data point of `tool`.
fn histogram_count(metrics: &[ExportMetricsServiceRequest], tool: &str) -> Option<u64> {
    metrics.iter().rev().find_map(|req| {
        req.resource_metrics
            .iter()
            .flat_map(|r| &r.scope_metrics)
            .flat_map(|s| &s.metrics)
            .filter(|m| m.name == "mcp.companion.call.duration")
            .find_map(|m| match &m.data {
                Some(Data::Histogram(h)) => h
                    .data_points
                    .iter()
                    .find(|p| text_attr(&p.attributes, "gen_ai.tool.name").as_deref() == Some(tool))
                    .map(|p| p.count),
                _ => None,
            })
    })
}

#[tokio::test]
async fn calls_and_listings_reach_the_collector_as_spans_and_metrics() {
    let (port, got) = receiver(false).await;
    let c = start(config(port, true));
    c.settled().await;
    let exporting = c.status().await.telemetry.expect("the telemetry status");
    assert_eq!(exporting.error, None, "{exporting:?}");
    let mut agent = RawAgent::connect(&c.socket).await;
    let ok = agent
        .call_tool(1, "mcp_demo_echo", json!({"message": "secret words"}))
        .await;
    assert_eq!(ok["result"]["content"][0]["text"], "secret words", "{ok}");
    agent
        .call_tool(2, "mcp_demo_echo", json!({"message": "again"}))
        .await;
    let failed = agent
        .call_tool(3, "mcp_demo_fail", json!({"message": "nope"}))
        .await;
    assert_eq!(failed["result"]["isError"], true, "{failed}");
    agent
        .send(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}))
        .await;
    agent.until_response(&json!(4)).await;
    let cli = c.cli(&[
        "call",
        "--profile",
        "work",
        "mcp_demo_echo",
        r#"{"message":"via work"}"#,
    ]);
    assert!(cli.status.success(), "{cli:?}");

    let complete = eventually(Duration::from_secs(30), || {
        let g = got.lock().expect("lock");
        span_named(&g.spans, "tools/call mcp_demo_echo").len() >= 3
            && !span_named(&g.spans, "tools/call mcp_demo_fail").is_empty()
            && !span_named(&g.spans, "tools/list").is_empty()
            && counter(&g.metrics, "mcp.companion.calls", "mcp_demo_echo") == Some(3)
            && counter(&g.metrics, "mcp.companion.call.errors", "mcp_demo_fail") == Some(1)
    })
    .await;
    let g = got.lock().expect("lock");
    assert!(
        complete,
        "spans: {:#?}\nmetrics: {} exports\nlog:\n{}",
        g.spans.iter().map(|s| &s.name).collect::<Vec<_>>(),
        g.metrics.len(),
        c.log()
    );

    let echoes = span_named(&g.spans, "tools/call mcp_demo_echo");
    let by_agent = echoes
        .iter()
        .find(|s| text_attr(&s.attributes, "mcp.companion.agent").as_deref() == Some("raw-agent"))
        .expect("an echo span of raw-agent");
    assert_eq!(
        text_attr(&by_agent.attributes, "mcp.companion.server").as_deref(),
        Some("demo")
    );
    assert_eq!(
        text_attr(&by_agent.attributes, "gen_ai.tool.name").as_deref(),
        Some("mcp_demo_echo")
    );
    assert_eq!(
        text_attr(&by_agent.attributes, "mcp.companion.outcome").as_deref(),
        Some("ok")
    );
    assert_eq!(
        text_attr(&by_agent.attributes, "mcp.method.name").as_deref(),
        Some("tools/call")
    );
    assert!(by_agent.end_time_unix_nano >= by_agent.start_time_unix_nano);
    assert_ne!(
        by_agent.status.as_ref().map(|s| s.code),
        Some(SpanStatus::Error as i32)
    );
    // The profile of the session the call came through.
    assert!(
        echoes.iter().any(|s| {
            text_attr(&s.attributes, "mcp.companion.profile").as_deref() == Some("work")
        }),
        "{echoes:#?}"
    );
    // No arguments or results in any span.
    for s in &g.spans {
        for kv in &s.attributes {
            let shown = format!("{:?}", kv.value);
            assert!(!shown.contains("secret words"), "{s:?}");
        }
    }

    let fail = span_named(&g.spans, "tools/call mcp_demo_fail")[0];
    assert_eq!(
        fail.status.as_ref().map(|s| s.code),
        Some(SpanStatus::Error as i32),
        "{fail:?}"
    );
    assert_eq!(
        text_attr(&fail.attributes, "mcp.companion.outcome").as_deref(),
        Some("isError")
    );
    assert_eq!(
        text_attr(&fail.attributes, "error.type").as_deref(),
        Some("tool_error")
    );
    let list = span_named(&g.spans, "tools/list")[0];
    assert_eq!(
        text_attr(&list.attributes, "mcp.companion.agent").as_deref(),
        Some("raw-agent")
    );
    assert!(
        matches!(
            attr(&list.attributes, "mcp.companion.items"),
            Some(any_value::Value::IntValue(n)) if *n > 0
        ),
        "{list:?}"
    );

    assert_eq!(histogram_count(&g.metrics, "mcp_demo_echo"), Some(3));
    assert_eq!(
        counter(&g.metrics, "mcp.companion.call.errors", "mcp_demo_echo"),
        None,
        "no error data point for a tool that never failed"
    );
    assert!(
        g.authorization
            .iter()
            .all(|a| a == &format!("Bearer {TOKEN}")),
        "the configured header goes with every export: {:?}",
        g.authorization
    );
    assert!(!c.log().contains(TOKEN), "{}", c.log());
}

#[tokio::test]
async fn a_collector_quoting_the_header_back_never_puts_the_secret_in_the_log_or_status() {
    let (port, _got) = receiver(true).await;
    let c = start(config(port, true));
    c.settled().await;
    let mut agent = RawAgent::connect(&c.socket).await;
    agent
        .call_tool(1, "mcp_demo_echo", json!({"message": "hi"}))
        .await;
    let logged = eventually(Duration::from_secs(30), || {
        c.log().contains("telemetry export failed")
    })
    .await;
    let log = c.log();
    assert!(logged, "{log}");
    assert!(log.contains("HTTP 401"), "{log}");
    assert!(log.contains("token rejected: <redacted>"), "{log}");
    assert!(!log.contains(TOKEN), "{log}");
    // Said once per kind of failure, though every interval fails again.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(
        c.log().matches("telemetry export failed").count(),
        1,
        "{}",
        c.log()
    );
    for args in [&["status"][..], &["status", "--json"][..]] {
        let out = c.cli(args);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!text.contains(TOKEN), "{text}");
    }
}

#[tokio::test]
async fn a_loopback_collector_without_a_whitelist_entry_is_refused_by_the_ssrf_guard() {
    let (port, got) = receiver(false).await;
    let c = start(config(port, false));
    c.settled().await;
    let mut agent = RawAgent::connect(&c.socket).await;
    let ok = agent
        .call_tool(1, "mcp_demo_echo", json!({"message": "hi"}))
        .await;
    assert_eq!(ok["result"]["content"][0]["text"], "hi", "{ok}");
    let log = c.log();
    assert!(
        log.contains("telemetry is off") && log.contains("ssrfWhitelist"),
        "{log}"
    );
    assert!(!log.contains(TOKEN), "{log}");
    // `status` says so too, as JSON and as text, naming the endpoint and the guard's reason.
    let status = c.status().await;
    let t = status.telemetry.expect("the telemetry status");
    assert_eq!(t.endpoint, format!("http://127.0.0.1:{port}/"));
    let why = t.error.expect("why export is off");
    assert!(why.contains("ssrfWhitelist"), "{why}");
    let out = c.cli(&["status"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("telemetry: off, export to http://127.0.0.1:")
            && text.contains("ssrfWhitelist"),
        "{text}"
    );
    assert!(!text.contains(TOKEN), "{text}");
    let g = got.lock().expect("lock");
    assert!(g.spans.is_empty() && g.metrics.is_empty());
}

/// A collector that accepts the connection and never answers holds a stop up by the short
/// telemetry grace at most, and is no reason to say the activity log may have lost entries.
#[tokio::test]
async fn a_hanging_collector_is_no_reason_to_doubt_the_activity_log_at_a_stop() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    // Accepts, reads nothing, answers nothing, holds every connection open.
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            open.push(stream);
        }
    });
    let mut c = start(config(port, true));
    c.settled().await;
    let mut agent = RawAgent::connect(&c.socket).await;
    let ok = agent
        .call_tool(1, "mcp_demo_echo", json!({"message": "hi"}))
        .await;
    assert_eq!(ok["result"]["content"][0]["text"], "hi", "{ok}");
    let status = c.terminate(std::time::Duration::from_secs(60));
    assert!(status.success(), "{status:?}");
    let log = c.log();
    assert!(
        !log.contains("may not have been written"),
        "a false warning at the stop: {log}"
    );
    let db = c.home.join(".local/share/mcp-companion/activity.db");
    let conn = mcp_companion::activity::store::open_read_only(&db).expect("the log");
    let calls = mcp_companion::activity::query::read(
        &conn,
        &mcp_companion::activity::query::Filter::default(),
        0,
    )
    .expect("read")
    .into_iter()
    .filter(|r| r.kind == "call")
    .count();
    assert_eq!(calls, 1);
    held.abort();
}
