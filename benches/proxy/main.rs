//! `cargo bench --bench proxy` (or `benches/run.sh`): the companion's proxy overhead,
//! throughput, payloads, fan-out, memory and catalog size, each next to a baseline measured in
//! the same run, printed as one Markdown table of ratios; item 8 is remote servers (`remote`). Options: `--n N` calls per latency
//! round (default 2000), `--rounds R` (default 3), `--quick` (n 300, rounds 2), `--remote` (item 8
//! only), `--calls` (items 1, 2, 3 and 7 only). `MCP_BENCH_ACTIVITY=off` runs the companions with
//! the activity log off.

#[cfg(unix)]
mod http;
#[cfg(unix)]
mod peers;
#[cfg(unix)]
mod procs;
#[cfg(unix)]
mod remote;
#[cfg(unix)]
mod report;
#[cfg(unix)]
mod rpc;
#[cfg(unix)]
mod scale;

#[cfg(unix)]
use anyhow::{Context, Result};
#[cfg(unix)]
use serde_json::{Map, json};

#[cfg(unix)]
use procs::{Companion, companion_bin, demo_args, demo_entry, everything_js};
#[cfg(unix)]
use report::{Lat, Row, lat, lat_str, median, mib, table, us};
#[cfg(unix)]
use rpc::Conn;

#[cfg(unix)]
const ECHO: &str = r#"{"message":"hi"}"#;

/// The companion's fast-path switch (`src/upstream/lane.rs`).
#[cfg(unix)]
const FAST_PATH_ENV: &str = "MCP_COMPANION_FAST_PATH";

#[cfg(unix)]
pub struct Opts {
    pub n: usize,
    pub rounds: usize,
    /// Only item 8 (remote servers).
    pub remote_only: bool,
    /// Only items 1, 2, 3 and 7 (calls on one companion).
    pub calls_only: bool,
}

#[cfg(unix)]
fn opts() -> Opts {
    let mut o = Opts {
        n: 2000,
        rounds: 3,
        remote_only: false,
        calls_only: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--n" => o.n = args.next().and_then(|v| v.parse().ok()).unwrap_or(o.n),
            "--rounds" => o.rounds = args.next().and_then(|v| v.parse().ok()).unwrap_or(o.rounds),
            "--quick" => (o.n, o.rounds) = (300, 2),
            "--remote" => o.remote_only = true,
            "--calls" => o.calls_only = true,
            _ => {} // --bench, from cargo bench
        }
    }
    o
}

/// One measured path: a connection and the name of its echo tool.
#[cfg(unix)]
struct Path {
    label: String,
    conn: Conn,
    tool: String,
    samples: Vec<f64>,
}

#[cfg(unix)]
async fn path(label: &str, mut conn: Conn, tool: &str) -> Result<Path> {
    conn.initialize().await.with_context(|| label.to_owned())?;
    Ok(Path {
        label: label.to_owned(),
        conn,
        tool: tool.to_owned(),
        samples: Vec::new(),
    })
}

#[cfg(unix)]
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    // `cargo test --all-targets` also runs bench targets, without `--bench`: measure nothing then.
    if !std::env::args().any(|a| a == "--bench") {
        println!("proxy bench: not run (use `cargo bench --bench proxy` or benches/run.sh)");
        return Ok(());
    }
    let o = opts();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "# mcp-companion proxy bench: {} cpus, load {}, n={} rounds={}, binary {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
        o.n,
        o.rounds,
        companion_bin()
    );
    let mut rows = Vec::new();
    if o.remote_only {
        remote::run(&o, &mut rows).await?;
        println!("\n{}", table(&rows));
        return Ok(());
    }
    let raw_tools = calls(&o, &mut rows).await?;
    if o.calls_only {
        println!("\n{}", table(&rows));
        return Ok(());
    }
    remote::run(&o, &mut rows).await?;
    scale::run(&o, raw_tools, &mut rows).await?;
    println!("\n{}", table(&rows));
    Ok(())
}

/// Items 1, 2, 3 and 7 on one companion serving the test server (and server-everything).
/// Returns the test server's raw tool count.
#[cfg(unix)]
async fn calls(o: &Opts, rows: &mut Vec<Row>) -> Result<usize> {
    let bin = companion_bin();
    let everything = everything_js();
    let mut servers = Map::new();
    servers.insert("demo".into(), demo_entry(0, 0));
    if let Some(js) = &everything {
        servers.insert(
            "everything".into(),
            json!({"command": "node", "args": [js, "stdio"]}),
        );
    } else {
        println!("skip server-everything: node or the peers dir is missing (tests/peers/setup.sh)");
    }
    // The same config twice: the fast path switched on, and the default rmcp session path.
    let (comp, _) = Companion::start_env(servers.clone(), &[(FAST_PATH_ENV, "1")]).await?;
    let (slow, _) = Companion::start_env(servers, &[(FAST_PATH_ENV, "0")]).await?;
    let mut paths = vec![
        path("demo direct", Conn::spawn(&bin, &demo_args(0, 0))?, "echo").await?,
        path(
            "demo socket",
            Conn::unix(&comp.socket).await?,
            "mcp_demo_echo",
        )
        .await?,
        path(
            "demo socket slow",
            Conn::unix(&slow.socket).await?,
            "mcp_demo_echo",
        )
        .await?,
    ];
    let demo_bridge = [
        "--socket".to_owned(),
        comp.socket.to_string_lossy().into_owned(),
        "bridge".to_owned(),
    ];
    paths.push(
        path(
            "demo bridge",
            Conn::spawn(&bin, &demo_bridge)?,
            "mcp_demo_echo",
        )
        .await?,
    );
    let raw_tools = paths[0].conn.tool_names().await?.len();
    let relay = match peers::byte_relay(&bin, &demo_args(0, 0)).await {
        Ok((relay, conn, dir)) => {
            paths.push(path("demo via socat", conn, "echo").await?);
            Some((relay, dir))
        }
        Err(e) => {
            println!("skip the byte-relay floor (socat): {e:#}");
            None
        }
    };
    let mut found = Vec::new();
    if let Some(js) = &everything {
        let ev = vec![js.to_string_lossy().into_owned(), "stdio".to_owned()];
        paths.push(path("everything direct", Conn::spawn("node", &ev)?, "echo").await?);
        paths.push(
            path(
                "everything socket",
                Conn::unix(&comp.socket).await?,
                "mcp_everything_echo",
            )
            .await?,
        );
        let bridge = [
            "--socket".to_owned(),
            comp.socket.to_string_lossy().into_owned(),
            "bridge".to_owned(),
        ];
        paths.push(
            path(
                "everything bridge",
                Conn::spawn(&bin, &bridge)?,
                "mcp_everything_echo",
            )
            .await?,
        );
        match peers::mcp_proxy(js).await {
            Ok(p) => found.push(p),
            Err(e) => println!("skip peer mcp-proxy (PyPI): {e:#}"),
        }
        match peers::supergateway(js).await {
            Ok(p) => found.push(p),
            Err(e) => println!("skip peer supergateway (npm): {e:#}"),
        }
        match peers::mcp_hub(js).await {
            Ok(p) => found.push(p),
            Err(e) => println!("skip peer mcp-hub (npm): {e:#}"),
        }
        println!(
            "skip peer @1mcp/agent (npm): {}",
            peers::one_mcp_skip_reason()
        );
    }
    let mut peer_servers = Vec::new();
    for peers::Peer {
        name,
        conn,
        tool,
        server,
        dir,
    } in found
    {
        paths.push(path_ready(&format!("everything via {name}"), conn, &tool));
        peer_servers.push((name, server, dir));
    }
    // Warm up, then interleave rounds so background load hits every path alike.
    for p in &mut paths {
        p.conn.latencies(&p.tool, ECHO, 200).await?;
    }
    for _ in 0..o.rounds {
        for p in &mut paths {
            let s = p
                .conn
                .latencies(&p.tool, ECHO, o.n)
                .await
                .with_context(|| p.label.clone())?;
            p.samples.extend(s);
        }
    }
    let stats: Vec<(String, Lat)> = paths
        .iter_mut()
        .map(|p| (p.label.clone(), lat(&mut p.samples)))
        .collect();
    let get = |l: &str| stats.iter().find(|(k, _)| k == l).map(|(_, v)| *v);
    let (d, s) = (
        get("demo direct").context("demo")?,
        get("demo socket").context("demo")?,
    );
    let slow_lat = get("demo socket slow").context("demo")?;
    let added = s.median - d.median;
    let floor = get("demo via socat");
    if let Some(f) = floor {
        rows.push(
            Row::new(
                "1",
                "echo, rmcp test server: direct stdio vs a byte relay (socat: Unix socket → the server's stdio, parses nothing): the floor of any proxy here",
            )
            .base(lat_str(d))
            .ours(lat_str(f))
            .ratio(f.median / d.median)
            .diff(format!("+{}", us(f.median - d.median))),
        );
    }
    rows.push(
        Row::new(
            "1",
            "echo, rmcp test server: direct stdio vs socket, fast path off (rmcp session path)",
        )
        .base(lat_str(d))
        .ours(lat_str(slow_lat))
        .ratio(slow_lat.median / d.median)
        .diff(format!("+{}", us(slow_lat.median - d.median))),
    );
    rows.push(
        Row::new(
            "1",
            "echo, rmcp test server: direct stdio vs socket (median / p99)",
        )
        .base(lat_str(d))
        .ours(lat_str(s))
        .ratio(s.median / d.median)
        .diff(match floor {
            Some(f) => format!(
                "+{} (+{} over the byte relay)",
                us(added),
                us(s.median - f.median)
            ),
            None => format!("+{}", us(added)),
        })
        .target(
            "≤ 50 µs added, ≤ 1.5×",
            added <= 50.0 && s.median / d.median <= 1.5,
        ),
    );
    if let Some(b) = get("demo bridge") {
        let over = b.median - s.median;
        rows.push(
            Row::new(
                "1",
                "echo, rmcp test server: socket vs client → `mcp-companion bridge` → companion",
            )
            .base(lat_str(s))
            .ours(lat_str(b))
            .ratio(b.median / s.median)
            .diff(format!(
                "+{} over the socket, +{} over direct",
                us(over),
                us(b.median - d.median)
            ))
            .target("≤ +10 µs over the socket", over <= 10.0),
        );
    }
    if let (Some(d), Some(s), Some(b)) = (
        get("everything direct"),
        get("everything socket"),
        get("everything bridge"),
    ) {
        rows.push(
            Row::new("1", "echo, server-everything: direct stdio vs socket")
                .base(lat_str(d))
                .ours(lat_str(s))
                .ratio(s.median / d.median)
                .diff(format!("+{}", us(s.median - d.median))),
        );
        let ours_added = b.median - d.median;
        rows.push(
            Row::new(
                "7",
                "echo, server-everything: direct vs client → `mcp-companion bridge` → companion",
            )
            .base(lat_str(d))
            .ours(lat_str(b))
            .ratio(b.median / d.median)
            .diff(format!("+{}", us(ours_added))),
        );
        let (ours_rss, _) = comp.rss_kib();
        for (label, l) in stats
            .iter()
            .filter(|(k, _)| k.starts_with("everything via "))
        {
            let name = &label[15..];
            let peer_added = l.median - d.median;
            let peer_rss = peer_servers
                .iter()
                .find(|(n, _, _)| n == name)
                .and_then(|(_, server, _)| server.id())
                .map_or(0, |pid| procs::rss_kib(pid).0);
            rows.push(
                Row::new(
                    "7",
                    format!(
                        "peer: client → {name} (its stdio bridge → its server) vs ours via bridge"
                    ),
                )
                .base(format!("peer {}; RSS {}", lat_str(*l), mib(peer_rss)))
                .ours(format!("{}; RSS {}", lat_str(b), mib(ours_rss)))
                .ratio(b.median / l.median)
                .diff(format!(
                    "peer +{}, ours +{} (bridge), +{} (socket)",
                    us(peer_added),
                    us(ours_added),
                    us(s.median - d.median)
                ))
                .target("ours faster", b.median < l.median),
            );
        }
    }
    throughput(o, &mut paths, rows).await?;
    payload(&comp, &slow, &mut paths, rows).await?;
    for p in paths {
        p.conn.close().await;
    }
    for (_, mut server, _dir) in peer_servers {
        let _ = server.kill().await;
    }
    if let Some((mut relay, _dir)) = relay {
        let _ = relay.kill().await;
    }
    comp.stop().await;
    slow.stop().await;
    Ok(raw_tools)
}

#[cfg(unix)]
fn path_ready(label: &str, conn: Conn, tool: &str) -> Path {
    Path {
        label: label.to_owned(),
        conn,
        tool: tool.to_owned(),
        samples: Vec::new(),
    }
}

/// Item 2: calls/s with 1, 8 and 64 in flight on one connection, direct vs socket.
#[cfg(unix)]
async fn throughput(o: &Opts, paths: &mut [Path], rows: &mut Vec<Row>) -> Result<()> {
    // direct, fast path, fast path off, and the byte relay when it runs.
    let mut measured = vec![0, 1, 2];
    let bridge = paths.iter().position(|p| p.label == "demo bridge");
    measured.extend(bridge);
    measured.extend(paths.iter().position(|p| p.label == "demo via socat"));
    for k in [1usize, 8, 64] {
        let total = if k == 1 { 2000 } else { 10_000 };
        let mut samples = vec![Vec::new(); measured.len()];
        for _ in 0..o.rounds {
            for (&i, out) in measured.iter().zip(&mut samples) {
                let p = &mut paths[i];
                out.push(p.conn.throughput(&p.tool, ECHO, k, total).await?);
            }
        }
        let mut medians = samples.into_iter().map(median);
        let (d, s, sl) = (
            medians.next().unwrap_or_default(),
            medians.next().unwrap_or_default(),
            medians.next().unwrap_or_default(),
        );
        let mut diff = format!("fast path off: {sl:.0}/s");
        let mut bridge_ratio = None;
        if bridge.is_some() {
            let b = medians.next().unwrap_or_default();
            bridge_ratio = Some(b / s);
            diff.push_str(&format!("; bridge: {b:.0}/s ({:.2}× socket)", b / s));
        }
        if let Some(f) = medians.next() {
            diff.push_str(&format!("; byte relay (socat): {f:.0}/s"));
        }
        let mut row = Row::new("2", format!("echo calls/s, {k} in flight (one connection)"))
            .base(format!("{d:.0}/s"))
            .ours(format!("{s:.0}/s"))
            .ratio(s / d)
            .diff(diff);
        if k == 64 {
            row = row.target("≥ 40 000/s", s >= 40_000.0);
        }
        rows.push(row);
        if k == 64
            && let Some(r) = bridge_ratio
        {
            rows.push(
                Row::new("2", "echo calls/s, 64 in flight: bridge vs socket")
                    .ratio(r)
                    .target("bridge ≥ 90 % of the socket", r >= 0.9),
            );
        }
    }
    Ok(())
}

/// Item 3: 1 MiB and 8 MiB `big` results, direct vs socket (fast path, then fast path off), and
/// each companion's peak RSS over its own calls.
#[cfg(unix)]
async fn payload(
    comp: &Companion,
    slow: &Companion,
    paths: &mut [Path],
    rows: &mut Vec<Row>,
) -> Result<()> {
    for (mb, reps) in [(1u64, 7), (8, 3)] {
        let args = json!({"bytes": mb * 1024 * 1024}).to_string();
        let (mut direct, mut sock, mut slow_ms) = (Vec::new(), Vec::new(), Vec::new());
        let can_reset = comp.reset_peak() && slow.reset_peak();
        let ((before, _), (slow_before, _)) = (comp.rss_kib(), slow.rss_kib());
        for _ in 0..reps {
            direct.push(paths[0].conn.call("big", &args).await?.0.as_secs_f64() * 1e3);
            for (i, out) in [(1, &mut sock), (2, &mut slow_ms)] {
                let t = paths[i].conn.call("mcp_demo_big", &args).await?.0;
                out.push(t.as_secs_f64() * 1e3);
            }
        }
        let ((_, peak), (_, slow_peak)) = (comp.rss_kib(), slow.rss_kib());
        let (d, s, sl) = (median(direct), median(sock), median(slow_ms));
        let added = peak.saturating_sub(before);
        let slow_added = slow_peak.saturating_sub(slow_before);
        let payload_kib = (mb * 1024) as f64;
        let mut row = Row::new(
            "3",
            format!(
                "{mb} MiB result: time; companion peak RSS {}",
                if can_reset {
                    "(VmHWM reset first)"
                } else {
                    "(VmHWM since start)"
                }
            ),
        )
        .base(format!("{d:.1} ms"))
        .ours(format!(
            "{s:.1} ms; RSS {} → peak {}",
            mib(before),
            mib(peak)
        ))
        .ratio(s / d)
        .diff(format!(
            "+{:.1} ms; peak +{} = {:.1}× payload (fast path off: {sl:.1} ms, peak +{:.1}× payload)",
            s - d,
            mib(added),
            added as f64 / payload_kib,
            slow_added as f64 / payload_kib
        ));
        if mb == 8 {
            row = row.target(
                "peak ≤ +2× payload, ≤ 1.2× direct time",
                added <= 2 * mb * 1024 && s / d <= 1.2,
            );
        }
        rows.push(row);
    }
    Ok(())
}

/// The benchmark drives Unix sockets and `/proc`; elsewhere it only says so.
#[cfg(not(unix))]
fn main() {
    println!("proxy bench: Unix only");
}
