//! OpenTelemetry export (opt-in: `"telemetry": {"otlpEndpoint": …}`): a span per call and per
//! listing, and call counts, errors and latencies per server and tool, sent over OTLP/HTTP
//! (protobuf) to the collector the person names.
//!
//! ```text
//! call path ─▶ activity queue ─▶ writer thread ─┬─▶ activity.db
//!                                               └─▶ Exporter (Sink): span + metrics
//!                                                     │ in memory: span queue (bounded), aggregates
//!                                                     ▼ SDK threads, every exportIntervalSeconds
//!                                                   GuardedHttp ─▶ <endpoint>/v1/traces, /v1/metrics
//! ```
//!
//! One source of truth: the export is fed the activity log's rows ([`crate::activity::Sink`]),
//! so nothing instruments the call path twice and a call costs nothing more on its path. Spans
//! wait in the SDK's batch processor (a bounded queue of [`SPAN_QUEUE`]; full: new spans are
//! dropped), metrics are aggregated in memory; both are sent from the SDK's own threads.
//!
//! Where the connection goes is guarded like a remote server's: the SSRF guard with the
//! config's `ssrfWhitelist` (a collector on loopback or a private network needs its entry),
//! the headers sent as sensitive default headers and never logged, redirects re-checked.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | [`Exporter`]: the providers, starting and flushing them |
//! | `http.rs` | [`GuardedHttp`]: the exporters' HTTP client, failures logged once per kind |
//! | `signal.rs` | a row as a span and as metrics: names, attributes, status |

mod http;
mod signal;

use std::sync::Arc;
use std::time::Duration;

use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{
    MetricExporter, Protocol, SpanExporter, WithExportConfig, WithHttpConfig,
};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};

pub use http::GuardedHttp;

use crate::activity::{Row, Sink};
use crate::config::TelemetryConfig;
use crate::net::{ClientError, Guard, build_client, redact};

/// Spans the batch processor holds before new ones are dropped.
pub const SPAN_QUEUE: usize = 2048;
/// How long one export request may take.
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);
/// The instrumentation scope's name.
const SCOPE: &str = "mcp-companion";

/// Why export could not start. Never holds a header value.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// The config's endpoint or headers are unusable.
    #[error("telemetry: {0}")]
    Client(#[from] ClientError),
    /// The SSRF guard refused the endpoint's address.
    #[error("telemetry endpoint {endpoint}: {reason}")]
    Refused {
        /// The endpoint, redacted.
        endpoint: String,
        /// What the guard said.
        reason: String,
    },
    /// The OTLP exporter refused its configuration.
    #[error("telemetry: cannot build the OTLP exporter: {0}")]
    Build(String),
}

/// The export: fed rows by the activity writer ([`Sink`]); sends from the SDK's threads.
pub struct Exporter {
    traces: SdkTracerProvider,
    metrics: SdkMeterProvider,
    signals: signal::Signals,
}

impl std::fmt::Debug for Exporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exporter").finish_non_exhaustive()
    }
}

impl Exporter {
    /// Starts export as `config` (already expanded: [`TelemetryConfig::expand_from_env`]) says,
    /// through the SSRF guard of `whitelist`, sending on `runtime`. `Ok(None)` when no endpoint
    /// is set.
    ///
    /// # Errors
    /// [`TelemetryError`]: a bad header, an endpoint the guard refuses (an IP literal; names are
    /// checked when they resolve), or an exporter that cannot be built.
    pub fn start(
        config: &TelemetryConfig,
        whitelist: &[ipnet::IpNet],
        runtime: tokio::runtime::Handle,
    ) -> Result<Option<Exporter>, TelemetryError> {
        let Some(endpoint) = &config.endpoint else {
            return Ok(None);
        };
        remember_env_headers();
        let guard = Guard::new(whitelist);
        if let Ok(url) = url::Url::parse(endpoint)
            && let Err(e) = guard.check_url_literal(&url)
        {
            return Err(TelemetryError::Refused {
                endpoint: redact(endpoint),
                reason: e.to_string(),
            });
        }
        let http = Arc::new(GuardedHttp {
            client: build_client(&guard, &config.headers, EXPORT_TIMEOUT)?,
            guard,
            runtime,
            timeout: EXPORT_TIMEOUT,
            failures: Arc::default(),
        });
        let base = endpoint.trim_end_matches('/');
        let resource = Resource::builder_empty()
            .with_service_name(config.service_name.clone())
            .with_attribute(opentelemetry::KeyValue::new(
                "service.version",
                env!("CARGO_PKG_VERSION"),
            ))
            .build();

        let spans = SpanExporter::builder()
            .with_http()
            .with_shared_http_client(http.clone())
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(format!("{base}/v1/traces"))
            .with_timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|e| TelemetryError::Build(e.to_string()))?;
        let batch = BatchConfigBuilder::default()
            .with_max_queue_size(SPAN_QUEUE)
            .with_scheduled_delay(config.interval)
            .build();
        let traces = SdkTracerProvider::builder()
            .with_span_processor(
                BatchSpanProcessor::builder(spans)
                    .with_batch_config(batch)
                    .build(),
            )
            .with_resource(resource.clone())
            .build();

        let metric_exporter = MetricExporter::builder()
            .with_http()
            .with_shared_http_client(http)
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(format!("{base}/v1/metrics"))
            .with_timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|e| TelemetryError::Build(e.to_string()))?;
        let reader = PeriodicReader::builder(metric_exporter)
            .with_interval(config.interval)
            .build();
        let metrics = SdkMeterProvider::builder()
            .with_reader(reader)
            .with_resource(resource)
            .build();

        let signals = signal::Signals::new(traces.tracer(SCOPE), &metrics.meter(SCOPE));
        tracing::info!(endpoint = %redact(endpoint), interval_s = config.interval.as_secs_f64(), "telemetry export");
        Ok(Some(Exporter {
            traces,
            metrics,
            signals,
        }))
    }
}

/// The SDK adds the headers of `OTEL_EXPORTER_OTLP_HEADERS` (and its per-signal forms,
/// `k1=v1,k2=v2`) to every export: their values are remembered by the log scrubber like the
/// config's `headers`.
fn remember_env_headers() {
    for var in [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
    ] {
        let Ok(list) = std::env::var(var) else {
            continue;
        };
        let values: Vec<String> = list
            .split(',')
            .filter_map(|pair| pair.split_once('='))
            .map(|(_, v)| v.trim().to_owned())
            .collect();
        crate::net::remember_secrets("", &values);
    }
}

impl Sink for Exporter {
    fn row(&mut self, row: &Row) {
        self.signals.record(row);
    }

    fn flush(&mut self) {
        // Failures were logged by the HTTP client; the SDK's own errors add nothing.
        let _ = self.traces.force_flush();
        let _ = self.metrics.force_flush();
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.traces.shutdown_with_timeout(EXPORT_TIMEOUT);
        let _ = self.metrics.shutdown_with_timeout(EXPORT_TIMEOUT);
    }
}
