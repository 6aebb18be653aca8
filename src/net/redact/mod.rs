//! URLs and secrets as they may appear in logs, statuses and errors (DESIGN §9, nanobot §11.5).
//!
//! | function | for |
//! |---|---|
//! | [`redact`] | one URL we hold: scheme, host and port only |
//! | [`redact_urls`] | free text (an error chain, a log line): every URL in it redacted |
//! | [`remember_secrets`] | the secret parts of a remote server's config (URL userinfo, query and fragment values, header values), recorded once per connect |
//! | [`remember_env_secrets`] | the values of a stdio server's `env` whose names say secret (`*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASS*`…) |
//! | [`remember_expanded`] | what a `${VAR}` in a server's config expanded to, when the name says secret (or `*_PAT`), and the password of a URL-valued one |
//! | [`remember_credential`] | one credential the moment it exists: an OAuth access or refresh token received or loaded, an authorization code or PKCE verifier sent, a client secret, a registry token |
//! | [`remember_oauth_form`] / [`remember_oauth_json`] | the credentials in an OAuth request's form body / an answer's JSON body |
//! | [`scrub`] | free text: [`redact_urls`] plus every remembered secret replaced by `<redacted>` |
//! | [`scrub_known`] | free text from a server (a JSON-RPC error message): remembered secrets only, its URLs kept |
//! | [`scrub_cut`] | [`scrub`] for the first bytes of a longer text (a quoted HTTP body): a secret cut at the end is masked too |
//!
//! Every string that leaves through a log line ([`crate::logging`]), a status field
//! (`lastError`) or an error an agent receives goes through [`scrub`] (or [`scrub_known`] for
//! the server's own words).
//!
//! This is the one redaction mechanism: whatever holds or sends a credential registers it here
//! when it is created, received or loaded, so a server quoting it back (a 401's
//! `error_description`, a token endpoint's error) is masked in whatever text carries it. The
//! set keeps the [`MAX_SECRETS`](store::MAX_SECRETS) most recently registered values
//! (registering again counts as recent), so refreshed tokens never crowd out the ones in use.
//!
//! | file | owns |
//! |---|---|
//! | `store.rs` | the remembered secrets: the set, its bound, registering a value |
//! | `urls.rs` | [`redact`], [`redact_urls`]: URLs in what we log |
//! | `remember.rs` | the `remember_*` functions: which parts of a config, a header or an OAuth body are secrets |
//! | `scrub.rs` | [`scrub`] and its variants: remembered secrets masked in every written form |

mod remember;
mod scrub;
mod store;
#[cfg(test)]
mod tests;
mod urls;

pub use remember::{
    is_secret_name, remember_authorization, remember_credential, remember_env_secrets,
    remember_expanded, remember_oauth_form, remember_oauth_json, remember_secrets,
};
pub use scrub::{scrub, scrub_cut, scrub_known, scrub_known_value};
pub use urls::{redact, redact_urls};
