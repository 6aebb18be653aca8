//! What the shell keeps in Tauri's managed state, and the typed accessor commands use.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use mcp_companion::companion::Companion;
use mcp_companion::hub::Hub;
use mcp_companion::ipc::paths::EndpointPaths;
use mcp_companion::secret::{self, SecretStore};
use tauri::{Manager, Runtime};

use crate::elicit::Pending;

/// Changes the log filter of the running process (a `tracing_subscriber` reload handle).
pub type SetLogLevel = Box<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// The shell's state: the hub (in process), where its config lives, the endpoint it serves.
pub struct Desktop {
    /// The hub every command calls into.
    pub hub: Hub,
    /// The config file the CLI reads too (`MCP_COMPANION_CONFIG` honoured).
    pub config_path: PathBuf,
    /// The sockets served, for the "Connect an agent" page.
    pub paths: EndpointPaths,
    /// The running companion, taken out once at exit to shut it down. `None` in mock tests.
    pub companion: Mutex<Option<Companion>>,
    /// Runtime log level changes; `None` when logging is not ours (tests).
    pub set_log_level: Option<SetLogLevel>,
    /// Where the window puts secret values (the OS keychain; an in-memory store in tests).
    pub secrets: Arc<dyn SecretStore>,
    /// The elicitations waiting for the person (shared with the companion's
    /// [`WindowElicitor`](crate::elicit::WindowElicitor)).
    pub elicitations: Pending,
    /// A bundle file the app was asked to open (argv, or a second launch), until the window
    /// takes it.
    pub opened_bundle: Mutex<Option<String>>,
    /// Where bundles are unpacked; `None`: the OS data directory's (tests set their own).
    pub bundles_root: Option<PathBuf>,
}

impl Desktop {
    /// State for a hub without sockets or lock (the mock-runtime tests).
    pub fn detached(hub: Hub, config_path: PathBuf, paths: EndpointPaths) -> Desktop {
        Desktop {
            hub,
            config_path,
            paths,
            companion: Mutex::new(None),
            set_log_level: None,
            secrets: Arc::new(secret::os_keychain()),
            elicitations: Pending::default(),
            opened_bundle: Mutex::new(None),
            bundles_root: None,
        }
    }

    /// The same state with `store` for secrets (tests pass a `MemoryStore`).
    pub fn with_secrets(self, store: Arc<dyn SecretStore>) -> Desktop {
        Desktop {
            secrets: store,
            ..self
        }
    }

    /// Remembers `path` as the bundle to open (the latest one wins).
    pub fn set_opened_bundle(&self, path: String) {
        *self.opened_bundle.lock().unwrap_or_else(|p| p.into_inner()) = Some(path);
    }

    /// The bundle to open, once.
    pub fn take_opened_bundle(&self) -> Option<String> {
        self.opened_bundle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// The same state unpacking bundles under `root`.
    pub fn with_bundles_root(self, root: PathBuf) -> Desktop {
        Desktop {
            bundles_root: Some(root),
            ..self
        }
    }

    /// Takes the companion out for shutdown (once).
    pub fn take_companion(&self) -> Option<Companion> {
        self.companion
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }
}

/// `app.desktop()` from any handle, window or app.
pub trait DesktopExt<R: Runtime> {
    /// The shell state.
    fn desktop(&self) -> &Desktop;
}

impl<R: Runtime, M: Manager<R>> DesktopExt<R> for M {
    fn desktop(&self) -> &Desktop {
        self.state::<Desktop>().inner()
    }
}
