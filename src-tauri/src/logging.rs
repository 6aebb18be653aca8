//! stderr logging with a filter the Settings page can change at run time.

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, reload};

use crate::state::SetLogLevel;

/// Installs the global subscriber (`RUST_LOG` wins over `level`) and returns the setter.
pub fn init(level: &str) -> SetLogLevel {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    // rmcp's OAuth code logs authorization codes at debug.
    let filter = mcp_companion::auth::secret_safe(filter);
    let (filter, handle) = reload::Layer::new(filter);
    let installed = tracing_subscriber::registry()
        .with(filter)
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
        .try_init();
    if let Err(e) = installed {
        eprintln!("warning: logging not initialised: {e}");
    }
    Box::new(move |level: &str| {
        let filter =
            EnvFilter::try_new(level).map_err(|e| format!("invalid log level \"{level}\": {e}"))?;
        let filter = mcp_companion::auth::secret_safe(filter);
        handle.reload(filter).map_err(|e| e.to_string())
    })
}
