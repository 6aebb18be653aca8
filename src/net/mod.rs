//! The SSRF guard for remote servers (DESIGN §9).
//!
//! A remote server's URL may only reach public addresses unless the user whitelisted a network
//! in `ssrfWhitelist`. The guard is enforced where the connection is made:
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | [`Guard`]: the address check, the URL pre-check |
//! | `ranges.rs` | [`BLOCKED`]: the blocked ranges (IANA special-purpose registries) and embedded IPv4 |
//! | `resolver.rs` | [`GuardedResolver`]: the `reqwest` DNS resolver that refuses blocked addresses |
//! | `client.rs` | [`build_client`]: the `reqwest::Client` (resolver, headers, redirect re-checks) |
//! | `redact/` | [`redact`], [`scrub`]: URLs and secrets as they may appear in logs and errors |
//! | `error_chain.rs` | [`error_chain`]: an HTTP error and its sources as one redacted line |
//!
//! Check order for one address: IPv4-mapped IPv6 (`::ffff:a.b.c.d`) is unmapped first; the
//! whitelist is checked next (a match passes); then the blocked ranges, including the IPv4
//! embedded in NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`) addresses.
//!
//! Textual forms: hosts are parsed once, by the WHATWG URL parser (`url`), the same one
//! `reqwest` uses, so every spelling of an IPv4 address (`2130706433`, `0177.0.0.1`, `0x7f.1`,
//! `127.1`, a trailing dot, percent-encoding, full-width digits) becomes the one address that
//! is checked and connected to; IPv6 zone ids (`[fe80::1%25eth0]`) do not parse at all. Names
//! (`localhost.`, `127.0.0.1.nip.io`) are checked on every address they resolve to.

mod cap;
mod client;
mod error_chain;
mod ranges;
mod redact;
mod resolver;

use std::net::IpAddr;
use std::sync::Arc;

use ipnet::IpNet;

pub use cap::{LOG_TEXT_MAX, capped, capped_at};
pub use client::{ClientError, CrossOriginRedirect, build_client, connect_url, has_authorization};
pub use error_chain::error_chain;
pub use ranges::BLOCKED;
pub use redact::{
    is_secret_name, redact, redact_urls, remember_authorization, remember_credential,
    remember_env_secrets, remember_expanded, remember_oauth_form, remember_oauth_json,
    remember_secrets, scrub, scrub_cut, scrub_known, scrub_known_value,
};
pub use resolver::GuardedResolver;

use ranges::{is_blocked, unmap};

/// Why a URL or address was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SsrfError {
    /// Only `http` and `https` are allowed.
    #[error("scheme \"{scheme}\" is not allowed (use http or https)")]
    Scheme {
        /// The refused scheme.
        scheme: String,
    },
    /// The URL has no host.
    #[error("the url has no host")]
    NoHost,
    /// The host resolves to (or is) a blocked address.
    #[error(
        "blocked: {} private/internal address {address}; to allow it, add \"{suggestion}\" to ssrfWhitelist (the config file's top-level list)",
        blocked_subject(host, address)
    )]
    Blocked {
        /// The host as written in the URL.
        host: String,
        /// The offending address, as resolved (before unmapping).
        address: IpAddr,
        /// The exact whitelist entry that would allow this address (`/32` or `/128`).
        suggestion: String,
    },
    /// Name resolution failed.
    #[error("cannot resolve host {host}: {reason}")]
    Resolve {
        /// The host as written in the URL.
        host: String,
        /// What the resolver said.
        reason: String,
    },
}

impl SsrfError {
    /// Whether the guard refused the URL (scheme, host or address); `false` for a name that
    /// did not resolve, which is no refusal: nothing was checked, and it may resolve later.
    pub fn is_refusal(&self) -> bool {
        !matches!(self, SsrfError::Resolve { .. })
    }
}

/// The guard: the whitelist networks plus the fixed blocked ranges. Cheap to clone; clones
/// share the last refusal.
#[derive(Clone, Debug, Default)]
pub struct Guard {
    whitelist: Arc<Vec<IpNet>>,
    /// The last refusal, so a caller can report it even when the HTTP stack (rmcp) drops the
    /// error's source chain.
    refused: Arc<std::sync::Mutex<Option<SsrfError>>>,
}

impl Guard {
    /// A guard allowing exactly the networks in `whitelist` besides public addresses.
    pub fn new(whitelist: &[IpNet]) -> Guard {
        Guard {
            whitelist: Arc::new(whitelist.to_vec()),
            refused: Arc::default(),
        }
    }

    /// Takes the last refusal made by this guard or its clones, if any.
    pub fn take_refusal(&self) -> Option<SsrfError> {
        self.refused
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// Checks one address `host` resolved to.
    ///
    /// # Errors
    /// [`SsrfError::Blocked`] naming `host`, `address` and the entry that would allow it.
    pub fn check_addr(&self, host: &str, address: IpAddr) -> Result<(), SsrfError> {
        let ip = unmap(address);
        if self.whitelist.iter().any(|n| n.contains(&ip)) || !is_blocked(ip) {
            return Ok(());
        }
        let suggestion = match ip {
            IpAddr::V4(v4) => format!("{v4}/32"),
            IpAddr::V6(v6) => format!("{v6}/128"),
        };
        let err = SsrfError::Blocked {
            host: host.to_owned(),
            address,
            suggestion,
        };
        *self.refused.lock().unwrap_or_else(|p| p.into_inner()) = Some(err.clone());
        Err(err)
    }

    /// Checks the scheme, and the host when it is an IP literal (those never reach the
    /// resolver). Host names are checked when they are resolved ([`GuardedResolver`]).
    ///
    /// # Errors
    /// [`SsrfError::Scheme`], [`SsrfError::NoHost`] or [`SsrfError::Blocked`].
    pub fn check_url_literal(&self, url: &url::Url) -> Result<(), SsrfError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(SsrfError::Scheme {
                scheme: url.scheme().to_owned(),
            });
        }
        match url.host() {
            None => Err(SsrfError::NoHost),
            Some(url::Host::Ipv4(v4)) => self.check_addr(&v4.to_string(), IpAddr::V4(v4)),
            Some(url::Host::Ipv6(v6)) => self.check_addr(&format!("[{v6}]"), IpAddr::V6(v6)),
            Some(url::Host::Domain(_)) => Ok(()),
        }
    }

    /// Checks `url` fully before any connection: the scheme, and every address its host
    /// resolves to (an IP literal is checked as is). Connections are checked again at connect
    /// time by the resolver, so this only gives an early, clear error.
    ///
    /// # Errors
    /// Any [`SsrfError`].
    pub async fn check_url(&self, url: &url::Url) -> Result<(), SsrfError> {
        self.check_url_literal(url)?;
        if let Some(url::Host::Domain(host)) = url.host() {
            let port = url.port_or_known_default().unwrap_or(80);
            self.resolve(host, port).await?;
        }
        Ok(())
    }

    /// Resolves `host` and checks every address; one blocked address refuses the host.
    ///
    /// # Errors
    /// [`SsrfError::Resolve`] or [`SsrfError::Blocked`].
    pub async fn resolve(
        &self,
        host: &str,
        port: u16,
    ) -> Result<Vec<std::net::SocketAddr>, SsrfError> {
        let addrs: Vec<_> = tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| SsrfError::Resolve {
                host: host.to_owned(),
                reason: e.to_string(),
            })?
            .collect();
        if addrs.is_empty() {
            return Err(SsrfError::Resolve {
                host: host.to_owned(),
                reason: "no addresses".to_owned(),
            });
        }
        for a in &addrs {
            self.check_addr(host, a.ip())?;
        }
        Ok(addrs)
    }
}

/// The subject of a refusal: "localhost resolves to" for a name, "the URL points at" for an IP
/// literal (which needs no resolving).
fn blocked_subject(host: &str, address: &IpAddr) -> String {
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    if literal.parse::<IpAddr>().is_ok_and(|ip| ip == *address) {
        "the URL points at".to_owned()
    } else {
        format!("{host} resolves to")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(list: &[&str]) -> Guard {
        let nets: Vec<IpNet> = list.iter().map(|s| s.parse().unwrap()).collect();
        Guard::new(&nets)
    }

    #[test]
    fn blocked_and_allowed_addresses() {
        let g = guard(&[]);
        let blocked = [
            "0.0.0.0",
            "0.1.2.3",
            "10.1.2.3",
            "100.64.0.1",
            "100.127.255.255",
            "127.0.0.1",
            "127.8.8.8",
            "169.254.169.254",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "::",
            "::1",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "febf::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "2002:c0a8:101::1",
        ];
        for a in blocked {
            let ip: IpAddr = a.parse().unwrap();
            assert!(g.check_addr("h", ip).is_err(), "{a} should be blocked");
        }
        let allowed = [
            "1.1.1.1",
            "8.8.8.8",
            "100.63.255.255",
            "100.128.0.0",
            "172.32.0.1",
            "11.0.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::",
        ];
        for a in allowed {
            let ip: IpAddr = a.parse().unwrap();
            assert!(g.check_addr("h", ip).is_ok(), "{a} should be allowed");
        }
    }

    #[test]
    fn the_whitelist_is_checked_first_and_covers_mapped_forms() {
        let g = guard(&["127.0.0.1/32", "10.0.0.0/8", "::1/128"]);
        for a in ["127.0.0.1", "::ffff:127.0.0.1", "10.9.9.9", "::1"] {
            assert!(g.check_addr("h", a.parse().unwrap()).is_ok(), "{a}");
        }
        for a in ["127.0.0.2", "192.168.0.1", "64:ff9b::7f00:1"] {
            assert!(g.check_addr("h", a.parse().unwrap()).is_err(), "{a}");
        }
    }

    #[test]
    fn the_error_names_host_address_and_the_entry_to_add() {
        let g = guard(&[]);
        let cases = [
            ("127.0.0.1", "127.0.0.1/32"),
            ("::ffff:127.0.0.1", "127.0.0.1/32"),
            ("fe80::1", "fe80::1/128"),
        ];
        for (addr, entry) in cases {
            let err = g
                .check_addr("example.test", addr.parse().unwrap())
                .unwrap_err();
            let text = err.to_string();
            assert!(text.contains("example.test"), "{text}");
            assert!(text.contains(addr), "{text}");
            assert!(text.contains(&format!("\"{entry}\"")), "{text}");
        }
        let literal = g
            .check_addr("127.0.0.1", "127.0.0.1".parse().unwrap())
            .unwrap_err();
        assert_eq!(
            literal.to_string(),
            "blocked: the URL points at private/internal address 127.0.0.1; to allow it, add \"127.0.0.1/32\" to ssrfWhitelist (the config file's top-level list)"
        );
        let named = g
            .check_addr("localhost", "::1".parse().unwrap())
            .unwrap_err();
        assert!(
            named
                .to_string()
                .starts_with("blocked: localhost resolves to private/internal address ::1"),
            "{named}"
        );
    }

    #[test]
    fn literal_urls_and_schemes() {
        let g = guard(&[]);
        for bad in [
            "http://169.254.169.254/",
            "http://[::ffff:127.0.0.1]/",
            "http://0.0.0.0/",
            "http://10.1.2.3/",
            "http://100.64.0.1/",
            "http://[fe80::1]/",
            "http://[64:ff9b::7f00:1]/",
            "http://127.0.0.1:8080/mcp",
        ] {
            let url = url::Url::parse(bad).unwrap();
            assert!(
                matches!(g.check_url_literal(&url), Err(SsrfError::Blocked { .. })),
                "{bad}"
            );
        }
        let ftp = url::Url::parse("ftp://example.com/").unwrap();
        assert_eq!(
            g.check_url_literal(&ftp),
            Err(SsrfError::Scheme {
                scheme: "ftp".into()
            })
        );
        let ok = url::Url::parse("https://93.184.215.14/").unwrap();
        assert_eq!(g.check_url_literal(&ok), Ok(()));
    }

    /// Every spelling of a blocked address in a URL is the blocked address: `(url, refused)`;
    /// `None` means the URL does not parse.
    #[test]
    fn every_textual_form_of_an_address_is_checked_as_that_address() {
        let g = guard(&[]);
        let cases: &[(&str, Option<bool>)] = &[
            ("http://2130706433/", Some(true)),
            ("http://0177.0.0.1/", Some(true)),
            ("http://0x7f.1/", Some(true)),
            ("http://0X7F000001/", Some(true)),
            ("http://127.1/", Some(true)),
            ("http://127.0.0.1./", Some(true)),
            ("http://0/", Some(true)),
            ("http://%31%32%37.0.0.1/", Some(true)),
            ("http://\u{ff11}\u{ff12}\u{ff17}.0.0.1/", Some(true)),
            ("http://169.254.169.254:80/latest/meta-data", Some(true)),
            ("http://0251.0376.0251.0376/", Some(true)),
            ("http://[::1]/", Some(true)),
            ("http://[0:0:0:0:0:0:0:1]/", Some(true)),
            ("http://[::127.0.0.1]/", Some(true)),
            ("http://[::ffff:127.0.0.1]/", Some(true)),
            ("http://[::ffff:7f00:1]/", Some(true)),
            ("http://[64:ff9b::127.0.0.1]/", Some(true)),
            ("http://[64:ff9b:1::a00:1]/", Some(true)),
            ("http://[2002:7f00:1::1]/", Some(true)),
            ("http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", Some(true)),
            ("http://[fe80::1%25eth0]/", None),
            ("http://[fe80::1%eth0]/", None),
            ("http://[::1/", None),
            ("http://134744072/", Some(false)),
            ("http://[::ffff:8.8.8.8]/", Some(false)),
        ];
        for (text, want) in cases {
            match (url::Url::parse(text), want) {
                (Ok(url), Some(blocked)) => assert_eq!(
                    matches!(g.check_url_literal(&url), Err(SsrfError::Blocked { .. })),
                    *blocked,
                    "{text} parsed as {url}"
                ),
                (Err(_), None) => {}
                (parsed, _) => panic!("{text}: {parsed:?}"),
            }
        }
    }

    #[tokio::test]
    async fn names_with_a_trailing_dot_are_resolved_and_refused() {
        let g = guard(&[]);
        let url = url::Url::parse("http://localhost.:9/").unwrap();
        assert!(
            matches!(
                g.check_url(&url).await,
                Err(SsrfError::Blocked { .. }) | Err(SsrfError::Resolve { .. })
            ),
            "localhost. allowed"
        );
    }

    #[tokio::test]
    async fn names_resolving_to_loopback_are_refused() {
        let g = guard(&[]);
        let url = url::Url::parse("http://localhost:9/").unwrap();
        let err = g.check_url(&url).await.unwrap_err();
        assert!(
            matches!(err, SsrfError::Blocked { ref host, .. } if host == "localhost"),
            "{err}"
        );
    }
}
