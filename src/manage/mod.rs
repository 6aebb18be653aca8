//! The install side: everything that changes *what* the companion runs, as opposed to the
//! runtime pipeline (config → launch/net → upstream → supervisor → hub → ipc) that runs it.
//!
//! What belongs here: services used by the desktop window and the CLI to add, import, test and
//! edit server entries, and to connect agents to the companion. Each works on `config.json`
//! through [`crate::config`] and never touches a running supervisor directly; a running
//! companion picks the change up through `reload`.
//!
//! | module | owns |
//! |---|---|
//! | [`approval`] | the person's answer to a call waiting for approval; `always` writes `toolPolicy` |
//! | [`presets`] | the built-in catalogue of installable servers, preset + inputs → entry |
//! | [`import`] | reading other clients' config files: added / skipped / renamed |
//! | [`edit`] | validated, atomically saved edits of `config.json` |
//! | [`probe`] | connect to an entry once and list its tools ("Test" before "Save") |
//! | [`secrets`] | moving plain-text secret values into the keychain (`secret migrate`, import) |
//! | [`registry`] | installing from an MCP registry: search, map `server.json` → entry, update |
//! | [`bundle`] | installing MCP bundles (`.mcpb`): checked unpacking, manifest → entry |
//! | [`connect`] | writing our `bridge` entry into other clients' config files |
//! | [`login_start`] | starting the headless companion at login (systemd user unit, Run key, LaunchAgent) |

pub mod approval;
pub mod bundle;
pub mod connect;
pub mod edit;
pub mod import;
pub mod login_start;
pub mod presets;
pub mod probe;
pub mod registry;
pub mod secrets;
