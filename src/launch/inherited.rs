//! What a stdio child gets from the companion's own process: the pass-through variables'
//! values and, in GUI mode, the login shell's PATH. `doctor` plans a launch with a running
//! companion's [`ChildEnvironment`] (asked over the control API) to show the exact command
//! that companion would run.

use serde::{Deserialize, Serialize};

use super::TargetOs;

/// The inputs of a child's environment that come from the companion: what `doctor` compares
/// and the control API's `environment` answer carries.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildEnvironment {
    /// Process id of the companion.
    pub pid: u32,
    /// The companion's values of every pass-through variable that is set
    /// ([`super::env::passthrough`]).
    pub vars: std::collections::BTreeMap<String, String>,
    /// The login shell's PATH when the companion runs in GUI mode.
    pub gui: Option<super::shell_path::LoginPath>,
}

impl ChildEnvironment {
    /// What this process would give its children.
    pub async fn of_this_process() -> ChildEnvironment {
        let os = TargetOs::host();
        let vars = super::env::passthrough(os)
            .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_owned(), v)))
            .collect();
        let gui = if os != TargetOs::Windows && super::shell_path::gui_mode() {
            Some(super::shell_path::login_path().await.clone())
        } else {
            None
        };
        ChildEnvironment {
            pid: std::process::id(),
            vars,
            gui,
        }
    }
}
