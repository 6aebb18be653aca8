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

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use super::reload::{self, Plan, ReloadReport};
use super::{COALESCE, HubError, Servers, View};
use crate::catalog::{Catalog, Route};
use crate::config::{Config, ServerSpec, SsrfWhitelist};
use crate::supervisor::{self, Reporter, ServerHandle, ServerState};
use crate::upstream::elicitor::SharedElicitor;
use crate::upstream::notice::Notices;

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

/// A reload between its first and last message.
struct Reloading {
    config: Box<Config>,
    plan: Plan,
    reply: oneshot::Sender<ReloadReport>,
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

    fn server_command(
        &mut self,
        name: &str,
        op: ServerOp,
        reply: oneshot::Sender<Result<(), HubError>>,
    ) {
        let Some(server) = self.servers.by_name.get(name).cloned() else {
            let _ = reply.send(Err(crate::config::UnknownServer::new(name).into()));
            return;
        };
        let starts = !matches!(op, ServerOp::Stop);
        if starts && self.shutting_down {
            let _ = reply.send(Err(HubError::ShuttingDown));
            return;
        }
        if starts && server.config().is_none() {
            let _ = reply.send(Err(HubError::InvalidEntry {
                name: name.to_owned(),
                reason: server.snapshot().status.last_error.unwrap_or_default(),
            }));
            return;
        }
        let me = self.me.clone();
        tokio::spawn(async move {
            match op {
                ServerOp::Start => server.start().await,
                ServerOp::Stop => {
                    server.stop().await;
                    flush(&me).await;
                }
                ServerOp::Restart => server.restart().await,
            }
            let _ = reply.send(Ok(()));
        });
    }

    fn start_all(&mut self, reply: oneshot::Sender<()>) {
        if self.shutting_down {
            let _ = reply.send(());
            return;
        }
        let startable: Vec<ServerHandle> = self
            .servers
            .order
            .iter()
            .filter(|s| s.config().is_some())
            .filter(|s| {
                let state = s.snapshot().status.state;
                matches!(state, ServerState::Stopped | ServerState::Failed)
            })
            .cloned()
            .collect();
        tokio::spawn(async move {
            futures::future::join_all(startable.iter().map(ServerHandle::start)).await;
            let _ = reply.send(());
        });
    }

    fn stop_all(&mut self, reply: oneshot::Sender<()>) {
        let servers = self.servers.order.clone();
        let me = self.me.clone();
        tokio::spawn(async move {
            futures::future::join_all(servers.iter().map(ServerHandle::stop)).await;
            flush(&me).await;
            let _ = reply.send(());
        });
    }

    fn begin_reload(&mut self, config: Box<Config>, reply: oneshot::Sender<ReloadReport>) {
        let plan = reload::plan(&self.servers.order, &config);
        // Stop first, so a changed server never runs twice at once.
        let to_stop = plan.to_stop.clone();
        self.after(
            async move {
                futures::future::join_all(to_stop.iter().map(ServerHandle::stop)).await;
            },
            Msg::ReloadStopped,
        );
        // Calls for a changed server wait for its successor instead of failing while it stops.
        self.replacing = Arc::new(
            plan.report
                .changed
                .iter()
                .map(|name| Arc::from(name.as_str()))
                .collect(),
        );
        self.publish();
        self.reloading = Some(Reloading {
            config,
            plan,
            reply,
        });
    }

    fn reload_stopped(&mut self) {
        let Some(reloading) = self.reloading.take() else {
            return;
        };
        let config = &reloading.config;
        let mut fresh = Vec::new();
        let order: Vec<ServerHandle> = reloading
            .plan
            .keep
            .iter()
            .zip(&config.servers)
            .map(|(kept, spec)| match (kept, &spec.entry) {
                // Kept servers take the new entry: it differs at most in `roots`, `toolPolicy` and
                // `approvalTimeout`.
                (Some(old), Ok(cfg)) => old.with_entry(cfg),
                (Some(old), Err(_)) => old.clone(),
                (None, _) => {
                    let handle = self.spawn_server(spec, &config.ssrf_whitelist);
                    fresh.push(handle.clone());
                    handle
                }
            })
            .collect();
        // A new handle counts its session generations from 1 again: what the old one had
        // must not make its first session look folded into the catalog.
        for handle in &fresh {
            self.generations.remove(handle.name());
        }
        // Pins outlive edits of an entry (a new command, `disabled` and back, a timeout):
        // what the edited entry lists that differs from what was approved waits like any other
        // change, so an edit never approves anything by itself.
        self.servers = Arc::new(Servers::from_handles(order));
        self.warnings = config.warnings.clone().into();
        self.wrap_resources = config.wrap_resources;
        self.tool_search = config.tool_search.clone();
        self.profiles.set(&config.profiles);
        self.refused = None;
        self.replacing = Arc::default();
        self.forget_removed_routes();
        self.servers_epoch += 1;
        self.publish();
        let report = &reloading.plan.report;
        tracing::info!(
            added = report.added.len(),
            removed = report.removed.len(),
            changed = report.changed.len(),
            unchanged = report.unchanged.len(),
            "config reloaded"
        );
        self.reloading = Some(reloading);
        self.after(
            async move { wait_started(&fresh, reload::RELOAD_SETTLE).await },
            Msg::ReloadSettled,
        );
    }

    fn reload_settled(&mut self) {
        if self.reloading.is_none() {
            return;
        }
        // The reload's last rebuild still counts as during the reload: its change joins the
        // held-back one, so agents hear one `list_changed`, not one for it and one for the rest.
        self.rebuild();
        let Some(reloading) = self.reloading.take() else {
            return;
        };
        if std::mem::take(&mut self.held_back) {
            self.tools_epoch += 1;
        }
        self.profiles.announce();
        self.publish();
        let _ = reloading.reply.send(reloading.plan.report);
        if let Some((config, reply)) = self.queued.pop_front() {
            self.begin_reload(config, reply);
        }
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

/// Asks the owner behind `me` to rebuild now and waits until it did: a stop answers only once
/// the stopped servers' tools have left the published catalog (and `list_changed` went out).
async fn flush(me: &mpsc::WeakUnboundedSender<Msg>) {
    let Some(inbox) = me.upgrade() else { return };
    let (done, wait) = oneshot::channel();
    if inbox.send(Msg::Flush(done)).is_ok() {
        drop(inbox);
        let _ = wait.await;
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
