//! The owner's pinned tool definitions (`catalog::pin`): which tools of each server a person
//! approved, what waits for approval now, and the file they are kept in.
//!
//! **Default: trust on first use.** The first listing of a server that has no pins (a fresh
//! install, the first run of an existing entry, a newly added name) is pinned as it is. Pins
//! are kept by name across reloads: an edited entry (another command, `disabled` and back) is
//! compared with what was approved, so an edit approves nothing by itself. From then on a
//! changed or new tool of that server is withheld from every agent — from `tools/list` on both
//! paths and every profile, because the owner narrows each server's listing *before* the
//! default and profile catalogs are built from it — and a `tools/call` of it is refused
//! (`route.rs`) until the person approves it (`mcp-companion trust`, [`super::Hub::trust`]).
//! Rejected: asking at install (most servers are added by editing `config.json` or by an
//! import, where nobody is there to ask, and a server's tools are only known once it runs) and
//! pinning nothing until asked (every install would start with an empty catalog). A server
//! with `autoApproveChanges` is re-pinned on every listing, the behaviour before pinning.
//!
//! **Where.** `pins.json` in the companion's data directory (beside `activity.db`), written
//! with [`crate::io::atomic::write_atomic`] (0600, directory 0700). Not a table of the activity
//! database: that log is optional, trimmed by age and size, and a record of what happened, while
//! pins are a small piece of state that must exist whenever the companion runs and must never be
//! trimmed. The file is read once at start and written by the owner task only, when pins change
//! (a first listing, an approval, an auto-approved change): one owner, no lock.
//!
//! A file that cannot be read or parsed is reported in the log and set aside as
//! `pins.json.unreadable`. That fails closed: until the person approves them again (`trust`),
//! every capability of a server without pins waits for approval, instead of being pinned as
//! it is (a damaged file must not turn into approval of whatever servers list now).
//!
//! ```json
//! {"version": 1, "servers": {"demo": {"tools": {"echo": {"fingerprint": "…", "definition": {…}}}}}}
//! ```

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::catalog::ServerListing;
use crate::catalog::pin::{Kind, ServerPins, Waiting, pin_all, withhold};
use crate::io::atomic::{Backup, Mode, write_atomic};

/// The file name of the pins in the data directory.
pub const PINS_FILE: &str = "pins.json";

/// Tools withheld from agents, by server, in config order of discovery.
pub type WaitingByServer = BTreeMap<Arc<str>, Arc<[Waiting]>>;

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    version: u32,
    servers: BTreeMap<String, ServerPins>,
}

/// The upstream names of the tools of `server` pinned in the pins file at `path` (what it
/// listed when it last ran, as approved); `None` when the file or the server is not there, or
/// the file cannot be read. For `policy`'s check of a key: a reader beside the running owner,
/// which replaces the file whole (atomically).
pub fn pinned_tools(path: &std::path::Path, server: &str) -> Option<Vec<String>> {
    let bytes = std::fs::read(path).ok()?;
    let file = serde_json::from_slice::<File>(&bytes).ok()?;
    let pins = file.servers.get(server)?;
    Some(pins.tools.keys().cloned().collect())
}

/// The owner's pin state. Off (everything served, nothing stored) unless opened with a path.
#[derive(Debug, Default)]
pub(super) struct Pins {
    /// Where pins are kept; `None`: pinning is off.
    path: Option<PathBuf>,
    servers: BTreeMap<String, ServerPins>,
    /// What waits now, from the last rebuild.
    pub(super) waiting: Arc<WaitingByServer>,
    /// Pins changed since the last save.
    dirty: bool,
    /// The file existed but could not be read or parsed: servers without pins wait for
    /// approval instead of being pinned on first use.
    lost: bool,
}

impl Pins {
    /// Pinning off: every listing is served as it is.
    pub(super) fn off() -> Pins {
        Pins::default()
    }

    /// Pins kept in `path` (read now; see the module docs for a bad file).
    pub(super) fn open(path: PathBuf) -> Pins {
        let (servers, lost) = match std::fs::read(&path) {
            Ok(bytes) => match serde_json::from_slice::<File>(&bytes) {
                Ok(file) => (file.servers, false),
                Err(e) => {
                    let aside = path.with_extension("json.unreadable");
                    tracing::error!(
                        path = %path.display(),
                        "the pinned tool definitions cannot be parsed ({e}); set aside as {}; every server's tools wait for approval again (mcp-companion trust)",
                        aside.display()
                    );
                    let _ = std::fs::rename(&path, &aside);
                    (BTreeMap::new(), true)
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (BTreeMap::new(), false),
            Err(e) => {
                tracing::error!(path = %path.display(), "the pinned tool definitions cannot be read ({e}); every server's tools wait for approval (mcp-companion trust)");
                (BTreeMap::new(), true)
            }
        };
        Pins {
            path: Some(path),
            servers,
            lost,
            ..Pins::default()
        }
    }

    /// Whether pinning is on.
    pub(super) fn is_on(&self) -> bool {
        self.path.is_some()
    }

    /// What of `listing` agents may see; records what waits into `waiting`. Pins a server seen
    /// for the first time, and re-pins one with `auto_approve`.
    pub(super) fn narrow<'a>(
        &mut self,
        server: &Arc<str>,
        auto_approve: bool,
        listing: &'a ServerListing,
        waiting: &mut WaitingByServer,
    ) -> Cow<'a, ServerListing> {
        if !self.is_on() {
            return Cow::Borrowed(listing);
        }
        let none = ServerPins::default();
        let pins = match self.servers.get(&**server) {
            Some(pins) if !auto_approve => Some(pins),
            // Pins were lost: nothing is trusted on first use until approved again.
            None if self.lost && !auto_approve => Some(&none),
            _ => None,
        };
        let Some(pins) = pins else {
            let fresh = pin_all(listing);
            if self.servers.get(&**server) != Some(&fresh) {
                if !auto_approve {
                    tracing::info!(%server, tools = fresh.tools.len(), "tool definitions pinned (first listing)");
                }
                self.servers.insert(server.to_string(), fresh);
                self.dirty = true;
            }
            return Cow::Borrowed(listing);
        };
        let (narrowed, held) = withhold(listing, pins);
        if !held.is_empty() {
            waiting.insert(server.clone(), held.into());
        }
        narrowed.map_or(Cow::Borrowed(listing), Cow::Owned)
    }

    /// Publishes what the last [`Pins::narrow`] round found waiting, and saves changed pins.
    pub(super) fn finish(&mut self, waiting: WaitingByServer) {
        for (server, held) in &waiting {
            let before = self.waiting.get(server);
            if before.is_none_or(|b| b != held) {
                tracing::warn!(
                    %server,
                    tools = %held.iter().map(|w| w.tool.as_str()).collect::<Vec<_>>().join(", "),
                    "tool changes withheld until approved (mcp-companion trust {server})"
                );
            }
        }
        self.waiting = Arc::new(waiting);
        self.save();
    }

    /// Approves what waits of `server` (every server for `None`); returns what was approved.
    pub(super) fn approve(
        &mut self,
        server: Option<&str>,
        expect: Option<&[String]>,
    ) -> Vec<(String, Vec<Waiting>)> {
        let mut out = Vec::new();
        for (name, held) in self.waiting.iter() {
            if server.is_some_and(|s| s != &**name) {
                continue;
            }
            // Only what the person was shown: a definition that changed again since then
            // (another fingerprint) keeps waiting.
            let shown: Vec<Waiting> = held
                .iter()
                .filter(|w| expect.is_none_or(|e| e.contains(&w.listed.fingerprint)))
                .cloned()
                .collect();
            if shown.is_empty() {
                continue;
            }
            let pins = self.servers.entry(name.to_string()).or_default();
            for w in &shown {
                pins.of_mut(w.kind).insert(w.tool.clone(), w.listed.clone());
            }
            self.dirty = true;
            out.push((name.to_string(), shown));
        }
        self.save();
        out
    }

    fn save(&mut self) {
        let Some(path) = self.path.as_ref().filter(|_| self.dirty) else {
            return;
        };
        let file = File {
            version: 1,
            servers: self.servers.clone(),
        };
        let bytes = match serde_json::to_vec_pretty(&file) {
            Ok(b) => b,
            Err(e) => {
                tracing::error!("the pinned tool definitions cannot be encoded: {e}");
                return;
            }
        };
        match write_atomic(path, &bytes, Mode::Private, Backup::None) {
            Ok(()) => self.dirty = false,
            Err(e) => tracing::error!("the pinned tool definitions cannot be saved: {e}"),
        }
    }
}

impl super::View {
    /// The server of the withheld capability an agent of `profile` calls `name` as a tool, or
    /// (`kind` [`Kind::Prompt`]) asks for as a prompt (served as `<server>_<prompt>`, or raw in
    /// a profile). A tool is matched by the names it would
    /// have had: wrapped (`mcp_<server>_<tool>`, or `…_prompt_…`/`…_resource_…` for a wrapped
    /// prompt or resource), without `mcp_`, and raw.
    pub(super) fn withheld(
        &self,
        profile: Option<&str>,
        kind: Kind,
        name: &str,
    ) -> Option<Arc<str>> {
        use crate::catalog::naming::{CapabilityKind, base_name};
        self.waiting.iter().find_map(|(server, held)| {
            if !self.profile_has_server(profile, server) {
                return None;
            }
            held.iter()
                .filter(|w| self.profile_would_serve(profile, server, w))
                .any(|w| {
                    if kind == Kind::Prompt {
                        return w.kind == Kind::Prompt
                            && (w.tool == name
                                || crate::catalog::native::prompt_name(server, &w.tool) == name);
                    }
                    let (as_kind, raw) = match w.kind {
                        Kind::Tool => (CapabilityKind::Tool, w.tool.as_str()),
                        Kind::Prompt => (CapabilityKind::Prompt, w.tool.as_str()),
                        Kind::Resource => (
                            CapabilityKind::Resource,
                            w.listed.definition["name"].as_str().unwrap_or_default(),
                        ),
                        Kind::ResourceTemplate => (
                            CapabilityKind::ResourceTemplate,
                            w.listed.definition["name"].as_str().unwrap_or_default(),
                        ),
                    };
                    let wrapped = base_name(server, as_kind, raw);
                    name == wrapped
                        || wrapped.strip_prefix("mcp_") == Some(name)
                        || (w.kind == Kind::Tool && name == w.tool)
                })
                .then(|| server.clone())
        })
    }
}
