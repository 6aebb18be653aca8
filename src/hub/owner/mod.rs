//! The owner task: the one place the hub's state lives and changes (STYLE §3, the mini-redis
//! shape). It handles its inbox one message at a time, so "is a reload running?", "was an
//! announcement held back?" and "which generation did this server have?" are plain fields read
//! and written by one task — there is nothing to interleave.
//!
//! Slow work (stopping servers, waiting for new ones to start) runs in helper tasks that report
//! back through the inbox, so the owner keeps handling reports and commands meanwhile.
//!
//! ```text
//! Reload ──▶ plan; helper stops changed/removed ──ReloadStopped──▶ spawn new servers, publish set
//!        ──▶ helper waits for them to leave `starting` ──ReloadSettled──▶ rebuild, release the
//!            held-back list_changed, answer, start the next queued reload
//! ```

mod commands;
mod reloading;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use super::reload::ReloadReport;
use super::{COALESCE, HubError, Servers, View};
use crate::catalog::{Catalog, Route};
use crate::config::{Config, ServerSpec, SsrfWhitelist};
use crate::supervisor::{self, Reporter, ServerHandle, ServerState};

use crate::upstream::elicitor::SharedElicitor;
use crate::upstream::notice::Notices;
use reloading::Reloading;

/// What a handle (or a helper task, or a supervisor) tells the owner.
pub(super) enum Msg {
    /// A supervisor's snapshot changed.
    ServerChanged,
    /// Apply a new config; answer with what changed.
    Reload {
        config: Box<Config>,
        reply: oneshot::Sender<ReloadReport>,
    },
    /// Start, stop or restart one server; answer once done (see [`ServerOp`]).
    Server {
        name: String,
        op: ServerOp,
        reply: oneshot::Sender<Result<(), HubError>>,
    },
    /// Start every startable server; answer once every start began.
    StartAll(oneshot::Sender<()>),
    /// Stop every server; answer once their processes are gone.
    StopAll(oneshot::Sender<()>),
    /// Rebuild the catalog from the servers' current snapshots now; answer when published.
    Flush(oneshot::Sender<()>),
    /// Stop every server and refuse further starts and reloads.
    Shutdown(oneshot::Sender<()>),
    /// Helper → owner: the servers the current reload replaces are stopped.
    ReloadStopped,
    /// Helper → owner: the current reload's new servers left `starting` (or timed out).
    ReloadSettled,
    /// The config file changed but cannot be used (a sentence saying why); shown with the
    /// warnings until a reload applies a config.
    FileRefused(String),
    /// Approve the tools that wait for approval, of one server or all; answer with what was
    /// approved once the rebuilt catalog is published.
    Trust {
        server: Option<String>,
        /// With `Some`, only the waiting definitions with these fingerprints (what the person
        /// was shown).
        expect: Option<Vec<String>>,
        reply: oneshot::Sender<Result<super::Approved, HubError>>,
    },
}

/// A command on one server.
#[derive(Clone, Copy, Debug)]
pub(super) enum ServerOp {
    Start,
    Stop,
    Restart,
}

pub(super) struct Owner {
    publish: watch::Sender<Arc<View>>,
    /// The inbox, weakly: helpers and supervisors report through it without keeping the hub
    /// alive once every handle is gone.
    me: mpsc::WeakUnboundedSender<Msg>,
    pub(super) servers: Arc<Servers>,
    pub(super) catalog: Arc<Catalog>,
    /// See [`View`]: routes of servers in the config whose tools are out of the catalog.
    pub(super) known: Arc<HashMap<String, Route>>,
    /// See [`View`]: the changed servers of the running reload, until their successors exist.
    replacing: Arc<HashSet<Arc<str>>>,
    /// The [`supervisor::Live::generation`] each running server had at the last rebuild.
    pub(super) generations: HashMap<Arc<str>, u64>,
    /// The warnings of the config in effect ([`Config::warnings`]).
    warnings: Arc<[String]>,
    /// Why the config file, changed since, is not in effect ([`Msg::FileRefused`]).
    refused: Option<String>,
    tools_epoch: u64,
    servers_epoch: u64,
    /// Reports arrived since the last rebuild.
    dirty: bool,
    last_rebuild: Option<Instant>,
    reloading: Option<Reloading>,
    queued: VecDeque<(Box<Config>, oneshot::Sender<ReloadReport>)>,
    /// A tool-list change happened during the reload; announce it when the reload is done.
    held_back: bool,
    shutting_down: bool,
    /// Who answers `elicitation/create` when no calling agent can; every server's sessions use it.
    elicitor: SharedElicitor,
    /// Where every server's resource updates and log messages go for agents.
    notices: Notices,
    /// The config's `wrapResources`: resources, templates and prompts served as tools too.
    pub(super) wrap_resources: bool,
    /// The config's `toolSearch` and `alwaysList` for the default view.
    pub(super) tool_search: crate::config::ToolSearchConfig,
    /// The config's profiles and their catalogs (`profiles/`).
    pub(super) profiles: super::profiles::Profiles,
    /// Pinned tool definitions and what waits for approval (`pins.rs`).
    pub(super) pins: super::pins::Pins,
}

/// Starts the owner of `config`'s servers; returns its inbox and its published view.
pub(super) fn spawn(
    config: &Config,
    elicitor: SharedElicitor,
    notices: Notices,
    pins: super::pins::Pins,
) -> (mpsc::UnboundedSender<Msg>, watch::Receiver<Arc<View>>) {
    let (inbox, rx) = mpsc::unbounded_channel();
    let (publish, view) = watch::channel(Arc::new(View::default()));
    let mut owner = Owner {
        publish,
        me: inbox.downgrade(),
        servers: Arc::default(),
        catalog: Arc::default(),
        known: Arc::default(),
        replacing: Arc::default(),
        generations: HashMap::new(),
        warnings: config.warnings.clone().into(),
        refused: None,
        tools_epoch: 0,
        servers_epoch: 0,
        dirty: false,
        last_rebuild: None,
        reloading: None,
        queued: VecDeque::new(),
        held_back: false,
        shutting_down: false,
        elicitor,
        notices,
        wrap_resources: config.wrap_resources,
        tool_search: config.tool_search.clone(),
        profiles: super::profiles::Profiles::new(&config.profiles),
        pins,
    };
    let order = config
        .servers
        .iter()
        .map(|spec| owner.spawn_server(spec, &config.ssrf_whitelist))
        .collect();
    owner.servers = Arc::new(Servers::from_handles(order));
    owner.publish();
    tokio::spawn(owner.run(rx));
    (inbox, view)
}

impl Owner {
    async fn run(mut self, mut inbox: mpsc::UnboundedReceiver<Msg>) {
        loop {
            let due = self.rebuild_due();
            tokio::select! {
                msg = inbox.recv() => match msg {
                    Some(msg) => self.handle(msg),
                    // Every handle is gone: dropping the server set stops the supervisors.
                    None => return,
                },
                () = sleep_until(due), if due.is_some() => self.rebuild(),
            }
        }
    }

    fn handle(&mut self, msg: Msg) {
        match msg {
            Msg::ServerChanged => self.dirty = true,
            Msg::Reload { config, reply } => {
                if self.shutting_down {
                    tracing::info!("reload ignored: shutting down");
                    let _ = reply.send(ReloadReport::default());
                } else if self.reloading.is_some() {
                    self.queued.push_back((config, reply));
                } else {
                    self.begin_reload(config, reply);
                }
            }
            Msg::Server { name, op, reply } => self.server_command(&name, op, reply),
            Msg::StartAll(reply) => self.start_all(reply),
            Msg::StopAll(reply) => self.stop_all(reply),
            Msg::Flush(reply) => {
                self.rebuild();
                let _ = reply.send(());
            }
            Msg::Shutdown(reply) => {
                self.shutting_down = true;
                for (_, reply) in self.queued.drain(..) {
                    let _ = reply.send(ReloadReport::default());
                }
                self.stop_all(reply);
            }
            Msg::ReloadStopped => self.reload_stopped(),
            Msg::ReloadSettled => self.reload_settled(),
            Msg::FileRefused(why) => {
                self.refused = Some(why);
                self.publish();
            }
            Msg::Trust {
                server,
                expect,
                reply,
            } => {
                if let Some(name) = server.as_deref()
                    && !self.servers.by_name.contains_key(name)
                {
                    let _ = reply.send(Err(HubError::UnknownServer(
                        crate::config::UnknownServer::new(name),
                    )));
                    return;
                }
                let approved = self.pins.approve(server.as_deref(), expect.as_deref());
                if !approved.is_empty() {
                    self.rebuild();
                }
                let _ = reply.send(Ok(approved));
            }
        }
    }

    /// Starts the supervisor of `spec`; it reports its changes into the inbox.
    fn spawn_server(&self, spec: &ServerSpec, whitelist: &SsrfWhitelist) -> ServerHandle {
        let me = self.me.clone();
        let report: Reporter = Arc::new(move |_name: &Arc<str>| {
            if let Some(inbox) = me.upgrade() {
                let _ = inbox.send(Msg::ServerChanged);
            }
        });
        let connect =
            supervisor::upstream_connect_with(self.elicitor.clone(), self.notices.clone());
        supervisor::spawn_with(spec, whitelist, report, connect)
    }

    /// Runs `work` in a helper task and posts `then` to the inbox when it is done.
    fn after(&self, work: impl Future<Output = ()> + Send + 'static, then: Msg) {
        let me = self.me.clone();
        tokio::spawn(async move {
            work.await;
            if let Some(inbox) = me.upgrade() {
                let _ = inbox.send(then);
            }
        });
    }

    /// When the next coalesced rebuild is due: `None` with nothing to fold in.
    fn rebuild_due(&self) -> Option<Instant> {
        if !self.dirty {
            return None;
        }
        Some(match self.last_rebuild {
            Some(at) => at + COALESCE,
            None => Instant::now(),
        })
    }

    /// Rebuilds the catalog from the servers' snapshots and publishes it; a changed tool list
    /// is announced, or held back while a reload runs.
    pub(super) fn rebuild(&mut self) {
        self.dirty = false;
        self.last_rebuild = Some(Instant::now());
        let announce = self.rebuild_catalog();
        self.servers_epoch += 1;
        if announce {
            if self.reloading.is_some() {
                self.held_back = true;
            } else {
                self.tools_epoch += 1;
            }
        }
        if self.reloading.is_none() {
            self.profiles.announce();
        }
        self.publish();
    }

    fn publish(&self) {
        self.publish.send_replace(Arc::new(View {
            servers: self.servers.clone(),
            catalog: self.catalog.clone(),
            known: self.known.clone(),
            replacing: self.replacing.clone(),
            generations: Arc::new(self.generations.clone()),
            warnings: match &self.refused {
                None => self.warnings.clone(),
                Some(why) => std::iter::once(why.clone())
                    .chain(self.warnings.iter().cloned())
                    .collect(),
            },
            tools_epoch: self.tools_epoch,
            servers_epoch: self.servers_epoch,
            profiles: self.profiles.views.clone(),
            profile_order: self.profiles.order.clone(),
            waiting: self.pins.waiting.clone(),
        }));
    }
}

async fn sleep_until(due: Option<Instant>) {
    match due {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Waits until none of `servers` is `starting`, at most `timeout` in total.
pub(super) async fn wait_started(servers: &[ServerHandle], timeout: Duration) {
    let deadline = Instant::now() + timeout;
    for server in servers {
        let mut watch = server.watch();
        let _ = tokio::time::timeout_at(
            deadline,
            watch.wait_for(|s| s.status.state != ServerState::Starting),
        )
        .await;
    }
}
