//! The authoritative Skirmish server: the imperative shell around
//! `skirmish-core`'s [`Room`](skirmish_core::Room).
//!
//! - `GET /` serves the `web/` folder (the page and the built wasm client).
//! - `GET /ws` upgrades to the game (protocol v1, `docs/PROTOCOL.md`).
//! - `GET /healthz` answers `ok`; `GET /rooms` lists rooms as JSON;
//!   `GET /metrics` is Prometheus text; `GET /transport` says where to
//!   connect over WebTransport (served on UDP beside, see [`webtransport`]).
//!
//! The server accepts connections itself rather than through `axum::serve`,
//! so that limits apply before any HTTP work: each accepted socket first
//! takes a permit from the [`AddressBook`] (refused with HTTP 503 or 429
//! when the server or its address holds too many), and must send a complete
//! HTTP request within the upgrade deadline.
//!
//! [`start`] binds, spawns the server and returns a [`RunningServer`]; tests
//! start one on `127.0.0.1:0` and talk to it over real WebSockets.

pub mod agones;
pub mod config;
mod conversation;
pub mod gate;
pub mod limits;
pub mod metrics;
pub mod rooms;
pub mod socket;
pub mod webtransport;
pub mod ws;

use std::net::SocketAddr;
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Json, Router};
use hyper::server::conn::http1;
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tower_http::services::ServeDir;

pub use config::{Limits, RoomSettings, ServerConfig};
pub use limits::{AddressBook, Permit};
pub use metrics::{DisconnectReason, Metrics, Refusal};
pub use rooms::{RoomInfo, Rooms};

/// What every handler shares.
#[derive(Debug)]
pub struct AppState {
    /// The configuration the server started with.
    pub config: ServerConfig,
    /// The rooms.
    pub rooms: Arc<Rooms>,
    /// The counters.
    pub metrics: Arc<Metrics>,
    /// What each address holds.
    pub book: Arc<AddressBook>,
    /// The next player id; ids are unique within the process.
    pub next_player: AtomicU32,
    /// Becomes `true` when the server shuts down.
    pub shutdown: watch::Receiver<bool>,
    /// Sessions still running (WebSocket and WebTransport); shutdown waits
    /// for them to say goodbye.
    pub sessions: watch::Sender<usize>,
    /// The WebTransport endpoint, once bound (never with
    /// `--no-webtransport`).
    pub webtransport: OnceLock<Arc<webtransport::WebTransport>>,
}

/// How long shutdown waits for sessions to tell their clients why.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

/// The router, for a given state. Requests reaching `/ws` must carry the
/// connection's [`Permit`] as an extension, as [`start`]'s accept loop adds.
fn app(state: Arc<AppState>) -> Router {
    let web = ServeDir::new(&state.config.web_dir).append_index_html_on_directories(true);
    Router::new()
        .route("/ws", get(upgrade))
        .route("/healthz", get(|| async { "ok" }))
        .route("/transport", get(transport))
        .route("/rooms", get(rooms))
        .route("/metrics", get(metrics))
        .fallback_service(web)
        .with_state(state)
}

/// `GET /ws`: answers a valid WebSocket upgrade with 101 and hands the raw
/// socket to [`ws::serve`] once hyper lets go of it.
async fn upgrade(
    State(state): State<Arc<AppState>>,
    Extension(permit): Extension<Arc<Permit>>,
    mut request: Request,
) -> Response {
    let accept = match ws::accept_key(request.headers()) {
        Ok(accept) => accept,
        Err(why) => return (StatusCode::BAD_REQUEST, why).into_response(),
    };
    let Some(on_upgrade) = request.extensions_mut().remove::<OnUpgrade>() else {
        return (
            StatusCode::BAD_REQUEST,
            "this connection cannot be upgraded",
        )
            .into_response();
    };
    tokio::spawn(async move {
        let Ok(upgraded) = on_upgrade.await else {
            return;
        };
        // The accept loop serves every connection as `TokioIo<TcpStream>`.
        if let Ok(parts) = upgraded.downcast::<TokioIo<TcpStream>>() {
            let read = parts.read_buf.to_vec();
            ws::serve(parts.io.into_inner(), read, state, permit).await;
        } else {
            tracing::error!("an upgraded connection is not a TCP stream");
        }
    });
    (
        StatusCode::SWITCHING_PROTOCOLS,
        [
            (header::UPGRADE, "websocket".to_string()),
            (header::CONNECTION, "upgrade".to_string()),
            (header::SEC_WEBSOCKET_ACCEPT, accept),
        ],
    )
        .into_response()
}

/// `GET /transport`: where a page may connect over WebTransport and which
/// certificate hashes to pin; `{"webtransport":null}` when it is off.
async fn transport(
    State(state): State<Arc<AppState>>,
    headers: axum::http::HeaderMap,
) -> Json<serde_json::Value> {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    let offer = state.webtransport.get().map(|wt| wt.offer(host));
    Json(serde_json::json!({ "webtransport": offer }))
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
    task: JoinHandle<()>,
}

impl RunningServer {
    /// Stops accepting, tells every client why and waits (at most a few
    /// seconds) for every session to close.
    ///
    /// # Errors
    /// The server task failed.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        let _ = self.stop.send(true);
        self.task.await?;
        let mut sessions = self.state.sessions.subscribe();
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, sessions.wait_for(|n| *n == 0)).await;
        if let Some(wt) = self.state.webtransport.get() {
            wt.stopped().await;
        }
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
    let book = AddressBook::new(config.limits.clone());
    let rooms = Rooms::new(config.rooms.clone(), metrics.clone(), book.clone());
    let (stop, shutdown) = watch::channel(false);
    let state = Arc::new(AppState {
        config,
        rooms,
        metrics,
        book,
        next_player: AtomicU32::new(1),
        shutdown,
        sessions: watch::Sender::new(0),
        webtransport: OnceLock::new(),
    });
    let settings = &state.config.webtransport;
    if !settings.disabled {
        let udp = settings.listen.unwrap_or(addr);
        let files = settings
            .tls_cert
            .as_deref()
            .zip(settings.tls_key.as_deref());
        let wt = webtransport::start(udp, settings.port_from_host, files, state.clone())
            .map_err(|e| anyhow::anyhow!("WebTransport on UDP {udp}: {e}"))?;
        let _ = state.webtransport.set(wt);
    }
    let task = tokio::spawn(accept(listener, state.clone()));
    Ok(RunningServer {
        addr,
        state,
        stop,
        task,
    })
}

/// Accepts connections until shutdown; each gets a permit or a refusal
/// before any HTTP work.
async fn accept(listener: TcpListener, state: Arc<AppState>) {
    let router = app(state.clone());
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(state.config.limits.upgrade_timeout);
    let mut stop = state.shutdown.clone();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => Some(accepted),
            _ = stop.wait_for(|stop| *stop) => None,
        };
        let Some(accepted) = accepted else {
            return;
        };
        let (tcp, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors or similar: back off a little.
                tracing::warn!("accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let permit = match state.book.connect(peer.ip()) {
            Ok(permit) => Arc::new(permit),
            Err(refusal) => {
                state.metrics.refused(refusal);
                tokio::spawn(refuse(tcp, refusal));
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone().layer(Extension(permit)));
        let connection = http
            .serve_connection(TokioIo::new(tcp), service)
            .with_upgrades();
        let metrics = state.metrics.clone();
        let http_timeout = state.config.limits.http_timeout;
        let mut stop = state.shutdown.clone();
        tokio::spawn(async move {
            tokio::pin!(connection);
            let finished = tokio::select! {
                ended = &mut connection => Some(ended),
                _ = stop.wait_for(|stop| *stop) => None,
                () = tokio::time::sleep(http_timeout) => {
                    // Dropping the connection closes the socket and gives
                    // the permit back; an upgraded WebSocket left already.
                    metrics.refused(Refusal::HttpTimeout);
                    return;
                }
            };
            let ended = if let Some(ended) = finished {
                ended
            } else {
                connection.as_mut().graceful_shutdown();
                connection.await
            };
            if let Err(e) = ended {
                if e.is_timeout() {
                    metrics.refused(Refusal::UpgradeTimeout);
                }
            }
        });
    }
}

/// Answers a turned-away connection with its HTTP status and closes it.
async fn refuse(mut tcp: TcpStream, refusal: Refusal) {
    let status = match refusal {
        Refusal::TooManyFromAddress => "429 Too Many Requests",
        Refusal::TooManyConnections | Refusal::UpgradeTimeout | Refusal::HttpTimeout => {
            "503 Service Unavailable"
        }
    };
    let body = refusal.as_str();
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        tcp.write_all(response.as_bytes()).await?;
        tcp.shutdown().await
    })
    .await;
}
