//! The blocked address set of the SSRF guard, reviewed against the IANA IPv4 and IPv6
//! Special-Purpose Address Registries (RFC 6890) and every form in which an IPv6 address can
//! carry an IPv4 one. The user guide's table "What the SSRF guard blocks" (`docs/src/remote.md`)
//! mirrors [`BLOCKED`] row by row, with the reason for each decision.
//!
//! Rule of thumb: a range is blocked unless the registry marks it globally reachable *and* it
//! could plausibly host an MCP server. Ranges the registry marks global but which are anycast
//! infrastructure (AS112, AMT, PCP/TURN anycast) are allowed: they are public addresses.
//!
//! Embedded IPv4 (checked after the table, so `::ffff:10.0.0.1` is refused like `10.0.0.1`):
//!
//! | form | prefix | IPv4 at |
//! |---|---|---|
//! | IPv4-mapped | `::ffff:0:0/96` | last 32 bits (unmapped before anything else, whitelist included) |
//! | NAT64 well-known prefix | `64:ff9b::/96` | last 32 bits |
//! | 6to4 | `2002::/16` | bits 16..48 |
//!
//! Forms blocked whole instead of decoded: IPv4-compatible `::/96` (deprecated), IPv4-translated
//! `::ffff:0:0:0/96`, local-use NAT64 `64:ff9b:1::/48` (its IPv4 may sit at several offsets),
//! Teredo `2001::/32` (inside `2001::/23`; its client IPv4 is obfuscated).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;

use ipnet::IpNet;

/// Every blocked network and its registry name (`source`: IANA special-purpose registry unless
/// noted).
pub const BLOCKED: &[(&str, &str)] = &[
    // IPv4
    (
        "0.0.0.0/8",
        "\"this network\" (RFC 791); 0.0.0.0 reaches the local host",
    ),
    ("10.0.0.0/8", "private-use (RFC 1918)"),
    (
        "100.64.0.0/10",
        "shared address space, carrier-grade NAT (RFC 6598)",
    ),
    ("127.0.0.0/8", "loopback (RFC 1122)"),
    (
        "169.254.0.0/16",
        "link-local, cloud metadata endpoints (RFC 3927)",
    ),
    ("172.16.0.0/12", "private-use (RFC 1918)"),
    (
        "192.0.0.0/24",
        "IETF protocol assignments: DS-Lite, NAT64 discovery (RFC 6890)",
    ),
    ("192.0.2.0/24", "documentation TEST-NET-1 (RFC 5737)"),
    ("192.88.99.0/24", "deprecated 6to4 relay anycast (RFC 7526)"),
    ("192.168.0.0/16", "private-use (RFC 1918)"),
    ("198.18.0.0/15", "benchmarking (RFC 2544)"),
    ("198.51.100.0/24", "documentation TEST-NET-2 (RFC 5737)"),
    ("203.0.113.0/24", "documentation TEST-NET-3 (RFC 5737)"),
    (
        "224.0.0.0/4",
        "multicast (IANA multicast registry, RFC 5771)",
    ),
    (
        "240.0.0.0/4",
        "reserved, and 255.255.255.255 limited broadcast (RFC 1112, RFC 919)",
    ),
    // IPv6
    (
        "::/96",
        "unspecified ::, loopback ::1, deprecated IPv4-compatible (RFC 4291)",
    ),
    ("::ffff:0:0:0/96", "IPv4-translated, SIIT (RFC 2765)"),
    (
        "64:ff9b:1::/48",
        "local-use IPv4/IPv6 translation (RFC 8215)",
    ),
    ("100::/64", "discard-only (RFC 6666)"),
    ("100:0:0:1::/64", "dummy prefix (RFC 9780)"),
    (
        "2001::/23",
        "IETF protocol assignments: Teredo 2001::/32, benchmarking, ORCHID (RFC 2928)",
    ),
    ("2001:db8::/32", "documentation (RFC 3849)"),
    ("3fff::/20", "documentation (RFC 9637)"),
    ("5f00::/16", "segment routing SIDs (RFC 9602)"),
    ("fc00::/7", "unique-local (RFC 4193)"),
    ("fe80::/10", "link-local (RFC 4291)"),
    (
        "fec0::/10",
        "deprecated site-local (RFC 3879), still routed inside some networks",
    ),
    ("ff00::/8", "multicast (RFC 4291)"),
];

/// [`BLOCKED`], parsed once.
static NETS: LazyLock<Vec<IpNet>> = LazyLock::new(|| {
    BLOCKED
        .iter()
        // The table is constant; `every_table_row_parses` proves each row.
        .filter_map(|(cidr, _)| cidr.parse().ok())
        .collect()
});

/// `::ffff:a.b.c.d` → `a.b.c.d`; other addresses unchanged.
pub fn unmap(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Whether an (already unmapped) address is in a blocked range, or is a NAT64 / 6to4 address
/// whose embedded IPv4 is.
pub fn is_blocked(ip: IpAddr) -> bool {
    if in_table(ip) {
        return true;
    }
    match ip {
        IpAddr::V6(v6) => embedded_v4(v6).is_some_and(|v4| in_table(IpAddr::V4(v4))),
        IpAddr::V4(_) => false,
    }
}

fn in_table(ip: IpAddr) -> bool {
    NETS.iter().any(|n| n.contains(&ip))
}

/// The IPv4 inside a NAT64 (`64:ff9b::/96`, last 32 bits) or 6to4 (`2002::/16`, bits 16..48)
/// address.
fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let o = v6.octets();
    if v6.segments()[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(Ipv4Addr::new(o[12], o[13], o[14], o[15]));
    }
    if v6.segments()[0] == 0x2002 {
        return Some(Ipv4Addr::new(o[2], o[3], o[4], o[5]));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_row_parses_with_no_host_bits() {
        for (cidr, why) in BLOCKED {
            let net: IpNet = cidr.parse().unwrap_or_else(|e| panic!("{cidr}: {e}"));
            assert_eq!(net, net.trunc(), "{cidr}");
            assert!(!why.is_empty());
        }
        assert_eq!(NETS.len(), BLOCKED.len());
    }

    /// One row per registry entry (first and last address where it matters), plus the
    /// embedded forms: `(address, blocked)`.
    #[test]
    fn the_iana_special_purpose_registries_row_by_row() {
        let cases: &[(&str, bool)] = &[
            // IPv4 special-purpose registry
            ("0.0.0.0", true),
            ("0.255.255.255", true),
            ("10.0.0.0", true),
            ("10.255.255.255", true),
            ("100.64.0.0", true),
            ("100.127.255.255", true),
            ("100.63.255.255", false),
            ("100.128.0.0", false),
            ("127.0.0.1", true),
            ("127.255.255.254", true),
            ("169.254.169.254", true),
            ("172.16.0.1", true),
            ("172.31.255.255", true),
            ("172.32.0.1", false),
            ("172.15.255.255", false),
            ("192.0.0.8", true),
            ("192.0.0.170", true),
            ("192.0.2.1", true),
            ("192.31.196.1", false), // AS112-v4: global
            ("192.52.193.1", false), // AMT: global
            ("192.88.99.1", true),
            ("192.168.0.1", true),
            ("192.175.48.1", false), // AS112 direct delegation: global
            ("198.18.0.1", true),
            ("198.19.255.255", true),
            ("198.20.0.1", false),
            ("198.51.100.1", true),
            ("203.0.113.1", true),
            ("224.0.0.1", true),
            ("239.255.255.250", true),
            ("240.0.0.1", true),
            ("255.255.255.255", true),
            ("1.1.1.1", false),
            ("8.8.8.8", false),
            ("11.0.0.1", false),
            // IPv6 special-purpose registry
            ("::", true),
            ("::1", true),
            ("::7f00:1", true),        // IPv4-compatible ::127.0.0.1
            ("::808:808", true),       // IPv4-compatible, deprecated whatever it embeds
            ("::ffff:0:7f00:1", true), // IPv4-translated
            ("64:ff9b:1::7f00:1", true),
            ("64:ff9b:1::808:808", true),
            ("100::1", true),
            ("100:0:0:1::1", true),
            ("2001::1", true),                              // Teredo
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", true), // Teredo
            ("2001:2::1", true),
            ("2001:db8::1", true),
            ("2001:200::1", false), // first public allocation after 2001::/23
            ("2620:4f:8000::1", false), // AS112 direct delegation: global
            ("3fff::1", true),
            ("3fff:fff::1", true),
            ("5f00::1", true),
            ("fc00::1", true),
            ("fdff:ffff::1", true),
            ("fe80::1", true),
            ("febf::1", true),
            ("fec0::1", true),
            ("ff02::1", true),
            ("2606:4700::1111", false),
            ("2a00:1450::1", false),
            // embedded IPv4: mapped (unmapped first), NAT64, 6to4
            ("::ffff:127.0.0.1", true),
            ("::ffff:10.0.0.1", true),
            ("::ffff:169.254.169.254", true),
            ("::ffff:8.8.8.8", false),
            ("64:ff9b::7f00:1", true),
            ("64:ff9b::a9fe:a9fe", true),
            ("64:ff9b::c0a8:101", true),
            ("64:ff9b::808:808", false),
            ("2002:7f00:1::", true),
            ("2002:a00:1::1", true),
            ("2002:c0a8:101::1", true),
            ("2002:808:808::", false),
        ];
        for (text, want) in cases {
            let ip: IpAddr = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(is_blocked(unmap(ip)), *want, "{text}");
        }
    }
}
