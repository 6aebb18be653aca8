//! From an activity row to OpenTelemetry: one span per call and per listing, and the call
//! metrics. Nothing of the arguments or result is exported, only who, where, how it ended
//! and how long it took.
//!
//! | span | name | attributes |
//! |---|---|---|
//! | a `tools/call` | `tools/call <tool>` | `mcp.method.name`, `gen_ai.tool.name`, `mcp.companion.server`, `mcp.companion.agent`, `mcp.companion.profile`, `mcp.companion.path`, `mcp.companion.outcome`, `error.type` |
//! | a listing | `tools/list` | `mcp.method.name`, `mcp.companion.agent`, `mcp.companion.profile`, `mcp.companion.path`, `mcp.companion.items` |
//!
//! Spans are of kind `Server`, start when the call started and last its duration; their
//! status is `Error` (described by the failure's kind) for `isError`, `error`, `timeout` and
//! `withheld`, unset otherwise.
//!
//! | metric | instrument | unit | attributes |
//! |---|---|---|---|
//! | `mcp.companion.calls` | counter | `{call}` | `mcp.companion.server`, `gen_ai.tool.name`, `mcp.companion.outcome` |
//! | `mcp.companion.call.errors` | counter | `{call}` | the same, for calls whose outcome is not `ok` or `cancelled` |
//! | `mcp.companion.call.duration` | histogram | `s` | `mcp.companion.server`, `gen_ai.tool.name` |

use std::time::{Duration, SystemTime};

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, Meter};
use opentelemetry::trace::{Span as _, SpanKind, Status, Tracer as _};
use opentelemetry_sdk::trace::SdkTracer;

use crate::activity::Row;

/// Bucket bounds of the duration histogram, in seconds: 1 ms to 2 min.
const BOUNDS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
];

/// The instruments rows are recorded with.
pub(super) struct Signals {
    tracer: SdkTracer,
    calls: Counter<u64>,
    errors: Counter<u64>,
    duration: Histogram<f64>,
}

impl Signals {
    pub(super) fn new(tracer: SdkTracer, meter: &Meter) -> Signals {
        Signals {
            tracer,
            calls: meter
                .u64_counter("mcp.companion.calls")
                .with_description("tools/call requests agents made through the companion")
                .with_unit("{call}")
                .build(),
            errors: meter
                .u64_counter("mcp.companion.call.errors")
                .with_description("calls that ended in isError, an error, a timeout or withheld")
                .with_unit("{call}")
                .build(),
            duration: meter
                .f64_histogram("mcp.companion.call.duration")
                .with_description("time from an agent's tools/call to its answer")
                .with_unit("s")
                .with_boundaries(BOUNDS.to_vec())
                .build(),
        }
    }

    /// Records `row` (calls and listings; other kinds are not exported).
    pub(super) fn record(&self, row: &Row) {
        match row.kind {
            "call" => self.call(row),
            "list" => self.listing(row),
            _ => {}
        }
    }

    fn call(&self, row: &Row) {
        let tool = row.tool.clone().unwrap_or_default();
        let outcome = row.outcome.clone().unwrap_or_default();
        let server = row.server.clone().unwrap_or_default();
        let duration = Duration::from_secs_f64(row.duration_ms.unwrap_or(0.0).max(0.0) / 1000.0);
        let failed = !matches!(outcome.as_str(), "ok" | "cancelled");

        let mut attributes = vec![
            KeyValue::new("mcp.method.name", "tools/call"),
            KeyValue::new("gen_ai.tool.name", tool.clone()),
            KeyValue::new("mcp.companion.outcome", outcome.clone()),
        ];
        if !server.is_empty() {
            attributes.push(KeyValue::new("mcp.companion.server", server.clone()));
        }
        who(row, &mut attributes);
        let error_type = error_type(row);
        if let Some(kind) = &error_type {
            attributes.push(KeyValue::new("error.type", kind.clone()));
        }
        let start = SystemTime::UNIX_EPOCH + Duration::from_millis(row.at_ms);
        let mut span = self
            .tracer
            .span_builder(format!("tools/call {tool}"))
            .with_kind(SpanKind::Server)
            .with_start_time(start)
            .with_attributes(attributes)
            .start(&self.tracer);
        if failed {
            span.set_status(Status::error(error_type.unwrap_or(outcome.clone())));
        }
        span.end_with_timestamp(start + duration);

        let metric = [
            KeyValue::new("mcp.companion.server", server.clone()),
            KeyValue::new("gen_ai.tool.name", tool.clone()),
            KeyValue::new("mcp.companion.outcome", outcome),
        ];
        self.calls.add(1, &metric);
        if failed {
            self.errors.add(1, &metric);
        }
        self.duration.record(
            duration.as_secs_f64(),
            &[
                KeyValue::new("mcp.companion.server", server),
                KeyValue::new("gen_ai.tool.name", tool),
            ],
        );
    }

    fn listing(&self, row: &Row) {
        let method = row.tool.clone().unwrap_or_else(|| "tools/list".to_owned());
        let mut attributes = vec![KeyValue::new("mcp.method.name", method.clone())];
        who(row, &mut attributes);
        if let Some(n) = row.count {
            attributes.push(KeyValue::new(
                "mcp.companion.items",
                i64::try_from(n).unwrap_or(i64::MAX),
            ));
        }
        let at = SystemTime::UNIX_EPOCH + Duration::from_millis(row.at_ms);
        let mut span = self
            .tracer
            .span_builder(method)
            .with_kind(SpanKind::Server)
            .with_start_time(at)
            .with_attributes(attributes)
            .start(&self.tracer);
        span.end_with_timestamp(at);
    }
}

/// The agent, profile and path attributes `row` has.
fn who(row: &Row, attributes: &mut Vec<KeyValue>) {
    if let Some(agent) = &row.agent {
        attributes.push(KeyValue::new("mcp.companion.agent", agent.clone()));
    }
    if let Some(profile) = &row.profile {
        attributes.push(KeyValue::new("mcp.companion.profile", profile.clone()));
    }
    if let Some(path) = row.path {
        attributes.push(KeyValue::new("mcp.companion.path", path));
    }
}

/// `error.type` of a call: its failure's kind, or `tool_error` for an `isError` the server
/// answered; `None` for a call that went well or was cancelled.
fn error_type(row: &Row) -> Option<String> {
    match (row.outcome.as_deref(), row.error_kind) {
        (Some("isError"), _) => Some("tool_error".to_owned()),
        (Some("ok" | "cancelled") | None, _) => None,
        (Some(outcome), kind) => Some(kind.unwrap_or(outcome).to_owned()),
    }
}
