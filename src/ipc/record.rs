//! Where a running companion says it listens.
//!
//! The problem: [`super::paths`] derives the socket from `XDG_RUNTIME_DIR`, but MCP clients
//! (the Inspector, both SDKs) spawn `bridge` with a minimal environment, so a companion started
//! with a non-default `XDG_RUNTIME_DIR` is invisible to them. The fix: every companion writes
//! its endpoint paths to a per-user file at a fixed place that depends only on the home
//! directory, [`record_path`] (`~/.local/state/mcp-companion/endpoint.json`; `XDG_STATE_HOME`
//! is deliberately ignored, since the caller may not have it), and removes it on shutdown when
//! it still names its own paths. Clients try the paths of the usual rule first, then the
//! record, and an error lists every place they looked ([`candidates`]).
//!
//! The file is `{"pid": 1234, "mcp": "/…/mcp.sock", "control": "/…/control.sock"}`, mode 0600
//! in a 0700 directory. It is only a hint: a stale record names a socket nothing listens on,
//! and connecting to it fails like any other candidate.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::paths::EndpointPaths;
use crate::io::atomic::{Backup, Mode, write_atomic};

/// What a companion records about itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// The companion's process id.
    pub pid: u32,
    /// Its MCP socket (or pipe name).
    pub mcp: PathBuf,
    /// Its control socket (or pipe name).
    pub control: PathBuf,
}

/// `~/.local/state/mcp-companion/endpoint.json`, from the home directory alone (`HOME`, else
/// the user database); `None` when there is no home directory.
pub fn record_path() -> Option<PathBuf> {
    Some(
        dirs::home_dir()?
            .join(".local")
            .join("state")
            .join("mcp-companion")
            .join("endpoint.json"),
    )
}

/// The per-user lock beside the record (`companion.lock`): a running companion holds it, so a
/// second one, on any sockets, is refused before it replaces this record.
pub fn user_lock_path() -> Option<PathBuf> {
    let path = record_path()?.with_file_name("companion.lock");
    if let Some(dir) = path.parent()
        && !dir.is_dir()
    {
        // Private like the record's directory; an error shows when the lock is opened.
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        let _ = builder.create(dir);
    }
    Some(path)
}

/// Writes the record for `paths` atomically ([`write_atomic`]: private, no backup).
///
/// # Errors
/// The I/O error of creating the directory or writing the file.
pub fn publish(paths: &EndpointPaths) -> io::Result<()> {
    let Some(file) = record_path() else {
        return Ok(());
    };
    let record = Record {
        pid: std::process::id(),
        mcp: absolute(&paths.mcp),
        control: absolute(&paths.control),
    };
    let body = serde_json::to_vec(&record).map_err(io::Error::other)?;
    write_atomic(&file, &body, Mode::Private, Backup::None)
        .map_err(|e| io::Error::new(e.source.kind(), e.to_string()))
}

/// Removes the record if it still names `paths` (a newer companion may have replaced it).
pub fn withdraw(paths: &EndpointPaths) {
    let (Some(file), Some(current)) = (record_path(), read()) else {
        return;
    };
    if current.mcp == absolute(&paths.mcp) && current.pid == std::process::id() {
        let _ = std::fs::remove_file(file);
    }
}

/// The record, if there is a readable one.
pub fn read() -> Option<Record> {
    let bytes = std::fs::read(record_path()?).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Where a client should look for the companion, in order: `explicit` alone when given, else
/// the usual rule ([`EndpointPaths::resolve`]) followed by the record when it names other
/// paths.
pub fn candidates(explicit: Option<&Path>) -> Vec<EndpointPaths> {
    let first = EndpointPaths::resolve(explicit);
    if explicit.is_some() {
        return vec![first];
    }
    let mut out = vec![first];
    if let Some(rec) = read()
        && out.iter().all(|p| absolute(&p.mcp) != rec.mcp)
    {
        let mut recorded = EndpointPaths::beside(rec.mcp);
        recorded.control = rec.control;
        out.push(recorded);
    }
    out
}

/// The endpoint a one-shot client (`status`, `tools`, `call`, `stop`…) should use: `explicit`
/// when given; else the first of [`candidates`] whose control endpoint accepts a connection
/// (probed only when the record adds a place), or the usual rule's paths when none does, so
/// the client's own "nothing listens" error names the usual place.
pub async fn locate(explicit: Option<&Path>) -> EndpointPaths {
    let mut all = candidates(explicit);
    let mut pick = 0;
    if all.len() > 1 {
        for (i, paths) in all.iter().enumerate() {
            if super::socket::connect(&paths.control).await.is_ok() {
                pick = i;
                break;
            }
        }
    }
    all.swap_remove(pick)
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}
