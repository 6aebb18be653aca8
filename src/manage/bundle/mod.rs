//! Installing MCP bundles (`.mcpb`, formerly `.dxt`): a zip archive holding a local MCP
//! server and a `manifest.json` that says how to run it (spec: `MANIFEST.md` of
//! `anthropics/mcpb`; reference CLI: `@anthropic-ai/mcpb`).
//!
//! `install FILE.mcpb` reads and checks the whole archive and its manifest, maps the manifest
//! and the person's `user_config` values to an ordinary stdio entry, and only then unpacks the
//! archive into a directory of its own under [`paths::bundles_root`], stores secret values in
//! the keychain and writes `config.json`. A refused bundle writes nothing anywhere.
//!
//! | module | owns |
//! |---|---|
//! | [`archive`] | the file's bytes, the signature block, entry checks (traversal, links, sizes, zip bombs), unpacking |
//! | [`manifest`] | `manifest.json`: fields read and checked |
//! | [`user_config`] | its `user_config` options |
//! | [`entry`] | manifest + values → entry (`${__dirname}`, `${user_config.*}`, `${HOME}`…) |
//! | [`paths`] | safe relative paths, where bundles are unpacked |
//! | [`install`] | the flow: plan, save, remove, the entry's `source` |
//! | [`preview`] | what the window shows before installing; bundles received as bytes |
//! | [`update`] | `outdated` / `update` against the remembered file |
//! | [`signature`] | the PKCS#7 signature `mcpb sign` appends: verified, its signer |
//! | [`runtime`] | `compatibility.runtimes` against the installed `node` / `python` |
//!
//! Signatures: a block appended by `mcpb sign` is verified ([`signature`]) before the zip is
//! read; a bundle whose signature does not verify is refused. A valid signature proves the
//! file is unchanged since the holder of the certificate's key signed it, not who that is.

pub mod archive;
pub mod entry;
pub mod install;
pub mod manifest;
pub mod paths;
pub mod preview;
pub mod runtime;
pub mod signature;
pub mod update;
pub mod user_config;

pub use archive::{Archive, Limits};
pub use install::{BundlePlan, BundleSource, plan, remove, save};
pub use manifest::Manifest;

use crate::manage::registry::RegistryError;

/// The most bytes `manifest.json` may have.
pub const MANIFEST_MAX_BYTES: usize = 1 << 20;

/// Why a bundle was refused. Texts name the file, entry or manifest field.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// Reading or writing a file failed.
    #[error("{path}: {reason}")]
    Io {
        /// The path.
        path: String,
        /// What the OS said.
        reason: String,
    },
    /// The file is not a usable zip archive.
    #[error("not a usable bundle: {reason}")]
    Archive {
        /// Why.
        reason: String,
    },
    /// One entry of the archive is refused.
    #[error("refused entry \"{name}\" of the bundle: {reason}")]
    Entry {
        /// The entry's name (cut short).
        name: String,
        /// Why.
        reason: String,
    },
    /// Something is larger than its limit.
    #[error("{what} is too large: {size}, the limit is {limit}")]
    TooLarge {
        /// What.
        what: String,
        /// Its size (bytes or a count).
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The manifest is missing a field or has a bad one.
    #[error("manifest.json: {field} {reason}")]
    Manifest {
        /// The field, e.g. `server.type`.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// The bundle carries a signature that does not verify (changed after signing, or not
    /// checkable).
    #[error("the bundle's signature does not verify: {reason}; nothing was installed")]
    Signature {
        /// Why.
        reason: String,
    },
    /// `update` found a file whose signing certificate differs from the installed version's
    /// (or no signature where there was one).
    #[error(
        "the installed version was signed by {before}; the bundle file now is {now}: not updated (to accept it, install it again with --replace)"
    )]
    SignerChanged {
        /// Who signed the installed version (certificate subject and fingerprint).
        before: String,
        /// The file's signer, or "not signed".
        now: String,
    },
    /// The bundle cannot run here (platform, runtime version, a directory the user lacks).
    #[error("this bundle cannot run here: {reason}")]
    Incompatible {
        /// Why.
        reason: String,
    },
    /// A `user_config` value, the keychain, or the config file (the registry install's
    /// errors, shared).
    #[error(transparent)]
    Input(#[from] RegistryError),
}
