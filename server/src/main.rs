//! The `skirmish-server` binary: parses the command line, starts the server,
//! prints the URL, and shuts down gracefully on Ctrl-C or SIGTERM.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Parser;
use skirmish_server::{start, ServerConfig};
use tracing_subscriber::EnvFilter;

/// The authoritative Skirmish game server.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Players per room.
    #[arg(long, default_value_t = 64)]
    room_capacity: usize,
    /// Rooms per process; past both limits a joiner gets `server_full`.
    #[arg(long, default_value_t = 64)]
    max_rooms: usize,
    /// Seed of the rooms' randomness (spawn points).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Folder served at `/` (the page and the built client).
    #[arg(long, default_value = "web")]
    web_dir: PathBuf,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .init();
    let args = Args::parse();
    if !args.web_dir.join("index.html").is_file() {
        tracing::warn!(
            "{} has no index.html: the page will not load (run `cargo xtask run` from the project root)",
            args.web_dir.display()
        );
    }
    let server = start(ServerConfig {
        addr: args.addr,
        room_capacity: args.room_capacity,
        max_rooms: args.max_rooms,
        seed: args.seed,
        web_dir: args.web_dir,
        ..ServerConfig::default()
    })
    .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", args.addr))?;
    println!(
        "skirmish-server: open http://{}/ (Ctrl-C stops)",
        server.addr
    );
    shutdown_signal().await;
    tracing::info!("shutting down: telling clients and closing connections");
    server.shutdown().await
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
