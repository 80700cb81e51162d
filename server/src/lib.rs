//! The authoritative Skirmish server: the imperative shell around
//! `skirmish-core`'s [`World`](skirmish_core::World).
//!
//! - `GET /` serves the `web/` folder (the page and the built wasm client).
//! - `GET /ws` upgrades to the game (protocol v1, `docs/PROTOCOL.md`).
//! - `GET /healthz` answers `ok`; `GET /rooms` lists rooms as JSON;
//!   `GET /metrics` is Prometheus text.
//!
//! [`start`] binds, spawns the server and returns a [`RunningServer`]; tests
//! start one on `127.0.0.1:0` and talk to it over real WebSockets.

pub mod metrics;
pub mod rooms;
pub mod ws;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicU32;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{State, WebSocketUpgrade};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use skirmish_core::{SimConfig, MAX_FRAME_BYTES};
use tokio::net::TcpSocket;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tower_http::services::ServeDir;

pub use metrics::{DisconnectReason, Metrics};
pub use rooms::{RoomInfo, RoomSettings, Rooms};

/// Everything the server can be told.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Where to listen.
    pub addr: SocketAddr,
    /// Players per room.
    pub room_capacity: usize,
    /// Rooms per process.
    pub max_rooms: usize,
    /// Seed of the rooms' randomness (spawn points).
    pub seed: u64,
    /// The movement constants.
    pub sim: SimConfig,
    /// The folder served at `/`.
    pub web_dir: PathBuf,
    /// A room without players for this long closes.
    pub empty_room_timeout: Duration,
    /// Time a new connection has to send `hello`.
    pub hello_timeout: Duration,
    /// Messages queued for one client before it counts as a slow consumer.
    pub outbox_capacity: usize,
    /// Longest one send to a client may take before it counts as a slow consumer.
    pub send_timeout: Duration,
    /// Messages per second one connection may send.
    pub max_messages_per_sec: u32,
    /// The socket send buffer of accepted connections, if set (tests use a
    /// small one to find slow consumers quickly).
    pub socket_send_buffer: Option<u32>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 8080)),
            room_capacity: 64,
            max_rooms: 64,
            seed: 1,
            sim: SimConfig::default(),
            web_dir: PathBuf::from("web"),
            empty_room_timeout: Duration::from_secs(30),
            hello_timeout: Duration::from_secs(10),
            outbox_capacity: 64,
            send_timeout: Duration::from_secs(2),
            max_messages_per_sec: 60,
            socket_send_buffer: None,
        }
    }
}

/// What every handler shares.
#[derive(Debug)]
pub struct AppState {
    /// The configuration the server started with.
    pub config: ServerConfig,
    /// The rooms.
    pub rooms: Arc<Rooms>,
    /// The counters.
    pub metrics: Arc<Metrics>,
    /// The next player id; ids are unique within the process.
    pub next_player: AtomicU32,
    /// Becomes `true` when the server shuts down.
    pub shutdown: watch::Receiver<bool>,
}

/// The router, for a given state.
pub fn app(state: Arc<AppState>) -> Router {
    let web = ServeDir::new(&state.config.web_dir).append_index_html_on_directories(true);
    Router::new()
        .route("/ws", get(upgrade))
        .route("/healthz", get(|| async { "ok" }))
        .route("/rooms", get(rooms))
        .route("/metrics", get(metrics))
        .fallback_service(web)
        .with_state(state)
}

async fn upgrade(ws: WebSocketUpgrade, State(state): State<Arc<AppState>>) -> Response {
    // The transport limit is generous: frames between 8 KiB and this get a
    // `too_large` error; larger ones end the connection.
    ws.max_message_size(8 * MAX_FRAME_BYTES)
        .max_frame_size(8 * MAX_FRAME_BYTES)
        .on_upgrade(move |socket| ws::serve(socket, state))
}

async fn rooms(State(state): State<Arc<AppState>>) -> Json<Vec<RoomInfo>> {
    Json(state.rooms.list())
}

async fn metrics(State(state): State<Arc<AppState>>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(),
    )
}

/// A server running in the background.
#[derive(Debug)]
pub struct RunningServer {
    /// The address it listens on.
    pub addr: SocketAddr,
    /// Its shared state.
    pub state: Arc<AppState>,
    stop: watch::Sender<bool>,
    task: JoinHandle<std::io::Result<()>>,
}

impl RunningServer {
    /// Tells every client why, closes every connection and waits for the
    /// server to stop.
    ///
    /// # Errors
    /// The server task failed.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        let _ = self.stop.send(true);
        self.task.await??;
        Ok(())
    }
}

/// Binds `config.addr` and serves in the background. Call it inside a
/// Tokio runtime.
///
/// # Errors
/// The address cannot be bound.
pub fn start(config: ServerConfig) -> anyhow::Result<RunningServer> {
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

    let metrics = Arc::new(Metrics::default());
    let rooms = Rooms::new(
        RoomSettings {
            capacity: config.room_capacity.max(1),
            max_rooms: config.max_rooms.max(1),
            sim: config.sim.clone(),
            seed: config.seed,
            empty_timeout: config.empty_room_timeout,
        },
        metrics.clone(),
    );
    let (stop, shutdown) = watch::channel(false);
    let state = Arc::new(AppState {
        config,
        rooms,
        metrics,
        next_player: AtomicU32::new(1),
        shutdown: shutdown.clone(),
    });
    let router = app(state.clone());
    let mut stopped = shutdown;
    let task = tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(async move {
                let _ = stopped.wait_for(|stop| *stop).await;
            })
            .await
    });
    Ok(RunningServer {
        addr,
        state,
        stop,
        task,
    })
}
