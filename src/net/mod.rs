//! The SSRF guard for remote servers (DESIGN §9).
//!
//! A remote server's URL may only reach public addresses unless the user whitelisted a network
//! in `ssrfWhitelist`. The guard is enforced where the connection is made:
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | [`Guard`]: the blocked ranges, the address check, the URL pre-check |
//! | `resolver.rs` | [`GuardedResolver`]: the `reqwest` DNS resolver that refuses blocked addresses |
//! | `client.rs` | [`build_client`]: the `reqwest::Client` (resolver, headers, redirect re-checks) |
//! | `redact.rs` | [`redact`]: URLs as they may appear in logs and errors |
//! | `error_chain.rs` | [`error_chain`]: an HTTP error and its sources as one redacted line |
//!
//! Check order for one address: IPv4-mapped IPv6 (`::ffff:a.b.c.d`) is unmapped first; the
//! whitelist is checked next (a match passes); then the blocked ranges, including the IPv4
//! embedded in NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`) addresses.

mod client;
mod error_chain;
mod redact;
mod resolver;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use ipnet::IpNet;

pub use client::{ClientError, build_client};
pub use error_chain::error_chain;
pub use redact::redact;
pub use resolver::GuardedResolver;

/// Networks no remote server may reach unless whitelisted (DESIGN §9, nanobot §11.1).
const BLOCKED: &[&str] = &[
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "::/128",
    "::1/128",
    "fc00::/7",
    "fe80::/10",
];

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
        "blocked: {} private/internal address {address}; to allow it, add \"{suggestion}\" to ssrfWhitelist",
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

/// `::ffff:a.b.c.d` → `a.b.c.d`; other addresses unchanged.
fn unmap(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Whether an (already unmapped) address is in a blocked range, or is a NAT64 / 6to4 address
/// whose embedded IPv4 is.
fn is_blocked(ip: IpAddr) -> bool {
    if in_blocked_ranges(ip) {
        return true;
    }
    match ip {
        IpAddr::V6(v6) => embedded_v4(v6).is_some_and(|v4| in_blocked_ranges(IpAddr::V4(v4))),
        IpAddr::V4(_) => false,
    }
}

fn in_blocked_ranges(ip: IpAddr) -> bool {
    BLOCKED.iter().any(|net| {
        // The table is constant and covered by tests.
        net.parse::<IpNet>().is_ok_and(|n| n.contains(&ip))
    })
}

/// The IPv4 inside a NAT64 (`64:ff9b::/96`, last 32 bits) or 6to4 (`2002::/16`, bits 16..48)
/// address.
fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(Ipv4Addr::new(
            (s[6] >> 8) as u8,
            s[6] as u8,
            (s[7] >> 8) as u8,
            s[7] as u8,
        ));
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            s[1] as u8,
            (s[2] >> 8) as u8,
            s[2] as u8,
        ));
    }
    None
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
            "224.0.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::",
            "fec0::1",
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
            "blocked: the URL points at private/internal address 127.0.0.1; to allow it, add \"127.0.0.1/32\" to ssrfWhitelist"
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
