//! `mcp-companion`: the headless CLI. It parses arguments and calls the library; see
//! `mcp_companion` for the modules that do the work.

mod cli;

use std::process::ExitCode;

use clap::Parser;
use cli::args::{Args, Command};
use mcp_companion::control::ControlRequest;

fn main() -> ExitCode {
    // A copy of this binary may be the reaper that guards the servers' process groups.
    mcp_companion::process::reaper::run_if_reaper();
    let args = Args::parse();
    // SIGPIPE stays ignored (Rust's default) in every command: a client command whose reader
    // goes away (`status | head`) ends quietly through `cli::out`, and one whose companion
    // hangs up on it (a refused connection) gets EPIPE and says so, rather than dying silently
    // by the signal.
    let default_level = match args.command {
        Command::Serve { .. } => "info",
        _ => "warn",
    };
    cli::init_tracing(args.log_level.as_deref(), default_level);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(run(args));
    // stdin readers (bridge) sit in blocking threads that never return: do not wait for them.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match outcome {
        Ok(code) => code,
        // The reader of our output went away (`status | head`): nothing to report to anyone.
        Err(e) if e.root_cause().is::<cli::out::StdoutClosed>() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let socket = args.socket.as_deref();
    match args.command {
        Command::Serve { watch } => cli::serve(args.config.as_deref(), socket, watch).await,
        Command::Bridge {
            profile,
            no_autostart,
        } => {
            cli::bridge::run(
                args.config.as_deref(),
                socket,
                profile.as_deref(),
                !no_autostart,
            )
            .await
        }
        Command::Tools {
            json,
            profile,
            tokens: false,
        } => cli::tools(socket, json, profile.as_deref()).await,
        Command::Tools {
            json, tokens: true, ..
        } => cli::tokens(socket, json).await,
        Command::Call {
            name,
            arguments,
            profile,
            json,
        } => cli::call(socket, &name, &arguments, profile.as_deref(), json).await,
        Command::Status { json } => cli::status(socket, json).await,
        Command::Logs {
            server,
            lines,
            follow,
        } => cli::logs(socket, &server, lines, follow).await,
        Command::Activity {
            agent,
            server,
            tool,
            outcome,
            profile,
            since,
            limit,
            follow,
            json,
        } => {
            let wanted = cli::activity::ActivityArgs {
                agent,
                server,
                tool,
                outcome,
                profile,
                since,
                limit,
                follow,
                json,
            };
            cli::activity::activity(args.config.as_deref(), wanted).await
        }
        Command::Start { server, json } => {
            cli::control(socket, ControlRequest::Start { server }, json).await
        }
        Command::Stop { server, json } => {
            cli::control(socket, ControlRequest::Stop { server }, json).await
        }
        Command::Restart { server, json } => {
            cli::control(socket, ControlRequest::Restart { server }, json).await
        }
        Command::Reload { json } => cli::reload(args.config.as_deref(), socket, json).await,
        Command::Login { server } => {
            cli::auth::login(args.config.as_deref(), socket, &server).await
        }
        Command::Trust {
            server,
            all,
            shown,
            json,
        } => cli::trust(socket, server, all, shown.as_deref(), json).await,
        Command::StartAtLogin { switch, json } => {
            cli::start_at_login::run(switch, args.config.as_deref(), args.socket.as_deref(), json)
        }
        Command::Policy {
            server,
            tool,
            policy,
        } => cli::policy::policy(args.config.as_deref(), socket, server, tool, policy).await,
        Command::Approvals { watch, full, json } => {
            cli::policy::approvals(socket, watch, full, json).await
        }
        Command::Approve { id, answer } => cli::policy::approve(socket, id, &answer).await,
        Command::Agents { json, set, profile } => cli::agents(socket, json, set, profile).await,
        Command::Logout { server } => {
            cli::auth::logout(args.config.as_deref(), socket, &server).await
        }
        Command::Doctor { server, os } => {
            cli::doctor::run(
                args.config.as_deref(),
                socket,
                server.as_deref(),
                os.as_deref(),
            )
            .await
        }
        Command::Registry { command } => {
            cli::registry::registry(args.config.as_deref(), command).await
        }
        Command::Add(a) => cli::registry::add(args.config.as_deref(), a).await,
        Command::Install(a) => cli::bundle::install(args.config.as_deref(), a),
        Command::Remove { server } => cli::bundle::remove(args.config.as_deref(), &server),
        Command::Outdated { json } => cli::registry::outdated(args.config.as_deref(), json).await,
        Command::Update(a) => cli::registry::update(args.config.as_deref(), a).await,
        Command::Connect(a) => cli::connect::run(args.config.as_deref(), a, true),
        Command::Disconnect(a) => cli::connect::run(args.config.as_deref(), a, false),
        Command::Secret(cmd) => cli::secret::run(args.config.as_deref(), cmd),
        Command::DemoServer {
            test_tools,
            start_delay_ms,
            fail_start,
            extra_tools,
            page_size,
            call_log,
            stateless,
            tool_overrides,
            live_overrides,
            asking,
            extra_args: _,
        } => {
            let opts = mcp_companion::demo::DemoOptions {
                test_tools,
                start_delay: std::time::Duration::from_millis(start_delay_ms),
                fail_start,
                extra_tools,
                page_size,
                call_log,
                stateless,
                tool_overrides,
                live_overrides,
                asking,
            };
            cli::demo_server(opts).await
        }
    }
}
