//! The two CLI subcommands the desktop binary answers itself, so a machine with only the app
//! installed still works: `bridge` (what agent snippets point at when no `mcp-companion` CLI
//! sits beside the app) and `demo-server` (what the default config's `${MCP_COMPANION_EXE}
//! demo-server` entry runs, since that variable is this binary here).

use std::process::ExitCode;

use mcp_companion::demo::DemoOptions;

/// Runs `bridge` or `demo-server [--test-tools]` if those are the arguments; `None` otherwise.
pub fn run_if_subcommand() -> Option<ExitCode> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let first = args.first()?.as_str();
    if !matches!(first, "bridge" | "demo-server") {
        return None;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return Some(ExitCode::FAILURE);
        }
    };
    let outcome: Result<(), String> = runtime.block_on(async {
        if first == "bridge" {
            let socket = std::env::var_os("MCP_COMPANION_SOCKET").map(std::path::PathBuf::from);
            let candidates: Vec<_> = mcp_companion::ipc::record::candidates(socket.as_deref())
                .into_iter()
                .map(|p| p.mcp)
                .collect();
            mcp_companion::ipc::bridge::run_stdio(&candidates)
                .await
                .map_err(|e| e.to_string())
        } else {
            let opts = DemoOptions {
                test_tools: args.iter().any(|a| a == "--test-tools"),
                ..DemoOptions::default()
            };
            mcp_companion::demo::run_stdio(opts)
                .await
                .map_err(|e| e.to_string())
        }
    });
    // stdin readers sit in blocking threads that never return: do not wait for them.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    Some(match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    })
}
