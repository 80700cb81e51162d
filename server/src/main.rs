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
        // Under Agones the sidecar must answer before anything is bound.
        let agones = if config.agones.enabled {
            Some(Agones::connect(&config.agones).await?)
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
            return agones.run(server, shutdown_signal()).await;
        }
        shutdown_signal().await;
        tracing::info!("shutting down: telling clients and closing connections");
        server.shutdown().await
    })
}

/// Waits for Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!("cannot listen for Ctrl-C: {e}");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(e) => {
                tracing::error!("cannot listen for SIGTERM: {e}");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}
