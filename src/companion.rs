//! One running companion: the single-instance lock, the hub, the MCP endpoint and the control
//! API, started and stopped together. `mcp-companion serve` and the desktop shell both run one
//! (each binary also starts the [`crate::process::reaper`] first: it re-executes the binary itself).
//!
//! Every agent and control session is a task on one [`TaskTracker`]; shutdown stops accepting,
//! tells the sessions (a cancellation token), stops the servers, and waits for the sessions to
//! be gone.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::activity::Activity;
use crate::config::{self, Config};
use crate::control::{self, ControlContext, ShowWindow, TelemetryStatus};
use crate::endpoint;
use crate::hub::Hub;
use crate::ipc::descriptors::{self, Caps};
use crate::ipc::paths::EndpointPaths;
use crate::ipc::socket::{LocalListener, SocketError};
use crate::upstream::elicitor::{self, SharedElicitor};

/// How long shutdown waits for every server to stop, in total.
pub const SHUTDOWN_BUDGET: Duration = Duration::from_secs(5);
/// How long shutdown waits for the listeners and the agent and control sessions to end once
/// told to (they end within milliseconds; the margin is for a machine under heavy load).
pub const SESSIONS_GRACE: Duration = Duration::from_secs(5);
/// How long shutdown waits for the activity log's queue to be written.
pub const ACTIVITY_FLUSH: Duration = Duration::from_secs(3);
/// How much longer it waits, once the log is written, for the OpenTelemetry export to send
/// the last of it: a collector that hangs must not hold the stop up.
pub const TELEMETRY_GRACE: Duration = Duration::from_secs(1);

/// Why a companion could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Another companion of this user already runs (one serves each user).
    #[error("another companion is already running{} (socket {socket}); one companion serves each user: use that one, or stop it first (`mcp-companion status` shows it)", pid.map(|p| format!(" (pid {p})")).unwrap_or_default())]
    AlreadyRunning {
        /// Its pid, when its control API answered.
        pid: Option<u32>,
        /// The socket it serves.
        socket: String,
    },
    /// The lock file could not be created.
    #[error("cannot create lock file {path}: {reason}")]
    Lock {
        /// The lock file.
        path: String,
        /// What the OS said.
        reason: String,
    },
    /// A socket could not be set up.
    #[error(transparent)]
    Socket(#[from] SocketError),
}

/// A running companion. Dropping it without [`Companion::shutdown`] still kills every child
/// (their handles kill on drop), but shutdown is the orderly way.
#[derive(Debug)]
pub struct Companion {
    hub: Hub,
    paths: EndpointPaths,
    config_path: Option<PathBuf>,
    show_window: ShowWindow,
    stop: CancellationToken,
    /// The accept loops and the config watcher.
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// Every agent and control session.
    sessions: TaskTracker,
    /// The socket lock and the per-user lock, held while the companion runs.
    _locks: Vec<File>,
}

impl Companion {
    /// Takes the per-user lock, binds both sockets and starts every server of `config`.
    /// `config_path` is what the control API's `reload` re-reads.
    ///
    /// # Errors
    /// [`StartError::AlreadyRunning`] when another instance holds the lock.
    pub async fn start(
        config: &Config,
        paths: EndpointPaths,
        config_path: Option<PathBuf>,
    ) -> Result<Companion, StartError> {
        Companion::start_with(config, paths, config_path, elicitor::headless()).await
    }

    /// Like [`Companion::start`], asking `elicitor` when a server's `elicitation/create` has no
    /// calling agent able to answer it (the desktop app passes its window's).
    ///
    /// # Errors
    /// [`StartError::AlreadyRunning`] when another instance holds the lock.
    pub async fn start_with(
        config: &Config,
        paths: EndpointPaths,
        config_path: Option<PathBuf>,
        elicitor: SharedElicitor,
    ) -> Result<Companion, StartError> {
        let lock = take_lock(&paths).await?;
        let caps = Caps::from_limit(
            descriptors::raise_to_hard(),
            endpoint::limits::MAX_AGENT_CONNECTIONS,
            control::MAX_CONTROL_CONNECTIONS,
        );
        let mcp = LocalListener::bind(&paths.mcp, paths.socket_dir)?;
        let ctl = LocalListener::bind(&paths.control, paths.socket_dir)?;
        if paths.per_user
            && let Err(e) = crate::ipc::record::publish(&paths)
        {
            tracing::warn!(error = %e, "cannot record the socket path: bridges with another XDG_RUNTIME_DIR will not find this companion");
        }
        let pins = dirs::data_dir().map(|d| d.join("mcp-companion").join(crate::hub::PINS_FILE));
        let (activity, telemetry) = open_activity(config).await;
        let hub = Hub::start_pinned(config, elicitor, pins).with_activity(activity);
        let stop = CancellationToken::new();
        let show_window = ShowWindow::default();
        let ctx = ControlContext {
            hub: hub.clone(),
            mcp_socket: paths.mcp.clone(),
            config_path: config_path.clone(),
            show_window: show_window.clone(),
            telemetry,
        };
        let sessions = TaskTracker::new();
        let tasks = vec![
            tokio::spawn(endpoint::serve(
                mcp,
                hub.clone(),
                sessions.clone(),
                stop.clone(),
                endpoint::FirstListPolicy::of(config),
                caps.agents,
            )),
            tokio::spawn(endpoint::serve_profiles(
                endpoint::ProfileSockets {
                    mcp: paths.mcp.clone(),
                    socket_dir: paths.socket_dir,
                    first_list: endpoint::FirstListPolicy::of(config),
                    max_connections: caps.agents,
                },
                hub.clone(),
                sessions.clone(),
                stop.clone(),
            )),
            tokio::spawn(control::serve(
                ctl,
                ctx,
                sessions.clone(),
                stop.clone(),
                caps.control,
            )),
        ];
        Ok(Companion {
            hub,
            paths,
            config_path,
            show_window,
            stop,
            tasks,
            sessions,
            _locks: lock,
        })
    }

    /// Reloads the config whenever its file changes (checked every `interval`): a file that
    /// fails to load is logged and ignored, leaving the running servers untouched, and says so
    /// first among the config warnings (`status`, the window) until a good version loads.
    pub fn watch_config(&mut self, interval: Duration) {
        let Some(path) = self.config_path.clone() else {
            return;
        };
        let hub = self.hub.clone();
        let stop = self.stop.clone();
        // Taken before returning, so an edit made right after this call is seen as a change.
        let mut last = fingerprint(&path);
        self.tasks.push(tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = tokio::time::sleep(interval) => {}
                    () = stop.cancelled() => return,
                }
                let now = fingerprint(&path);
                if now == last {
                    continue;
                }
                last = now;
                match config::load(&path) {
                    Ok(cfg) => {
                        // The hub logs what the reload changed ("config reloaded").
                        tracing::info!("config file changed: reloading");
                        hub.reload(&cfg).await;
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "config file changed but does not load; running servers untouched");
                        hub.config_refused(format!(
                            "the config file changed but cannot be used, so the previous version still runs: {e}"
                        ));
                    }
                }
            }
        }));
    }

    /// The hub, for callers in the same process (the desktop shell).
    pub fn hub(&self) -> &Hub {
        &self.hub
    }

    /// Makes the control API's `show` run `f` (the desktop shell shows its window), so a second
    /// launch that cannot reach this one over D-Bus can still bring it up.
    pub fn on_show_window(&self, f: impl Fn() + Send + Sync + 'static) {
        self.show_window.set(f);
    }

    /// The socket paths served.
    pub fn paths(&self) -> &EndpointPaths {
        &self.paths
    }

    /// Closes the sockets, ends agent and control sessions, and stops every server in parallel
    /// within [`SHUTDOWN_BUDGET`]; returns once the listeners and sessions are gone too (at
    /// most [`SESSIONS_GRACE`] more).
    pub async fn shutdown(self) {
        if self.paths.per_user {
            crate::ipc::record::withdraw(&self.paths);
        }
        let activity = self.hub.activity().clone();
        self.stop.cancel();
        self.sessions.close();
        if tokio::time::timeout(SHUTDOWN_BUDGET, self.hub.shutdown())
            .await
            .is_err()
        {
            tracing::warn!(
                "servers did not stop within {} s",
                SHUTDOWN_BUDGET.as_secs()
            );
        }
        // Each listener task drops its listener (removing its socket file, and resetting
        // connections it never accepted) as soon as it sees `stop`; then the sessions end.
        let sessions = self.sessions.clone();
        let tasks = self.tasks;
        let ended = async move {
            for task in tasks {
                let _ = task.await;
            }
            sessions.wait().await;
        };
        if tokio::time::timeout(SESSIONS_GRACE, ended).await.is_err() {
            tracing::warn!(
                sessions = self.sessions.len(),
                "sessions did not end within {} s",
                SESSIONS_GRACE.as_secs()
            );
        }
        // The last calls' entries, written before the process ends.
        let flushed = tokio::task::spawn_blocking(move || {
            activity.flush_at_exit(ACTIVITY_FLUSH, TELEMETRY_GRACE)
        })
        .await;
        if !matches!(flushed, Ok(true)) {
            tracing::warn!("the activity log's last entries may not have been written");
        }
    }
}

/// The activity log `config` asks for, feeding the OpenTelemetry export when `telemetry` names
/// an endpoint, and how that export was set up (for `status`); when either cannot start the
/// companion runs without it (logged, and for the export said by `status`): a record is never
/// a reason not to serve.
async fn open_activity(config: &Config) -> (Activity, Option<TelemetryStatus>) {
    let (exporter, telemetry) = match open_telemetry(config).await {
        Ok(exporter) => (exporter, None),
        Err(why) => (None, Some(why)),
    };
    let mut telemetry = config
        .telemetry
        .endpoint
        .as_deref()
        .map(|endpoint| TelemetryStatus {
            endpoint: crate::net::redact(endpoint),
            error: telemetry.map(|why| crate::net::scrub(&why)),
        });
    let sink = exporter.map(|e| Box::new(e) as Box<dyn crate::activity::Sink>);
    let activity = match Activity::open(&config.activity, sink) {
        Ok(activity) => {
            if let Some(path) = activity.path() {
                tracing::info!(path = %path.display(), "activity log");
            }
            activity
        }
        Err(e) => {
            tracing::error!(error = %e, "the activity log cannot be opened; calls are not recorded");
            // The export is fed by the log's writer: without it nothing is exported.
            if let Some(t) = telemetry.as_mut().filter(|t| t.error.is_none()) {
                t.error = Some(format!(
                    "the activity log that feeds it cannot be opened: {}",
                    crate::net::scrub(&e.to_string())
                ));
            }
            Activity::off()
        }
    };
    (activity, telemetry)
}

/// The OpenTelemetry export `config` asks for (its references expanded off the runtime's
/// workers: the keychain may be slow): `Ok(None)` when it asks for none, `Err` with why it
/// cannot start (logged).
async fn open_telemetry(config: &Config) -> Result<Option<crate::telemetry::Exporter>, String> {
    if !config.telemetry.enabled() {
        return Ok(None);
    }
    let raw = config.telemetry.clone();
    let expanded = tokio::task::spawn_blocking(move || raw.expand_from_env()).await;
    let settings = match expanded {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            tracing::error!(error = %e, "telemetry is off");
            return Err(e.to_string());
        }
        Err(e) => {
            tracing::error!(error = %e, "telemetry is off: expanding its settings stopped");
            return Err(format!("expanding its settings stopped: {e}"));
        }
    };
    let runtime = tokio::runtime::Handle::current();
    crate::telemetry::Exporter::start(&settings, &config.ssrf_whitelist.nets, runtime).map_err(
        |e| {
            tracing::error!(error = %e, "telemetry is off");
            e.to_string()
        },
    )
}

/// Takes the lock of these sockets, then the per-user lock: one companion serves each user, so
/// a second one (on other sockets too) is refused before it touches the first one's sockets or
/// its record ([`crate::ipc::record`]), which `bridge` relies on.
async fn take_lock(paths: &EndpointPaths) -> Result<Vec<File>, StartError> {
    #[cfg(unix)]
    if let Some(dir) = paths.lock.parent() {
        // Nothing is created or chmod-ed in a directory that is a link or not ours.
        crate::ipc::socket::prepare_socket_dir(dir, paths.socket_dir)?;
    }
    let Some(first) = lock_file(&paths.lock).await? else {
        return Err(already(paths).await);
    };
    let mut held = vec![first];
    if !paths.per_user {
        return Ok(held);
    }
    held.push(match crate::ipc::record::user_lock_path() {
        Some(user) => match lock_file(&user).await? {
            Some(file) => file,
            None => return Err(already_for_user(paths).await),
        },
        None => return Ok(held),
    });
    Ok(held)
}

/// The lock at `path`, or `None` when another process holds it.
async fn lock_file(path: &Path) -> Result<Option<File>, StartError> {
    let lock_error = |e: std::io::Error| StartError::Lock {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    let mut options = std::fs::OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    }
    let file = options.open(path).map_err(lock_error)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(lock_error(e)),
    }
}

/// Another companion serves `paths`.
async fn already(paths: &EndpointPaths) -> StartError {
    StartError::AlreadyRunning {
        pid: control::status(&paths.control).await.ok().map(|r| r.pid),
        socket: paths.mcp.display().to_string(),
    }
}

/// Another companion of this user runs (on other sockets): named from its record.
async fn already_for_user(paths: &EndpointPaths) -> StartError {
    match crate::ipc::record::read() {
        Some(record) => StartError::AlreadyRunning {
            pid: Some(record.pid),
            socket: record.mcp.display().to_string(),
        },
        None => {
            let pid = control::status(&paths.control).await.ok().map(|r| r.pid);
            StartError::AlreadyRunning {
                pid,
                socket: "unknown".to_owned(),
            }
        }
    }
}

/// What identifies a version of the config file: modification time and length.
fn fingerprint(path: &Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}
