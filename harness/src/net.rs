//! The few socket helpers the bots, the WebTransport client and the relay
//! runs share: loopback source addresses (so that a server on 127.0.0.1
//! sees each bot as its own host), a TCP connection from one, a
//! WebSocket to a game's folder over it, and a plain HTTP `GET`.
//!
//! Waiting is always for a message, never for a clock: every receive has a
//! generous deadline ([`DEADLINE`]) only so that a broken server fails a
//! run instead of hanging it.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long any single wait may take before the run fails.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// A client WebSocket.
pub type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A fresh loopback source address (`127.2.0.1`, `127.2.0.2`, ...): every
/// address in 127.0.0.0/8 reaches a server on 127.0.0.1, which sees each
/// client as its own host, as players on their own machines would be.
/// (The counter is this crate's: a process that also counts elsewhere
/// should take its addresses from one place.)
pub fn next_source() -> IpAddr {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    IpAddr::from([127, 2 + (n >> 16) as u8, (n >> 8) as u8, n as u8])
}

/// A TCP connection to `addr` from the loopback address `source`.
///
/// # Errors
/// The socket cannot be bound or connected.
pub async fn tcp_from(addr: SocketAddr, source: IpAddr) -> Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(source, 0))?;
    Ok(socket.connect(addr).await?)
}

/// A WebSocket to the game in `folder` of `addr` over `tcp`: `/ws` for
/// `""` (the game the server hosts at its root), else `/{folder}/ws`.
///
/// # Errors
/// The handshake fails (the server answers 404 for a folder of no game).
pub async fn websocket_at(addr: SocketAddr, folder: &str, tcp: TcpStream) -> Result<Socket> {
    let url = match folder {
        "" => format!("ws://{addr}/ws"),
        folder => format!("ws://{addr}/{folder}/ws"),
    };
    let (socket, _) = tokio_tungstenite::client_async_with_config(
        url,
        MaybeTlsStream::Plain(tcp),
        Some(config()),
    )
    .await
    .context("handshake")?;
    Ok(socket)
}

/// A bot's WebSocket settings: tungstenite zeroes its whole read buffer
/// before every read (128 KiB by default: half of a thousand light bots'
/// CPU went to that `memset`, 9 % still at 8 KiB). A snapshot frame
/// within the room's byte budget (1,150 bytes) is read at once; a larger
/// one takes more reads.
pub fn config() -> WebSocketConfig {
    WebSocketConfig::default().read_buffer_size(READ_BUFFER)
}

/// Bytes a bot's WebSocket reads at a time.
const READ_BUFFER: usize = 2 * 1024;

/// `GET path` over plain HTTP/1.0; the body.
///
/// # Errors
/// The request fails, takes longer than [`DEADLINE`] or is not answered
/// 200.
pub async fn http_get(addr: SocketAddr, path: &str) -> Result<String> {
    let mut stream = TcpStream::connect(addr).await?;
    stream
        .write_all(format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await?;
    let mut response = String::new();
    tokio::time::timeout(DEADLINE, stream.read_to_string(&mut response)).await??;
    let (head, body) = response
        .split_once("\r\n\r\n")
        .ok_or_else(|| anyhow!("no HTTP body in {response}"))?;
    if !head.starts_with("HTTP/1.0 200") && !head.starts_with("HTTP/1.1 200") {
        bail!("GET {path}: {head}");
    }
    Ok(body.to_string())
}
