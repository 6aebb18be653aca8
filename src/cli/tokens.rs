//! `mcp-companion tools --tokens [--json]`: what each agent pays for its tool list — per view
//! (everything, each profile) and per server: tools, bytes of the `tools/list` result JSON,
//! and tokens of that JSON counted with OpenAI's `o200k_base` encoding (`tiktoken-rs`).
//!
//! Why that tokenizer: it is the one encoding of a current model family that is public and
//! exact (GPT-4o, GPT-4.1, o-series); Claude's and Gemini's are not public, and on JSON they
//! differ from it by some tens of percent, so the figure is an estimate for them. It adds its
//! 3.6 MB vocabulary to the `mcp-companion` binary (not to the desktop app, which does not
//! link the CLI).

use std::path::Path;
use std::process::ExitCode;

use mcp_companion::control::{self, ControlRequest, ControlResponse};
use mcp_companion::hub::Listing;
use serde::Serialize;

use super::out::{self, outln};

/// The encoding counted with.
pub const TOKENIZER: &str = "o200k_base";

/// One row of the report.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Cost {
    name: String,
    tools: usize,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    tool_search: bool,
    bytes: usize,
    tokens: usize,
}

#[derive(Debug, Serialize)]
struct Report {
    tokenizer: &'static str,
    views: Vec<Cost>,
    servers: Vec<Cost>,
}

/// Runs `tools --tokens`.
pub async fn tokens(socket: Option<&Path>, json: bool) -> anyhow::Result<ExitCode> {
    let paths = mcp_companion::ipc::record::locate(socket).await;
    let ControlResponse::Listings(listings) =
        control::request(&paths.control, &ControlRequest::Listings).await?
    else {
        anyhow::bail!("unexpected answer to listings");
    };
    let bpe = tiktoken_rs::o200k_base()
        .map_err(|e| anyhow::anyhow!("cannot load the {TOKENIZER} tokenizer: {e}"))?;
    let cost = |l: &Listing| Cost {
        name: l.name.clone(),
        tools: l.tools,
        tool_search: l.tool_search,
        bytes: l.json.len(),
        tokens: bpe.encode_ordinary(&l.json).len(),
    };
    let report = Report {
        tokenizer: TOKENIZER,
        views: listings.views.iter().map(cost).collect(),
        servers: listings.servers.iter().map(cost).collect(),
    };
    if json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    let width = report
        .views
        .iter()
        .chain(&report.servers)
        .map(|c| c.name.len() + 9)
        .max()
        .unwrap_or(0);
    outln!(
        "{:width$}  {:>6}  {:>9}  {:>9}",
        "tools/list of",
        "TOOLS",
        "BYTES",
        "TOKENS"
    );
    for (kind, rows) in [("view", &report.views), ("server", &report.servers)] {
        for c in rows {
            let label = format!("{kind} {}", c.name);
            let search = if c.tool_search { "  (tool search)" } else { "" };
            outln!(
                "{:width$}  {:>6}  {:>9}  {:>9}{search}",
                out::visible(&label),
                c.tools,
                c.bytes,
                c.tokens
            );
        }
    }
    outln!("Tokens: OpenAI {TOKENIZER}, an estimate for other models' tokenizers.");
    Ok(ExitCode::SUCCESS)
}
