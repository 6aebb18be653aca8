//! Items 4–6: fan-out time to `running` for 1, 10 and 50 servers, idle RSS with 0, 10 and 50
//! servers, and `tools/list` over 50 servers × 40 tools.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use serde_json::{Map, Value};

use crate::Opts;
use crate::procs::{Companion, companion_bin, demo_args, demo_entry};
use crate::report::{Row, median, mib, us};
use crate::rpc::Conn;

const START_DELAY_MS: u64 = 200;
const CATALOG_SERVERS: usize = 50;
const TOOLS_PER_SERVER: usize = 40;

fn servers(n: usize, delay_ms: u64, extra: usize) -> Map<String, Value> {
    (0..n)
        .map(|i| (format!("s{i}"), demo_entry(delay_ms, extra)))
        .collect()
}

pub async fn run(o: &Opts, raw_tools: usize, rows: &mut Vec<Row>) -> Result<()> {
    // Idle RSS with no servers.
    let (c, _) = Companion::start(Map::new()).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (idle0, _) = c.rss_kib();
    c.stop().await;

    let mut times = Vec::new();
    let mut idle = Vec::new();
    let mut wrapped_per_server = 0;
    for n in [1usize, 10, 50] {
        let mut t = Vec::new();
        for round in 0..o.rounds {
            let (c, dt) = Companion::start(servers(n, START_DELAY_MS, 0)).await?;
            t.push(dt.as_secs_f64() * 1e3);
            if round + 1 == o.rounds {
                tokio::time::sleep(Duration::from_secs(1)).await;
                idle.push((n, c.rss_kib().0));
                wrapped_per_server = settled_tools(&c).await? / n;
            }
            c.stop().await;
        }
        times.push((n, median(t)));
    }
    let one = times[0].1;
    for &(n, ms) in &times {
        let mut row = Row::new(
            "4",
            format!("fan-out: serve start → {n} server(s) running ({START_DELAY_MS} ms start delay each), vs 1"),
        )
        .base(format!("{one:.0} ms"))
        .ours(format!("{ms:.0} ms"))
        .ratio(ms / one);
        if n == 50 {
            row = row.target("≤ 2×", ms / one <= 2.0);
        }
        rows.push(row);
    }
    rows.push(
        Row::new("5", "companion RSS idle, 0 servers")
            .base("—")
            .ours(mib(idle0)),
    );
    for &(n, kib) in &idle {
        if n == 1 {
            continue;
        }
        let mut row = Row::new(
            "5",
            format!("companion RSS idle, {n} servers (children excluded), vs 0"),
        )
        .base(mib(idle0))
        .ours(mib(kib))
        .ratio(kib as f64 / idle0 as f64)
        .diff(format!(
            "+{:.0} KiB/server",
            (kib as f64 - idle0 as f64) / n as f64
        ));
        if n == 10 {
            row = row.target("≤ 15 MiB", kib <= 15 * 1024);
        }
        rows.push(row);
    }
    catalog(o, raw_tools, wrapped_per_server, rows).await
}

/// The merged catalog's size once it stops changing (it is rebuilt at most every 100 ms).
async fn settled_tools(c: &Companion) -> Result<usize> {
    let mut last = usize::MAX;
    loop {
        let total: usize = c.status().await?.servers.iter().map(|s| s.tools).sum();
        if total == last && total > 0 {
            return Ok(total);
        }
        last = total;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// Item 6: the full `tools/list` of 50 servers × 40 wrapped tools through the socket, vs one
/// rmcp test server listing as many raw tools directly over stdio.
async fn catalog(
    o: &Opts,
    raw_tools: usize,
    wrapped_base: usize,
    rows: &mut Vec<Row>,
) -> Result<()> {
    let extra = TOOLS_PER_SERVER.saturating_sub(wrapped_base);
    let (c, _) = Companion::start(servers(CATALOG_SERVERS, 0, extra)).await?;
    let total = settled_tools(&c).await?;
    let mut sock = Conn::unix(&c.socket).await?;
    sock.initialize().await?;
    let want = CATALOG_SERVERS * TOOLS_PER_SERVER;
    let mut direct = Conn::spawn(
        &companion_bin(),
        &demo_args(0, want.saturating_sub(raw_tools)),
    )?;
    direct.initialize().await?;
    ensure!(
        sock.tool_names().await?.len() == total,
        "socket listing size"
    );
    let direct_n = direct.tool_names().await?.len();
    let reps = 10 * o.rounds;
    let (mut d, mut s) = (Vec::new(), Vec::new());
    let mut bytes = 0;
    for _ in 0..reps {
        let t = Instant::now();
        direct.list_raw().await.context("direct tools/list")?;
        d.push(t.elapsed().as_secs_f64() * 1e6);
        let t = Instant::now();
        bytes = sock.list_raw().await.context("socket tools/list")?;
        s.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let (d, s) = (median(d), median(s));
    rows.push(
        Row::new(
            "6",
            format!("tools/list, all pages: {total} wrapped tools ({CATALOG_SERVERS} servers, {:.0} KiB) vs 1 server listing {direct_n} directly", bytes as f64 / 1024.0),
        )
        .base(us(d))
        .ours(us(s))
        .ratio(s / d)
        .diff(format!("{:+.0} µs", s - d))
        .target("≤ 5 ms", s <= 5000.0),
    );
    sock.close().await;
    direct.close().await;
    c.stop().await;
    Ok(())
}
