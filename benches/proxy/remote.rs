//! Item 8: remote servers. server-everything over streamable HTTP and over legacy HTTP+SSE on
//! loopback, called directly (a raw HTTP client, [`super::http`]) and through one companion
//! serving both (its socket, and `mcp-companion bridge`): latency, calls/s at 1, 8 and 64 in
//! flight, and the companion's RSS. The direct client speaks the companion's protocol version
//! (see [`super::http`]); over streamable HTTP the row also shows it at 2025-06-18, where
//! server-everything sends no priming event and so does not wait for a timer tick.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::json;
use tokio::process::{Child, Command};

use super::http::{HttpConn, Kind};
use super::peers::{free_port, wait_port};
use super::procs::{Companion, companion_bin, everything_js};
use super::report::{Row, lat, lat_str, median, mib, us};
use super::rpc::Conn;
use super::{ECHO, Opts};

/// server-everything in `mode` (`streamableHttp`, `sse`) on a free loopback port.
async fn everything(js: &Path, mode: &str) -> Result<(Child, u16)> {
    let port = free_port()?;
    let preload = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/peers/loopback-listen.cjs"
    );
    let mut child = Command::new("node")
        .arg(js)
        .arg(mode)
        .env("PORT", port.to_string())
        .env("NODE_OPTIONS", format!("--require {preload}"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .context("spawn node")?;
    wait_port(port, &mut child)
        .await
        .with_context(|| format!("server-everything {mode}"))?;
    Ok((child, port))
}

/// The three ways to one remote server.
struct Ways {
    name: &'static str,
    direct: HttpConn,
    /// Streamable HTTP: the direct client at 2025-06-18.
    old: Option<HttpConn>,
    socket: Conn,
    bridge: Conn,
    tool: String,
    samples: [Vec<f64>; 4],
}

pub async fn run(o: &Opts, rows: &mut Vec<Row>) -> Result<()> {
    let Some(js) = everything_js() else {
        println!("skip the remote rows: node or server-everything is missing");
        return Ok(());
    };
    let (mut http_server, http_port) = everything(&js, "streamableHttp").await?;
    let (mut sse_server, sse_port) = everything(&js, "sse").await?;
    let (http_url, sse_url) = (
        format!("http://127.0.0.1:{http_port}/mcp"),
        format!("http://127.0.0.1:{sse_port}/sse"),
    );
    let config = json!({
        "ssrfWhitelist": ["127.0.0.1/32"],
        "mcpServers": { "http": { "url": http_url }, "sse": { "url": sse_url } },
    });
    let (comp, _) = Companion::start_config(config, &[]).await?;
    let bin = companion_bin();
    let bridge_args = [
        "--socket".to_owned(),
        comp.socket.to_string_lossy().into_owned(),
        "bridge".to_owned(),
    ];
    let mut ways = Vec::new();
    for (name, url, kind) in [
        ("streamable HTTP", &http_url, Kind::Streamable),
        ("legacy SSE", &sse_url, Kind::Sse),
    ] {
        let server = if matches!(kind, Kind::Streamable) {
            "http"
        } else {
            "sse"
        };
        let mut socket = Conn::unix(&comp.socket).await?;
        socket.initialize().await?;
        let mut bridge = Conn::spawn(&bin, &bridge_args)?;
        bridge.initialize().await?;
        let old = match kind {
            Kind::Streamable => Some(HttpConn::open(url, kind, Some("2025-06-18")).await?),
            Kind::Sse => None,
        };
        ways.push(Ways {
            name,
            direct: HttpConn::open(url, kind, None)
                .await
                .with_context(|| name)?,
            old,
            socket,
            bridge,
            tool: format!("mcp_{server}_echo"),
            samples: Default::default(),
        });
    }
    let n = (o.n / 4).max(50);
    for w in &mut ways {
        w.direct.latencies("echo", ECHO, 50).await?;
        w.socket.latencies(&w.tool, ECHO, 50).await?;
        w.bridge.latencies(&w.tool, ECHO, 50).await?;
        if let Some(old) = &w.old {
            old.latencies("echo", ECHO, 50).await?;
        }
    }
    for _ in 0..o.rounds {
        for w in &mut ways {
            let d = w.direct.latencies("echo", ECHO, n).await?;
            let s = w.socket.latencies(&w.tool, ECHO, n).await?;
            let b = w.bridge.latencies(&w.tool, ECHO, n).await?;
            w.samples[0].extend(d);
            w.samples[1].extend(s);
            w.samples[2].extend(b);
            if let Some(old) = &w.old {
                w.samples[3].extend(old.latencies("echo", ECHO, n).await?);
            }
        }
    }
    for w in &mut ways {
        let [d, s, b, old] = &mut w.samples;
        let old = if old.is_empty() {
            String::new()
        } else {
            format!("; direct at 2025-06-18: {}", lat_str(lat(old)))
        };
        let (d, s, b) = (lat(d), lat(s), lat(b));
        rows.push(
            Row::new(
                "8",
                format!(
                    "echo, server-everything {}: direct HTTP vs companion socket",
                    w.name
                ),
            )
            .base(lat_str(d))
            .ours(lat_str(s))
            .ratio(s.median / d.median)
            .diff(format!(
                "+{} (bridge: {}, +{}{old})",
                us(s.median - d.median),
                lat_str(b),
                us(b.median - d.median)
            ))
            .target("≤ +10 %", s.median / d.median <= 1.1),
        );
    }
    for k in [1usize, 8, 64] {
        let total = if k == 1 { 500 } else { 2000 };
        for w in &mut ways {
            let mut v: [Vec<f64>; 3] = Default::default();
            for _ in 0..o.rounds {
                v[0].push(w.direct.throughput("echo", ECHO, k, total).await?);
                v[1].push(w.socket.throughput(&w.tool, ECHO, k, total).await?);
                v[2].push(w.bridge.throughput(&w.tool, ECHO, k, total).await?);
            }
            let [d, s, b] = v.map(median);
            rows.push(
                Row::new(
                    "8",
                    format!("echo calls/s, server-everything {}, {k} in flight", w.name),
                )
                .base(format!("{d:.0}/s"))
                .ours(format!("{s:.0}/s"))
                .ratio(s / d)
                .diff(format!("bridge: {b:.0}/s ({:.2}× socket)", b / s)),
            );
        }
    }
    let (rss, hwm) = comp.rss_kib();
    rows.push(
        Row::new(
            "8",
            "companion RSS serving the two remote servers, after the remote rows",
        )
        .ours(format!("{} (peak {})", mib(rss), mib(hwm))),
    );
    for w in ways {
        w.socket.close().await;
        w.bridge.close().await;
    }
    comp.stop().await;
    let _ = http_server.kill().await;
    let _ = sse_server.kill().await;
    Ok(())
}
