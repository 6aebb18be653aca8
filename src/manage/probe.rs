//! "Test" in the add-server form: connect to an entry once, list its tools, disconnect.
//!
//! The report shows what an agent will get once the entry is saved, counted the same way as
//! the server's page: every tool, resource, resource template and prompt wrapped as a tool
//! through the same [`Catalog`] (names, `enabledTools`), so "Test" and the saved server show
//! the same number.
//!
//! The probe uses the same validation and connect path as the supervisor (`config` parsing,
//! `${VAR}` expansion, `upstream::connect` with its `connectTimeout`), so a passing test means
//! the saved entry will start; nothing is registered with the hub and nothing is left running.

use serde::Serialize;
use serde_json::Value;

use crate::catalog::{Catalog, CatalogInput};
use crate::config::{self, ConfigError};
use crate::manage::edit::{self, EditError};
use crate::upstream::ask::AskContext;
use crate::upstream::roots::EntryRoots;
use crate::upstream::{self, ConnectError, handler::ProgressRoutes, stderr::LogRing};

/// One tool an agent will get from the probed server.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProbeTool {
    /// The wrapped name (`mcp_<server>_<name>`), what agents call.
    pub name: String,
    /// Its description, if any.
    pub description: Option<String>,
}

/// What a successful probe saw.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProbeReport {
    /// The wrapped tools in catalog order: tools, then resources, resource templates and
    /// prompts, after `enabledTools`.
    pub tools: Vec<ProbeTool>,
    /// The last stderr lines the server wrote.
    pub stderr: Vec<String>,
}

/// Why a probe failed.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The entry does not validate.
    #[error(transparent)]
    Invalid(#[from] EditError),
    /// A `${VAR}` is missing or malformed.
    #[error(transparent)]
    Expand(ConfigError),
    /// Connecting, the handshake or the listing failed.
    #[error(transparent)]
    Connect(#[from] ConnectError),
}

/// Connects to `entry` (as server `name`) once and reports what it lists. Remote entries go
/// through the SSRF guard with `whitelist` (the config's `ssrfWhitelist`).
///
/// # Errors
/// [`ProbeError`]; a connect error carries the server's last stderr lines.
pub async fn probe(
    name: &str,
    entry: &Value,
    whitelist: &config::SsrfWhitelist,
) -> Result<ProbeReport, ProbeError> {
    edit::validate_entry(name, entry)?;
    let doc = serde_json::json!({ "mcpServers": { name: entry } });
    let cfg = config::parse(&doc.to_string(), std::path::Path::new("probe"))
        .map_err(|e| ProbeError::Invalid(EditError::Invalid(e)))?;
    let spec = cfg
        .servers
        .into_iter()
        .next()
        .and_then(|s| s.entry.ok())
        .ok_or_else(|| {
            ProbeError::Invalid(EditError::UnknownServer(crate::config::UnknownServer::new(
                name,
            )))
        })?;
    let expanded = config::expand_for_start(std::sync::Arc::new(spec))
        .await
        .map_err(ProbeError::Expand)?;
    let log = LogRing::new();
    let session = upstream::connect(
        &expanded,
        &log,
        ProgressRoutes::default(),
        AskContext::new(
            &expanded.name,
            Default::default(),
            EntryRoots::new(&expanded.roots),
            expanded.tool_timeout,
        ),
        whitelist,
        &crate::upstream::era::Remembered::default(),
    )
    .await?;
    let catalog = Catalog::build(&[CatalogInput {
        server: name,
        enabled_tools: &expanded.enabled_tools,
        listing: session.listing(),
    }]);
    let report = ProbeReport {
        tools: catalog
            .tools()
            .iter()
            .map(|t| ProbeTool {
                name: t.name.to_string(),
                description: t.description.as_ref().map(ToString::to_string),
            })
            .collect(),
        stderr: log.tail(20),
    };
    session.shutdown().await;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[tokio::test]
    async fn probing_a_bad_entry_or_a_missing_command_fails_with_a_reason() {
        let none = config::SsrfWhitelist::default();
        let invalid = probe("x", &json!({"args": []}), &none).await.unwrap_err();
        assert!(matches!(invalid, ProbeError::Invalid(_)), "{invalid}");
        let missing = probe("x", &json!({"command": "/nonexistent/mcp-server"}), &none)
            .await
            .unwrap_err();
        assert!(matches!(missing, ProbeError::Connect(_)), "{missing}");
        assert!(missing.to_string().contains("nonexistent"), "{missing}");
        // Remote entries go through the SSRF guard: a private address is refused, never dialled.
        let private = probe("x", &json!({"url": "http://10.1.2.3/mcp"}), &none)
            .await
            .unwrap_err();
        assert!(private.to_string().contains("10.1.2.3"), "{private}");
    }
}
