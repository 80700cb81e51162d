//! Serving until a signal: what a game's own `main` calls after it has
//! listed its games. [`serve`] starts a runtime of `--threads` threads,
//! binds, prints the URL on stdout, and on Ctrl-C or SIGTERM tells every
//! client why and drains; with `--agones` it first connects to the Agones
//! SDK sidecar and reports to it (see [`crate::agones`]).
//!
//! ```no_run
//! use clap::Parser as _;
//! # fn games() -> skirmish_server::Catalog { skirmish_server::Catalog::new() }
//! fn main() -> anyhow::Result<()> {
//!     skirmish_server::log_to_stderr();
//!     let config = skirmish_server::ServerConfig::parse();
//!     skirmish_server::serve(config, games())
//! }
//! ```

use tracing_subscriber::EnvFilter;

use crate::agones::Agones;
use crate::config::ServerConfig;
use crate::server::{start, Catalog};

/// Logs to stderr (stdout carries only the line with the URL), at the
/// level `RUST_LOG` names, `info` by default.
pub fn log_to_stderr() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    // A subscriber set before (by the game's own `main`) stays.
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .try_init();
}

/// Serves `games` as `config` says until Ctrl-C or SIGTERM, then shuts
/// down gracefully (see [`RunningServer::shutdown`](crate::RunningServer::shutdown)).
///
/// # Errors
/// The runtime cannot start, the server cannot start (see [`start`]), or
/// the Agones sidecar cannot be reached.
pub fn serve(config: ServerConfig, games: Catalog) -> anyhow::Result<()> {
    if !config.web_dir.join("index.html").is_file() {
        tracing::warn!(
            "{} has no index.html: the page will not load (`--web-dir` names the folder of the pages)",
            config.web_dir.display()
        );
    }
    // One thread is the default: every task runs where it is woken, with no
    // cross-thread wake-ups, which is the cheapest per player.
    let runtime = if config.threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(config.threads)
            .enable_all()
            .build()?
    };
    runtime.block_on(async move {
        // Listen for signals before anything else: a SIGTERM that came
        // before the handler was installed would kill the process without
        // a drain.
        let stop = shutdown_signal();
        tokio::pin!(stop);
        // Under Agones the sidecar must answer before anything is bound.
        let agones = if config.agones.enabled {
            tokio::select! {
                agones = Agones::connect(&config.agones) => Some(agones?),
                () = &mut stop => return Ok(()),
            }
        } else {
            None
        };
        let addr = config.addr;
        let server =
            start(config, games).map_err(|e| anyhow::anyhow!("cannot serve on {addr}: {e}"))?;
        println!(
            "skirmish-server: open http://{}/ (Ctrl-C stops)",
            server.addr
        );
        if let Some(agones) = agones {
            return agones.run(server, stop).await;
        }
        stop.await;
        tracing::info!("shutting down: telling clients and closing connections");
        server.shutdown().await
    })
}

/// Starts listening for Ctrl-C and SIGTERM at once (a signal that comes
/// before the returned future is polled is kept); the future resolves on
/// the first. Call it inside the runtime.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let listeners = [SignalKind::interrupt(), SignalKind::terminate()].map(|kind| {
            signal(kind)
                .inspect_err(|e| tracing::error!("cannot listen for signal {kind:?}: {e}"))
                .ok()
        });
        async move {
            let [interrupt, terminate] = listeners;
            let wait = |listener: Option<tokio::signal::unix::Signal>| async move {
                match listener {
                    Some(mut listener) => {
                        listener.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = wait(interrupt) => {},
                () = wait(terminate) => {},
            }
        }
    }
    #[cfg(not(unix))]
    async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!("cannot listen for Ctrl-C: {e}");
            std::future::pending::<()>().await;
        }
    }
}
