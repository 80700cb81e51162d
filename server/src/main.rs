//! The `skirmish-server` binary: parses the command line, starts the server
//! on a runtime of `--threads` threads, prints the URL, and shuts down
//! gracefully on Ctrl-C or SIGTERM. With `--agones` it first connects to
//! the Agones SDK sidecar and reports to it (see `skirmish_server::agones`).

use clap::Parser;
use mimalloc::MiMalloc;
use skirmish_server::agones::Agones;
use skirmish_server::{start, ServerConfig};
use tracing_subscriber::EnvFilter;

/// Frames are allocated and freed per client per tick; mimalloc keeps the
/// pages instead of returning them to the kernel and faulting them back.
#[global_allocator]
static ALLOCATOR: MiMalloc = MiMalloc;

fn main() -> anyhow::Result<()> {
    // Logs go to stderr; stdout carries only the line with the URL.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .init();
    let config = ServerConfig::parse();
    if !config.web_dir.join("index.html").is_file() {
        tracing::warn!(
            "{} has no index.html: the page will not load (run `cargo xtask run` from the project root)",
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
        let server = start(config).map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
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
