//! stderr logging with a filter the Settings page can change at run time; the same lines as
//! `serve`'s: scrubbed of URLs and secrets, outside text inert ([`mcp_companion::logging`]).
//!
//! As clean as `serve`'s log: no ANSI colour codes unless stderr is a terminal, and rmcp at
//! `warn` unless the filter names rmcp itself (its `info` lines dump whole peer-info
//! structures on every connection).

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, reload};

use crate::state::SetLogLevel;

/// The filter for a level string such as `info` or `debug,mcp_companion=trace`: rmcp is added
/// at `warn` unless the string sets it.
fn filter_for(level: &str) -> Result<EnvFilter, tracing_subscriber::filter::ParseError> {
    if level.contains("rmcp") {
        EnvFilter::try_new(level)
    } else {
        EnvFilter::try_new(format!("{level},rmcp=warn"))
    }
}

/// Installs the global subscriber (`RUST_LOG` wins over `level`) and returns the setter.
pub fn init(level: &str) -> SetLogLevel {
    let filter = std::env::var("RUST_LOG")
        .ok()
        .and_then(|l| filter_for(&l).ok())
        .or_else(|| filter_for(level).ok())
        .unwrap_or_else(|| EnvFilter::new("info,rmcp=warn"));
    // rmcp's OAuth code logs authorization codes at debug.
    let filter = mcp_companion::auth::secret_safe(filter);
    let (filter, handle) = reload::Layer::new(filter);
    let installed = tracing_subscriber::registry()
        .with(filter)
        .with(mcp_companion::logging::layer())
        .try_init();
    if let Err(e) = installed {
        eprintln!("warning: logging not initialised: {e}");
    }
    Box::new(move |level: &str| {
        let filter =
            filter_for(level).map_err(|e| format!("invalid log level \"{level}\": {e}"))?;
        let filter = mcp_companion::auth::secret_safe(filter);
        handle.reload(filter).map_err(|e| e.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::filter_for;

    #[test]
    fn rmcp_is_quiet_unless_asked_for() {
        for (level, want) in [
            ("info", "info,rmcp=warn"),
            ("debug", "debug,rmcp=warn"),
            ("info,rmcp=debug", "info,rmcp=debug"),
        ] {
            let got = filter_for(level).expect("valid").to_string();
            let want = tracing_subscriber::EnvFilter::new(want).to_string();
            assert_eq!(got, want, "{level}");
        }
        assert!(filter_for("info,[").is_err());
    }
}
