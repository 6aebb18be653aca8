//! The `telemetry` object of `config.json`: OpenTelemetry export of calls (traces) and their
//! counts and latencies (metrics) over OTLP/HTTP, off unless an endpoint is named.
//!
//! ```text
//! "telemetry": {"otlpEndpoint": "http://127.0.0.1:4318",
//!               "headers": {"Authorization": "Bearer ${secret:otel.token}"},
//!               "serviceName": "mcp-companion", "exportIntervalSeconds": 30}
//! ```
//!
//! `otlpEndpoint` is the collector's base URL; traces go to `<base>/v1/traces` and metrics to
//! `<base>/v1/metrics` (as `OTEL_EXPORTER_OTLP_ENDPOINT` is read). `headers` values and the
//! endpoint take `${VAR}` and `${secret:NAME}` like a remote server's ([`super::expand`]),
//! expanded when the companion starts; every expanded value is masked in logs.
//!
//! A bad field is a warning and export stays off (telemetry is never a reason to refuse a
//! config, and never sent somewhere half-configured).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use super::error::json_type;
use super::expand::{Sources, expand_text};
use super::{ConfigError, default_lookup};

/// Default of `exportIntervalSeconds`: how often spans and metrics are sent.
pub const DEFAULT_EXPORT_INTERVAL: Duration = Duration::from_secs(30);
/// Default of `serviceName`: the OTel `service.name` of what is exported.
pub const DEFAULT_SERVICE_NAME: &str = "mcp-companion";
/// The "server" errors of the expansion name: `telemetry`.
const WHERE: &str = "telemetry";

/// The export's settings, read when the companion starts. Holds unexpanded references until
/// [`TelemetryConfig::expand_from_env`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TelemetryConfig {
    /// `otlpEndpoint`: the collector's base URL (`http` or `https`). `None`: export is off.
    pub endpoint: Option<String>,
    /// `headers`: sent with every export request (values may be secrets).
    pub headers: BTreeMap<String, String>,
    /// `serviceName` (default [`DEFAULT_SERVICE_NAME`]).
    pub service_name: String,
    /// `exportIntervalSeconds` (1 to 3600, default 30): how often batches of spans and the
    /// metrics are sent.
    pub interval: Duration,
}

impl Default for TelemetryConfig {
    fn default() -> Self {
        TelemetryConfig {
            endpoint: None,
            headers: BTreeMap::new(),
            service_name: DEFAULT_SERVICE_NAME.to_owned(),
            interval: DEFAULT_EXPORT_INTERVAL,
        }
    }
}

impl TelemetryConfig {
    /// Whether anything is exported.
    pub fn enabled(&self) -> bool {
        self.endpoint.is_some()
    }

    /// A copy with `${VAR}` / `${secret:NAME}` in `otlpEndpoint` and every `headers` value
    /// replaced through `lookup` and `secrets`; each value read is remembered by the log
    /// scrubber ([`crate::net::remember_secrets`]) so it is masked wherever it turns up.
    ///
    /// # Errors
    /// [`ConfigError`] naming `telemetry` and the field (never a value), as for a server entry.
    pub fn expand(
        &self,
        lookup: &dyn Fn(&str) -> Option<String>,
        secrets: &dyn crate::secret::SecretStore,
    ) -> Result<TelemetryConfig, ConfigError> {
        let src = Sources::new(lookup, secrets);
        let endpoint = match &self.endpoint {
            Some(e) => {
                let url = expand_text(WHERE, "otlpEndpoint", e, &src)?;
                check_endpoint(&url)
                    .map_err(|why| ConfigError::field(WHERE, "otlpEndpoint", why))?;
                Some(url)
            }
            None => None,
        };
        let mut headers = BTreeMap::new();
        for (k, v) in &self.headers {
            let value = expand_text(WHERE, &format!("headers.{k}"), v, &src)?;
            crate::net::remember_secrets("", std::iter::once(&value));
            headers.insert(k.clone(), value);
        }
        Ok(TelemetryConfig {
            endpoint,
            headers,
            ..self.clone()
        })
    }

    /// [`TelemetryConfig::expand`] with the environment and the OS keychain (contacted only
    /// when a `${secret:…}` is present). May block for a keychain round trip.
    ///
    /// # Errors
    /// As [`TelemetryConfig::expand`].
    pub fn expand_from_env(&self) -> Result<TelemetryConfig, ConfigError> {
        let keychain = crate::secret::os_keychain();
        self.expand(&default_lookup, &keychain)
    }
}

/// Whether `url` can be an OTLP/HTTP base: parses, `http` or `https`, has a host.
fn check_endpoint(url: &str) -> Result<(), String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("is not a URL: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!(
            "scheme \"{}\" is not allowed (OTLP/HTTP: use http or https)",
            parsed.scheme()
        ));
    }
    if parsed.host().is_none() {
        return Err("has no host".to_owned());
    }
    Ok(())
}

/// Reads the `telemetry` value of the document; problems are pushed onto `warnings` and turn
/// export off.
pub(super) fn parse_telemetry(
    value: Option<&Value>,
    warnings: &mut Vec<String>,
) -> TelemetryConfig {
    let off = TelemetryConfig::default();
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return off;
    };
    let Some(object) = value.as_object() else {
        warnings.push(format!(
            "\"telemetry\" must be an object, found {}; export is off",
            json_type(value)
        ));
        return off;
    };
    let mut out = TelemetryConfig::default();
    let mut bad = false;
    for (key, v) in object {
        let mut complain = |what: &str| {
            warnings.push(format!(
                "\"telemetry.{key}\" must be {what}, found {}; export is off",
                json_type(v)
            ));
            bad = true;
        };
        match key.as_str() {
            "otlpEndpoint" => match v.as_str() {
                // References are checked for syntax now, the URL once they are expanded.
                Some(s) if super::expand::check_references(WHERE, key, s).is_ok() => {
                    out.endpoint = Some(s.to_owned());
                }
                _ => complain("an http(s) URL"),
            },
            "headers" => match v.as_object() {
                Some(h) if h.values().all(Value::is_string) => {
                    out.headers = h
                        .iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                        .collect();
                }
                _ => complain("an object of strings"),
            },
            "serviceName" => match v.as_str().filter(|s| !s.trim().is_empty()) {
                Some(s) => out.service_name = s.to_owned(),
                None => complain("a non-empty string"),
            },
            "exportIntervalSeconds" => {
                match v
                    .as_f64()
                    .filter(|s| s.is_finite() && (1.0..=3600.0).contains(s))
                {
                    Some(s) => out.interval = Duration::from_secs_f64(s),
                    None => complain("a number of seconds from 1 to 3600"),
                }
            }
            _ => warnings.push(format!(
                "unknown key \"telemetry.{key}\" is ignored (kept in the file)"
            )),
        }
    }
    if bad { off } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secret::MemoryStore;
    use serde_json::json;

    #[test]
    fn absent_or_null_telemetry_is_off_without_warnings() {
        let mut warnings = Vec::new();
        assert!(!parse_telemetry(None, &mut warnings).enabled());
        assert!(!parse_telemetry(Some(&Value::Null), &mut warnings).enabled());
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn a_bad_field_turns_export_off_and_says_which() {
        for (value, field) in [
            (json!({"otlpEndpoint": 5}), "telemetry.otlpEndpoint"),
            (
                json!({"otlpEndpoint": "http://c:4318", "headers": {"a": 1}}),
                "telemetry.headers",
            ),
            (
                json!({"otlpEndpoint": "http://c:4318", "exportIntervalSeconds": 0}),
                "telemetry.exportIntervalSeconds",
            ),
            (
                json!({"otlpEndpoint": "http://c/${"}),
                "telemetry.otlpEndpoint",
            ),
        ] {
            let mut warnings = Vec::new();
            let c = parse_telemetry(Some(&value), &mut warnings);
            assert!(!c.enabled(), "{value}");
            assert!(warnings.iter().any(|w| w.contains(field)), "{warnings:?}");
        }
    }

    #[test]
    fn headers_and_endpoint_expand_from_variables_and_the_keychain() {
        let mut warnings = Vec::new();
        let c = parse_telemetry(
            Some(&json!({
                "otlpEndpoint": "http://${OTEL_HOST}:4318",
                "headers": {"Authorization": "Bearer ${secret:otel.token}"},
                "exportIntervalSeconds": 2
            })),
            &mut warnings,
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        let secrets = MemoryStore::default();
        crate::secret::SecretStore::set(&secrets, "otel.token", "s3cr3t-tel").expect("set");
        let lookup = |k: &str| (k == "OTEL_HOST").then(|| "collector".to_owned());
        let x = c.expand(&lookup, &secrets).expect("expand");
        assert_eq!(x.endpoint.as_deref(), Some("http://collector:4318"));
        assert_eq!(x.headers["Authorization"], "Bearer s3cr3t-tel");
        assert_eq!(x.interval, Duration::from_secs(2));
        assert_eq!(
            crate::net::scrub("the token s3cr3t-tel"),
            "the token <redacted>"
        );
    }

    #[test]
    fn a_missing_secret_or_a_bad_scheme_is_an_error_without_values() {
        let c = TelemetryConfig {
            endpoint: Some("ftp://c/".to_owned()),
            ..TelemetryConfig::default()
        };
        let err = c
            .expand(&|_| None, &MemoryStore::default())
            .expect_err("ftp");
        assert!(err.to_string().contains("otlpEndpoint"), "{err}");
        let c = TelemetryConfig {
            endpoint: Some("http://c/".to_owned()),
            headers: BTreeMap::from([("X-Key".to_owned(), "${secret:nope}".to_owned())]),
            ..TelemetryConfig::default()
        };
        let err = c
            .expand(&|_| None, &MemoryStore::default())
            .expect_err("missing");
        assert!(err.to_string().contains("nope"), "{err}");
    }
}
