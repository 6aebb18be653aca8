//! The retrieval evaluation of tool search (`cargo bench --bench tool_search`), and its latency.
//!
//! Quality: the 58 paraphrase queries of `tests/fixtures/tool_search_queries.json` over the
//! 120 tools twelve real MCP servers listed (`tests/fixtures/tool_search_catalog.json`, captured
//! by `capture.sh` beside this file), each tool wrapped as the companion names it
//! (`mcp_<server>_<tool>`) and indexed as `search_tools` indexes it. Grades: 2 = the tool, 1 =
//! acceptable. Reported: Recall@1 and Recall@5 (a grade-2 tool among the first 1 / 5), MRR (of
//! the first grade-2 tool, over the first 10) and nDCG@5 (gains 2^grade - 1).
//!
//! Latency: synthetic catalogs of 1 000 and 10 000 tools made by repeating the real ones under
//! renamed servers, each copy's descriptions perturbed (every k-th word dropped, k by copy);
//! the time to build the index, and per query (top 5) the median and 95th percentile.
//!
//! No assertion here: the floors are in the unit test (`catalog::search::eval`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_companion::catalog::search::bm25::Index;
use mcp_companion::catalog::search::document;
use rmcp::model::{JsonObject, Tool};
use serde_json::Value;

const CATALOG: &str = include_str!("../../tests/fixtures/tool_search_catalog.json");
const QUERIES: &str = include_str!("../../tests/fixtures/tool_search_queries.json");

fn tools(copy: usize) -> Vec<Tool> {
    let catalog: Value = serde_json::from_str(CATALOG).expect("catalog JSON");
    let mut out = Vec::new();
    for (server, entry) in catalog["servers"].as_object().expect("servers") {
        for t in entry["tools"].as_array().expect("tools") {
            let server = if copy == 0 {
                server.clone()
            } else {
                format!("{server}{copy}")
            };
            let mut description = t["description"].as_str().unwrap_or_default().to_owned();
            if copy > 0 {
                let k = copy % 7 + 3;
                description = description
                    .split_whitespace()
                    .enumerate()
                    .filter(|(i, _)| (i + 1) % k != 0)
                    .map(|(_, w)| w)
                    .collect::<Vec<_>>()
                    .join(" ");
            }
            let schema: JsonObject = t["inputSchema"].as_object().cloned().unwrap_or_default();
            out.push(Tool::new(
                format!("mcp_{server}_{}", t["name"].as_str().expect("name")),
                description,
                Arc::new(schema),
            ));
        }
    }
    out
}

fn queries() -> Vec<(String, Vec<(String, u32)>)> {
    let q: Value = serde_json::from_str(QUERIES).expect("queries JSON");
    q["queries"]
        .as_array()
        .expect("queries")
        .iter()
        .map(|q| {
            let relevant = q["relevant"]
                .as_object()
                .expect("relevant")
                .iter()
                .map(|(n, g)| (n.clone(), g.as_u64().unwrap_or(0) as u32))
                .collect();
            (q["query"].as_str().expect("query").to_owned(), relevant)
        })
        .collect()
}

struct Scores {
    r1: f64,
    r5: f64,
    mrr: f64,
    ndcg5: f64,
}

fn evaluate(tools: &[Tool], queries: &[(String, Vec<(String, u32)>)], verbose: bool) -> Scores {
    let index = Index::build(tools.iter().map(document));
    let (mut r1, mut r5, mut mrr, mut ndcg) = (0.0, 0.0, 0.0, 0.0);
    for (query, relevant) in queries {
        let grade = |name: &str| {
            relevant
                .iter()
                .find(|(n, _)| n == name)
                .map_or(0, |(_, g)| *g)
        };
        let ranked: Vec<&str> = index
            .search(query, 10)
            .into_iter()
            .map(|(i, _)| &*tools[i].name)
            .collect();
        let first = ranked.iter().position(|n| grade(n) == 2);
        r1 += f64::from(u8::from(first == Some(0)));
        r5 += f64::from(u8::from(first.is_some_and(|p| p < 5)));
        mrr += first.map_or(0.0, |p| 1.0 / (p as f64 + 1.0));
        let dcg: f64 = ranked
            .iter()
            .take(5)
            .enumerate()
            .map(|(i, n)| f64::from((1u32 << grade(n)) - 1) / (i as f64 + 2.0).log2())
            .sum();
        let mut ideal: Vec<u32> = relevant.iter().map(|(_, g)| *g).collect();
        ideal.sort_unstable_by(|a, b| b.cmp(a));
        let idcg: f64 = ideal
            .iter()
            .take(5)
            .enumerate()
            .map(|(i, g)| f64::from((1u32 << g) - 1) / (i as f64 + 2.0).log2())
            .sum();
        ndcg += dcg / idcg;
        if verbose {
            println!(
                "  {:>3}  {query:?} → {:?}",
                first.map_or("-".to_owned(), |p| (p + 1).to_string()),
                &ranked[..ranked.len().min(3)]
            );
        }
    }
    let n = queries.len() as f64;
    Scores {
        r1: r1 / n,
        r5: r5 / n,
        mrr: mrr / n,
        ndcg5: ndcg / n,
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

fn latency(size: usize, queries: &[(String, Vec<(String, u32)>)]) {
    let mut catalog = Vec::with_capacity(size);
    let mut copy = 0;
    while catalog.len() < size {
        catalog.extend(tools(copy));
        copy += 1;
    }
    catalog.truncate(size);
    let started = Instant::now();
    let index = Index::build(catalog.iter().map(document));
    let build = started.elapsed();
    let mut times = Vec::new();
    for _ in 0..5 {
        for (q, _) in queries {
            let t = Instant::now();
            std::hint::black_box(index.search(q, 5));
            times.push(t.elapsed());
        }
    }
    times.sort_unstable();
    println!(
        "{size:>6} tools: index built in {:.1} ms; search (top 5) median {:.0} µs, p95 {:.0} µs ({} searches)",
        build.as_secs_f64() * 1e3,
        percentile(&times, 0.5).as_secs_f64() * 1e6,
        percentile(&times, 0.95).as_secs_f64() * 1e6,
        times.len()
    );
}

fn main() {
    // `cargo bench` passes `--bench`; `-v` lists each query's rank.
    let verbose = std::env::args().any(|a| a == "-v" || a == "--verbose");
    let tools = tools(0);
    let queries = queries();
    let s = evaluate(&tools, &queries, verbose);
    println!(
        "tool search, {} tools of 12 real servers, {} queries: Recall@1 {:.2}, Recall@5 {:.2}, MRR {:.2}, nDCG@5 {:.2}",
        tools.len(),
        queries.len(),
        s.r1,
        s.r5,
        s.mrr,
        s.ndcg5
    );
    for size in [1_000, 10_000] {
        latency(size, &queries);
    }
}
