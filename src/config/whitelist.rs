//! `ssrfWhitelist` (DESIGN §9): networks a remote server may resolve to even though the SSRF
//! guard would block them (loopback, private ranges).
//!
//! Entry syntax:
//!
//! ```text
//! 10.0.0.0/8        a CIDR
//! 10.1.2.3/8        refused: host bits set (10.1.2.3/32 or 10.0.0.0/8 was meant?)
//! 127.0.0.1         a bare IPv4 address = /32
//! ::1               a bare IPv6 address = /128
//! ```
//!
//! Surrounding whitespace is ignored. Invalid entries are kept as errors, never silently
//! dropped; they concern remote servers only and never fail a stdio server.

use std::net::IpAddr;

use ipnet::IpNet;
use serde_json::Value;

use super::ConfigError;
use super::error::json_type;

/// The parsed `ssrfWhitelist`: the valid networks, plus one error per invalid entry.
///
/// Entries are CIDRs (`10.0.0.0/8`; host bits must be zero) or bare addresses
/// (`127.0.0.1` = /32, `::1` = /128); surrounding whitespace is ignored.
///
/// A list plus errors rather than one `Result`, so the UI can show every bad entry at once and
/// the valid ones stay usable. Policy for callers (the hub): while [`SsrfWhitelist::errors`] is
/// non-empty, fail remote (sse / streamableHttp) servers with [`SsrfWhitelist::check`]'s error
/// instead of connecting with a partial whitelist; stdio servers are unaffected.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SsrfWhitelist {
    /// Valid entries in file order.
    pub nets: Vec<IpNet>,
    /// [`ConfigError::InvalidCidr`] per bad entry, or one [`ConfigError::WhitelistShape`] when
    /// `ssrfWhitelist` is not an array.
    pub errors: Vec<ConfigError>,
}

impl SsrfWhitelist {
    /// Parses the value of `ssrfWhitelist`; `None` or `null` is an empty whitelist.
    pub fn from_value(value: Option<&Value>) -> SsrfWhitelist {
        let mut list = SsrfWhitelist::default();
        let items = match value {
            None | Some(Value::Null) => return list,
            Some(Value::Array(items)) => items,
            Some(other) => {
                list.errors.push(ConfigError::WhitelistShape {
                    found: json_type(other),
                });
                return list;
            }
        };
        for (i, item) in items.iter().enumerate() {
            match item {
                Value::String(text) => match parse_cidr(text) {
                    Ok(net) => list.nets.push(net),
                    Err(e) => list.errors.push(e),
                },
                other => list.errors.push(ConfigError::InvalidCidr {
                    entry: format!("#{i}"),
                    message: format!("expected a string, found {}", json_type(other)),
                }),
            }
        }
        list
    }

    /// The networks, or the first error if any entry is invalid (for remote servers).
    ///
    /// # Errors
    /// The first of [`SsrfWhitelist::errors`].
    pub fn check(&self) -> Result<&[IpNet], ConfigError> {
        match self.errors.first() {
            Some(e) => Err(e.clone()),
            None => Ok(&self.nets),
        }
    }

    /// Whether `addr` falls in one of the valid networks.
    pub fn contains(&self, addr: IpAddr) -> bool {
        self.nets.iter().any(|n| n.contains(&addr))
    }
}

/// Parses one entry by the syntax in the module doc.
///
/// # Errors
/// [`ConfigError::InvalidCidr`] naming the entry.
pub(crate) fn parse_cidr(text: &str) -> Result<IpNet, ConfigError> {
    let trimmed = text.trim();
    let parsed = if trimmed.contains('/') {
        trimmed.parse::<IpNet>().map_err(|e| e.to_string())
    } else {
        trimmed
            .parse::<IpAddr>()
            .map(IpNet::from)
            .map_err(|e| e.to_string())
    };
    let net = parsed.map_err(|message| ConfigError::InvalidCidr {
        entry: text.to_owned(),
        message: format!("not a CIDR or IP address ({message})"),
    })?;
    // `10.1.2.3/8` is ambiguous: one host was meant, or the network. Clearing the host bits
    // would silently allow 16 million addresses where one was written.
    if net.trunc() != net {
        let host = IpNet::from(net.addr());
        return Err(ConfigError::InvalidCidr {
            entry: text.to_owned(),
            message: format!(
                "host bits are set; write {host} for that address or {} for the whole network",
                net.trunc()
            ),
        });
    }
    Ok(net)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn valid_entries_parse() {
        let cases = [
            ("127.0.0.1/32", "127.0.0.1/32"),
            ("10.0.0.0/8", "10.0.0.0/8"),
            ("127.0.0.1", "127.0.0.1/32"),
            (" 192.168.1.1 ", "192.168.1.1/32"),
            ("::1", "::1/128"),
            ("fd00::/8", "fd00::/8"),
            ("0.0.0.0/0", "0.0.0.0/0"),
        ];
        for (input, want) in cases {
            let got = parse_cidr(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(got.to_string(), want, "{input}");
        }
    }

    #[test]
    fn invalid_entries_are_errors_naming_the_entry() {
        for input in [
            "",
            "localhost",
            "10.0.0.0/33",
            "10.0.0/8",
            "::1/129",
            "1.2.3.4/x",
        ] {
            let err = parse_cidr(input).unwrap_err();
            assert!(
                matches!(&err, ConfigError::InvalidCidr { entry, .. } if entry == input),
                "{input}: {err:?}"
            );
            assert!(
                err.to_string()
                    .starts_with(&format!("ssrfWhitelist entry \"{input}\": "))
            );
        }
    }

    #[test]
    fn an_entry_with_host_bits_set_is_refused_never_widened() {
        let cases = [
            ("10.1.2.3/8", "10.1.2.3/32", "10.0.0.0/8"),
            ("192.168.1.10/16", "192.168.1.10/32", "192.168.0.0/16"),
            ("fd00::1/8", "fd00::1/128", "fd00::/8"),
            ("127.0.0.1/0", "127.0.0.1/32", "0.0.0.0/0"),
        ];
        for (input, host, net) in cases {
            let err = parse_cidr(input).unwrap_err();
            let text = err.to_string();
            assert!(text.contains("host bits are set"), "{text}");
            assert!(text.contains(host) && text.contains(net), "{text}");
            let list = SsrfWhitelist::from_value(Some(&json!([input])));
            assert!(list.nets.is_empty() && list.check().is_err(), "{input}");
        }
    }

    #[test]
    fn a_list_keeps_valid_entries_and_reports_each_bad_one() {
        let list = SsrfWhitelist::from_value(Some(&json!(["127.0.0.1", "nope", 5, "10.0.0.0/8"])));
        assert_eq!(list.nets.len(), 2);
        assert_eq!(list.errors.len(), 2);
        assert!(matches!(&list.errors[1], ConfigError::InvalidCidr { entry, .. } if entry == "#2"));
        assert_eq!(list.check().unwrap_err(), list.errors[0]);
        assert!(list.contains("10.9.9.9".parse().unwrap()));
        assert!(!list.contains("11.0.0.1".parse().unwrap()));
    }

    #[test]
    fn absent_null_and_wrong_shape() {
        assert_eq!(SsrfWhitelist::from_value(None), SsrfWhitelist::default());
        assert_eq!(
            SsrfWhitelist::from_value(Some(&Value::Null)),
            SsrfWhitelist::default()
        );
        let list = SsrfWhitelist::from_value(Some(&json!("127.0.0.1")));
        assert_eq!(
            list.errors,
            [ConfigError::WhitelistShape { found: "string" }]
        );
        assert!(list.check().is_err());
        assert_eq!(
            SsrfWhitelist::from_value(Some(&json!([]))).check(),
            Ok(&[][..])
        );
    }
}
