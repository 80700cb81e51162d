//! Binding and wiring: [`start`] binds the TCP listener (and the
//! WebTransport endpoint beside it), spawns the accept loop and returns a
//! [`RunningServer`], whose [`RunningServer::shutdown`] tells every client
//! why and waits for them.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpSocket;
use tokio::task::JoinHandle;

use crate::app::AppState;
use crate::config::ServerConfig;
use crate::http::{accept, Routes};
use crate::transport::wt::{self, WebTransport};

/// How long shutdown waits for recordings to be written and synced.
pub const RECORDING_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// A server running in the background.
#[derive(Debug)]
pub struct RunningServer {
    /// The address it listens on.
    pub addr: SocketAddr,
    /// Its shared state.
    pub state: Arc<AppState>,
    /// The WebTransport endpoint (never with `--no-webtransport`).
    pub webtransport: Option<Arc<WebTransport>>,
    task: JoinHandle<()>,
}

impl RunningServer {
    /// Stops accepting, tells every client why and waits (at most a few
    /// seconds) for every session to close; then closes every room, its
    /// recording ending with an end record, and waits (at most
    /// [`RECORDING_GRACE`]) for the recordings to reach the disk.
    ///
    /// # Errors
    /// The server task failed.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        self.state.shutdown.signal();
        self.task.await?;
        self.state.shutdown.drained().await;
        self.state.rooms.close_all(RECORDING_GRACE).await;
        if let Some(wt) = &self.webtransport {
            wt.stopped().await;
        }
        Ok(())
    }
}

/// Binds `config.addr` and serves in the background. Call it inside a
/// Tokio runtime.
///
/// # Errors
/// The address cannot be bound, or `--record` is asked for rooms whose
/// recordings would not replay (see `RoomConfig::validate`).
pub fn start(config: ServerConfig) -> anyhow::Result<RunningServer> {
    if config.rooms.record.dir.is_some() {
        // A recording is replayed only if its room passes the replay's
        // checks: say so now rather than record what cannot be read.
        config
            .rooms
            .room_config("room-1", 1)
            .validate()
            .map_err(|e| {
                anyhow::anyhow!("--record: these rooms' recordings would not replay: {e}")
            })?;
    }
    let socket = if config.addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    if let Some(size) = config.socket_send_buffer {
        socket.set_send_buffer_size(size)?;
    }
    socket.bind(config.addr)?;
    let listener = socket.listen(1024)?;
    let addr = listener.local_addr()?;

    let state = AppState::new(config);
    let settings = &state.config.webtransport;
    let webtransport = if settings.disabled {
        None
    } else {
        let udp = settings.listen.unwrap_or(addr);
        let files = settings
            .tls_cert
            .as_deref()
            .zip(settings.tls_key.as_deref());
        let endpoint = wt::start(udp, settings.port_from_host, files, state.clone())
            .map_err(|e| anyhow::anyhow!("WebTransport on UDP {udp}: {e}"))?;
        Some(endpoint)
    };
    let routes = Routes {
        app: state.clone(),
        webtransport: webtransport.clone(),
    };
    let task = tokio::spawn(accept(listener, routes));
    Ok(RunningServer {
        addr,
        state,
        webtransport,
        task,
    })
}
