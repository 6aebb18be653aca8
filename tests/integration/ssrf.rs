//! Proves the SSRF guard on remote servers: loopback refused without the whitelist (naming the
//! address and the entry to add) with no TCP connection made, the refused URL forms (metadata,
//! mapped, unspecified, private, CGNAT, link-local, NAT64, other schemes), redirects re-checked
//! per hop and never sent when refused, invalid whitelist entries, and env proxies.

use std::sync::atomic::Ordering;

use serde_json::json;

use crate::common::Companion;
use crate::remote_fixture::{accept_counter, mcp_server, redirector};

#[tokio::test]
async fn without_the_whitelist_loopback_is_refused_before_any_connection() {
    let (port, accepts, _task) = accept_counter("127.0.0.1:0").await;
    let c = Companion::start(json!({ "mcpServers": {
        "sse": { "url": format!("http://127.0.0.1:{port}/sse") },
        "http": { "url": format!("http://127.0.0.1:{port}/mcp") },
        "byname": { "url": format!("http://localhost:{port}/mcp") },
    } }));
    let servers = c.settled().await;
    for s in &servers {
        let err = s.last_error.clone().unwrap_or_default();
        assert_eq!(s.state.as_str(), "failed", "{s:?}");
        assert!(err.contains("127.0.0.1") || err.contains("::1"), "{err}");
        assert!(
            err.contains("127.0.0.1/32") || err.contains("::1/128"),
            "{err}"
        );
    }
    assert_eq!(
        accepts.load(Ordering::SeqCst),
        0,
        "a TCP connection was opened"
    );
}

#[tokio::test]
async fn private_metadata_mapped_and_nat64_urls_and_other_schemes_are_refused() {
    let urls = [
        "http://169.254.169.254/",
        "http://[::ffff:127.0.0.1]/",
        "http://0.0.0.0/",
        "http://10.1.2.3/",
        "http://100.64.0.1/",
        "http://[fe80::1]/",
        "http://[64:ff9b::7f00:1]/",
    ];
    let mut servers = serde_json::Map::new();
    for (i, url) in urls.iter().enumerate() {
        servers.insert(format!("s{i}"), json!({ "url": url }));
    }
    servers.insert(
        "ftp".into(),
        json!({ "type": "streamableHttp", "url": "ftp://example.com/" }),
    );
    let c = Companion::start(json!({ "mcpServers": servers }));
    for s in c.settled().await {
        let err = s.last_error.clone().unwrap_or_default();
        assert_eq!(s.state.as_str(), "failed", "{s:?}");
        if s.name == "ftp" {
            assert!(err.contains("scheme \"ftp\""), "{err}");
        } else {
            assert!(err.contains("blocked"), "{}: {err}", s.name);
        }
    }
}

#[tokio::test]
async fn a_redirect_to_a_non_whitelisted_address_is_refused_and_never_sent() {
    let (v6_port, accepts, _task) = accept_counter("[::1]:0").await;
    let hop = redirector(format!("http://[::1]:{v6_port}/mcp")).await;
    let target = mcp_server().await;
    let good_hop = redirector(format!("http://127.0.0.1:{}/mcp", target.port)).await;
    let c = Companion::start(json!({
        "mcpServers": {
            "refused": { "url": format!("http://127.0.0.1:{}/mcp", hop.port) },
            "followed": { "url": format!("http://127.0.0.1:{}/mcp", good_hop.port) },
        },
        "ssrfWhitelist": ["127.0.0.1/32"],
    }));
    let servers = c.settled().await;
    let by = |n: &str| servers.iter().find(|s| s.name == n).unwrap().clone();
    let refused = by("refused");
    assert_eq!(refused.state.as_str(), "failed", "{refused:?}");
    let err = refused.last_error.unwrap_or_default();
    assert!(err.contains("::1") && err.contains("::1/128"), "{err}");
    assert_eq!(
        accepts.load(Ordering::SeqCst),
        0,
        "the refused hop was sent"
    );
    assert!(
        !hop.shared.headers.lock().unwrap().is_empty(),
        "first hop never reached"
    );
    assert_eq!(
        by("followed").state.as_str(),
        "running",
        "{:?}\n{}",
        by("followed"),
        c.log()
    );
}

#[tokio::test]
async fn an_invalid_whitelist_entry_fails_remote_servers_only() {
    let (port, accepts, _task) = accept_counter("127.0.0.1:0").await;
    let c = Companion::start(json!({
        "mcpServers": {
            "remote": { "url": format!("http://127.0.0.1:{port}/mcp") },
            "local": crate::common::demo(&[]),
        },
        "ssrfWhitelist": ["127.0.0.1/32", "not-a-cidr"],
    }));
    let servers = c.settled().await;
    let by = |n: &str| servers.iter().find(|s| s.name == n).unwrap().clone();
    let remote = by("remote");
    assert_eq!(remote.state.as_str(), "failed");
    assert!(
        remote
            .last_error
            .as_deref()
            .unwrap_or("")
            .contains("\"not-a-cidr\""),
        "{remote:?}"
    );
    assert_eq!(by("local").state.as_str(), "running");
    assert_eq!(accepts.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn http_proxy_from_the_environment_is_used_and_targets_are_still_checked() {
    let (proxy_port, proxied, _task) = accept_counter("127.0.0.1:0").await;
    let proxy = format!("http://127.0.0.1:{proxy_port}");
    let c = Companion::start_with_env(
        json!({
            "mcpServers": {
                "viaproxy": { "url": "http://127.0.0.1:9/mcp", "connectTimeout": 2 },
                "blocked": { "url": "http://10.1.2.3/mcp" },
            },
            "ssrfWhitelist": ["127.0.0.1/32"],
        }),
        &[("HTTP_PROXY", Some(proxy.as_str())), ("NO_PROXY", Some(""))],
    );
    let servers = c.settled().await;
    let by = |n: &str| servers.iter().find(|s| s.name == n).unwrap().clone();
    // The whitelisted target went to the proxy (which never answers, so connectTimeout).
    // (A timeout is transient: the server is `backoff`, waiting to retry, or `failed`.)
    let via = by("viaproxy").state.as_str();
    assert!(via == "backoff" || via == "failed", "{via}");
    assert!(
        proxied.load(Ordering::SeqCst) >= 1,
        "the proxy was not used"
    );
    let before = proxied.load(Ordering::SeqCst);
    // The blocked target was refused locally, the proxy never asked.
    let blocked = by("blocked");
    assert_eq!(blocked.state.as_str(), "failed");
    assert!(
        blocked
            .last_error
            .as_deref()
            .unwrap_or("")
            .contains("10.1.2.3/32"),
        "{blocked:?}"
    );
    assert_eq!(proxied.load(Ordering::SeqCst), before);
}

/// A host name that does not resolve is no SSRF refusal: it is said as "cannot reach …: cannot
/// resolve host …", never "refused", and the server is tried again (not `failed` for good).
#[tokio::test]
async fn a_name_that_does_not_resolve_is_not_called_a_refusal_and_is_tried_again() {
    let c = Companion::start(json!({ "mcpServers": {
        "gone": { "url": "http://no-such-host.invalid/mcp" },
    } }));
    let s = c.server("gone").await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut s = s;
    while s.last_error.is_none() {
        assert!(std::time::Instant::now() < deadline, "{s:?}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        s = c.server("gone").await;
    }
    let err = s.last_error.clone().unwrap_or_default();
    assert!(
        err.contains("cannot reach") && err.contains("cannot resolve host no-such-host.invalid"),
        "{err}"
    );
    assert!(!err.contains("refused"), "{err}");
    assert_ne!(s.state.as_str(), "failed", "{s:?}");
}
