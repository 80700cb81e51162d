//! WebTransport beside the HTTP server: the same sessions as over WebSocket,
//! with inputs and snapshots as unreliable datagrams.
//!
//! A client opens one bidirectional stream and sends `hello` on it; every
//! reliable message (welcome, roster, combat, error, and a snapshot too
//! large for a datagram) travels on that stream, framed by
//! [`skirmish_core::framing`]. Inputs, pings, snapshots and pongs travel as
//! datagrams of at most [`MAX_DATAGRAM_BYTES`]: JSON text (first byte `{`)
//! or a binary snapshot (first byte its kind). Every message passes the
//! same [`Gate`] and decoder as on WebSocket, a session only drives its own
//! player, and the same per-address limits apply.
//!
//! Without `--tls-cert`, the endpoint makes a self-signed ECDSA certificate
//! valid for 14 days (the browser's rule for pinning by hash) and replaces
//! it a day before it expires, without touching open sessions; `GET
//! /transport` tells a page where to connect and which hashes to pin.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::Serialize;
use skirmish_core::framing::{write_message, StreamMessage, StreamReader};
use skirmish_core::{decode_client, encode, ErrorCode, ProtocolError};
use tokio::sync::{mpsc, Notify};
use tokio::time::timeout;
use wtransport::endpoint::endpoint_side::Server;
use wtransport::endpoint::IncomingSession;
use wtransport::error::SendDatagramError;
use wtransport::tls::Sha256DigestFmt;
use wtransport::{Connection, Endpoint, Identity, RecvStream, SendStream, ServerConfig};

use crate::conversation::{kicked, shutting_down, stopped, Conversation, Read};
use crate::gate::Gate;
use crate::metrics::DisconnectReason;
use crate::rooms::Sink;
use crate::socket::SendError;
use crate::ws::{Session, TRANSPORT_LIMIT};
use crate::AppState;

/// The largest datagram sent or taken: what every browser path carries.
pub const MAX_DATAGRAM_BYTES: usize = 1200;
/// How long a closing message may take.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

/// Where pages connect, as `GET /transport` says.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Offer {
    /// The WebTransport URL (`https://host:port/wt`).
    pub url: String,
    /// SHA-256 hashes (hex) of the self-signed certificates to pin, newest
    /// first; empty with a real certificate.
    pub certificate_hashes: Vec<String>,
}

/// The running endpoint, for `/transport`.
#[derive(Debug)]
pub struct WebTransport {
    port: u16,
    /// `--webtransport-port-from-host`: a page is told the port it reached
    /// the page on, behind a port mapping that gives TCP and UDP one public
    /// port (Agones' `Dynamic` ports with `protocol: TCPUDP`).
    port_from_host: bool,
    hashes: Mutex<Vec<String>>,
    /// The endpoint's task, until shutdown takes it to wait for the end.
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl WebTransport {
    /// What a page reaching us at `host` (its `Host`, port included or not)
    /// should use.
    pub fn offer(&self, host: &str) -> Offer {
        let (name, port) = match host.rsplit_once(':') {
            // Not `[::1]` alone: a port is digits after the last colon.
            Some((name, port)) if !port.is_empty() && port.chars().all(|c| c.is_ascii_digit()) => {
                (name, port.parse().ok())
            }
            _ => (host, None),
        };
        let port = port.filter(|_| self.port_from_host).unwrap_or(self.port);
        Offer {
            url: format!("https://{name}:{port}/wt"),
            certificate_hashes: self
                .hashes
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        }
    }

    /// Waits (after shutdown was signalled) until the endpoint has closed
    /// every session and let go of its UDP port.
    pub async fn stopped(&self) {
        let task = self
            .task
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

/// The identity from PEM files (a real certificate).
fn from_files(cert: &std::path::Path, key: &std::path::Path) -> anyhow::Result<Identity> {
    use anyhow::Context as _;
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivatePkcs8KeyDer};
    let chain = CertificateDer::pem_file_iter(cert)
        .with_context(|| format!("cannot read {}", cert.display()))?
        .map(|c| {
            let der = c.with_context(|| format!("bad certificate in {}", cert.display()))?;
            wtransport::tls::Certificate::from_der(der.to_vec())
                .with_context(|| format!("bad certificate in {}", cert.display()))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let key_der = PrivatePkcs8KeyDer::from_pem_file(key)
        .with_context(|| format!("{} holds no PKCS#8 private key", key.display()))?;
    Ok(Identity::new(
        wtransport::tls::CertificateChain::new(chain),
        wtransport::tls::PrivateKey::from_der_pkcs8(key_der.secret_pkcs8_der().to_vec()),
    ))
}

fn self_signed() -> anyhow::Result<Identity> {
    Ok(Identity::self_signed(["localhost", "127.0.0.1", "::1"])?)
}

fn hash_of(identity: &Identity) -> Vec<String> {
    identity
        .certificate_chain()
        .as_slice()
        .first()
        .map(|c| c.hash().fmt(Sha256DigestFmt::DottedHex).replace(':', ""))
        .into_iter()
        .collect()
}

fn server_config(addr: SocketAddr, identity: &Identity) -> ServerConfig {
    ServerConfig::builder()
        .with_bind_address(addr)
        .with_identity(identity.clone_identity())
        .keep_alive_interval(Some(Duration::from_secs(3)))
        .max_idle_timeout(Some(Duration::from_secs(10)))
        .unwrap_or_else(|_| unreachable_idle())
        .build()
}

/// The idle timeout above is a small constant QUIC always accepts.
fn unreachable_idle() -> ! {
    unreachable!("a 10 s idle timeout is valid")
}

/// Binds the endpoint on `addr` (UDP) and serves it until shutdown, with
/// the certificate of `files` (chain, key) or a self-signed one;
/// with `port_from_host`, pages are told the port of their `Host` (see
/// [`WebTransport`]).
///
/// # Errors
/// The UDP socket cannot be bound or the certificate cannot be made or
/// read.
pub fn start(
    addr: SocketAddr,
    port_from_host: bool,
    files: Option<(&std::path::Path, &std::path::Path)>,
    state: Arc<AppState>,
) -> anyhow::Result<Arc<WebTransport>> {
    let identity = match files {
        None => self_signed()?,
        Some((cert, key)) => from_files(cert, key)?,
    };
    let endpoint = Endpoint::server(server_config(addr, &identity))?;
    let bound = endpoint.local_addr()?;
    let hashes = if files.is_none() {
        hash_of(&identity)
    } else {
        Vec::new()
    };
    let wt = Arc::new(WebTransport {
        port: bound.port(),
        port_from_host,
        hashes: Mutex::new(hashes),
        task: Mutex::new(None),
    });
    let task = tokio::spawn(serve(endpoint, bound, files.is_none(), wt.clone(), state));
    *wt.task.lock().unwrap_or_else(PoisonError::into_inner) = Some(task);
    Ok(wt)
}

async fn serve(
    endpoint: Endpoint<Server>,
    addr: SocketAddr,
    renew: bool,
    wt: Arc<WebTransport>,
    state: Arc<AppState>,
) {
    let mut shutdown = state.shutdown.clone();
    let renewal = state
        .config
        .webtransport
        .renew_every
        .max(Duration::from_millis(10));
    let mut next_renewal = tokio::time::Instant::now() + renewal;
    loop {
        tokio::select! {
            incoming = endpoint.accept() => {
                tokio::spawn(session(incoming, state.clone()));
            }
            () = tokio::time::sleep_until(next_renewal), if renew => {
                next_renewal += renewal;
                renew_certificate(&endpoint, addr, &wt);
            }
            _ = shutdown.wait_for(|stop| *stop) => break,
        }
    }
    // Sessions tell their clients why on their own (they saw the same
    // signal); then everything closes, and the port is let go.
    let mut sessions = state.sessions.subscribe();
    let _ = timeout(Duration::from_secs(3), sessions.wait_for(|n| *n == 0)).await;
    endpoint.close(0u32.into(), b"shutting_down");
    let _ = timeout(Duration::from_secs(2), endpoint.wait_idle()).await;
}

/// A fresh certificate for new sessions; open ones keep theirs.
fn renew_certificate(endpoint: &Endpoint<Server>, addr: SocketAddr, wt: &WebTransport) {
    let Ok(identity) = self_signed() else {
        tracing::warn!("cannot make a new certificate; keeping the old one");
        return;
    };
    if let Err(e) = endpoint.reload_config(server_config(addr, &identity), false) {
        tracing::warn!(%e, "cannot load the new certificate");
        return;
    }
    let mut hashes = wt.hashes.lock().unwrap_or_else(PoisonError::into_inner);
    let previous = hashes.first().cloned();
    *hashes = hash_of(&identity);
    hashes.extend(previous);
    tracing::info!("WebTransport certificate renewed");
}

/// Sends one client's frames: datagrams straight away, reliable messages
/// through a bounded queue to the task that writes the stream.
#[derive(Debug)]
pub struct Datagrams {
    connection: Connection,
    reliable: mpsc::Sender<Vec<u8>>,
    kicked: Mutex<Option<ErrorCode>>,
    kick: Notify,
}

impl Datagrams {
    /// Sends a frame: a droppable one that fits as a datagram, anything
    /// else on the stream.
    ///
    /// # Errors
    /// `Slow` when the stream's queue is full (the client does not read),
    /// `Closed` when the connection is gone.
    pub fn send(&self, text: bool, payload: &[u8], droppable: bool) -> Result<(), SendError> {
        if droppable && payload.len() <= MAX_DATAGRAM_BYTES {
            match self.connection.send_datagram(payload) {
                Ok(()) => return Ok(()),
                Err(SendDatagramError::TooLarge) => {}
                Err(_) => return Err(SendError::Closed),
            }
        }
        let mut framed = Vec::with_capacity(payload.len() + 5);
        write_message(text, payload, &mut framed);
        self.reliable.try_send(framed).map_err(|e| match e {
            mpsc::error::TrySendError::Full(_) => SendError::Slow,
            mpsc::error::TrySendError::Closed(_) => SendError::Closed,
        })
    }

    /// The room dropped this client.
    pub fn kick(&self, code: ErrorCode) {
        *self.kicked.lock().unwrap_or_else(PoisonError::into_inner) = Some(code);
        self.kick.notify_one();
    }

    async fn kicked(&self) -> ErrorCode {
        loop {
            let notified = self.kick.notified();
            if let Some(code) = *self.kicked.lock().unwrap_or_else(PoisonError::into_inner) {
                return code;
            }
            notified.await;
        }
    }
}

/// Writes queued reliable messages to the stream, each within the send
/// timeout; a client that does not read is dropped as slow. An empty
/// message finishes the stream (the connection is closing).
async fn write_stream(
    mut stream: SendStream,
    mut queue: mpsc::Receiver<Vec<u8>>,
    send_timeout: Duration,
    sink: Arc<Datagrams>,
) {
    while let Some(bytes) = queue.recv().await {
        if bytes.is_empty() {
            let _ = timeout(send_timeout, stream.finish()).await;
            return;
        }
        match timeout(send_timeout, stream.write_all(&bytes)).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return,
            Err(_) => {
                sink.kick(ErrorCode::SlowConsumer);
                return;
            }
        }
    }
}

/// One client over WebTransport, from its first packet to its end.
async fn session(incoming: IncomingSession, state: Arc<AppState>) {
    let address = incoming.remote_address().ip();
    let permit = match state.book.connect(address) {
        Ok(permit) => permit,
        Err(refusal) => {
            state.metrics.refused(refusal);
            incoming.refuse();
            return;
        }
    };
    let limits = &state.config.limits;
    let Ok(Ok(request)) = timeout(limits.upgrade_timeout, incoming).await else {
        return;
    };
    if request.path() != "/wt" {
        request.not_found().await;
        return;
    }
    let Ok(connection) = request.accept().await else {
        return;
    };
    let _session = Session::start(&state);
    let Ok(Ok((send, recv))) = timeout(limits.hello_timeout, connection.accept_bi()).await else {
        state.metrics.rejected(ErrorCode::HelloTimeout);
        connection.close(1u32.into(), ErrorCode::HelloTimeout.as_str().as_bytes());
        state.metrics.disconnected(DisconnectReason::HelloTimeout);
        return;
    };
    let (queue, rx) = mpsc::channel(limits.outbox_capacity.max(1));
    let sink = Arc::new(Datagrams {
        connection: connection.clone(),
        reliable: queue,
        kicked: Mutex::new(None),
        kick: Notify::new(),
    });
    let writer = tokio::spawn(write_stream(send, rx, limits.send_timeout, sink.clone()));
    let mut client = Client {
        writer: Some(writer),
        connection,
        recv,
        reader: StreamReader::new(TRANSPORT_LIMIT),
        gate: Gate::new(limits.max_messages_per_sec),
        sink,
        state: &state,
        buffer: vec![0; 4096],
    };
    let reason = client.run(address).await;
    drop(permit);
    state.metrics.disconnected(reason);
}

struct Client<'a> {
    /// The task writing the stream, awaited when closing.
    writer: Option<tokio::task::JoinHandle<()>>,
    connection: Connection,
    recv: RecvStream,
    reader: StreamReader,
    gate: Gate,
    sink: Arc<Datagrams>,
    state: &'a AppState,
    buffer: Vec<u8>,
}

impl Client<'_> {
    async fn run(&mut self, address: std::net::IpAddr) -> DisconnectReason {
        let seat = match self
            .seat(address, Sink::WebTransport(self.sink.clone()))
            .await
        {
            Ok(seat) => seat,
            Err(reason) => return reason,
        };
        let (room, id) = (seat.room().clone(), seat.id());
        let mut shutdown = self.state.shutdown.clone();
        let sink = self.sink.clone();
        let stop = stopped(&mut shutdown);
        tokio::pin!(stop);
        let ending = loop {
            tokio::select! {
                biased;
                () = &mut stop => break shutting_down(),
                code = sink.kicked() => break kicked(code),
                read = self.read() => {
                    if let Some(ending) = self.on_read(read, &room, id) {
                        break ending;
                    }
                }
            }
        };
        self.finish(seat, ending).await
    }

    fn decode(&mut self, bytes: &[u8]) -> Read {
        self.state.metrics.received(bytes.len());
        if let Some(limited) = self.limited() {
            return limited;
        }
        if bytes.len() > skirmish_core::MAX_FRAME_BYTES {
            return Read::Refused(ProtocolError::new(
                ErrorCode::TooLarge,
                format!("{} bytes is over the limit", bytes.len()),
            ));
        }
        let Ok(text) = std::str::from_utf8(bytes) else {
            return Read::Refused(ProtocolError::new(
                ErrorCode::BadMessage,
                "a message that is not UTF-8 text",
            ));
        };
        match decode_client(text) {
            Ok(message) => Read::Message(message),
            Err(e) => Read::Refused(e),
        }
    }
}

impl Conversation for Client<'_> {
    fn state(&self) -> &AppState {
        self.state
    }

    fn gate(&mut self) -> &mut Gate {
        &mut self.gate
    }

    fn send_text(&self, text: &str) -> Result<(), SendError> {
        self.sink.send(true, text.as_bytes(), false)
    }

    /// The next message, from the stream or as a datagram.
    async fn read(&mut self) -> Read {
        loop {
            match self.reader.next_message() {
                Ok(Some(StreamMessage::Text(text))) => return self.decode(text.as_bytes()),
                Ok(Some(StreamMessage::Binary(bytes))) => {
                    self.state.metrics.received(bytes.len());
                    return self.limited().unwrap_or_else(|| {
                        Read::Refused(ProtocolError::new(
                            ErrorCode::BinaryFrame,
                            "the protocol is JSON text",
                        ))
                    });
                }
                Ok(None) => {}
                Err(_) => return Read::Ended(DisconnectReason::ProtocolError),
            }
            tokio::select! {
                datagram = self.connection.receive_datagram() => {
                    let Ok(datagram) = datagram else {
                        return Read::Ended(DisconnectReason::Closed);
                    };
                    return self.decode(&datagram);
                }
                chunk = self.recv.read(&mut self.buffer) => match chunk {
                    Ok(Some(n)) => {
                        let bytes = self.buffer.get(..n).unwrap_or_default().to_vec();
                        self.reader.push(&bytes);
                    }
                    Ok(None) | Err(_) => return Read::Ended(DisconnectReason::Closed),
                },
            }
        }
    }

    /// Sends an `error` on the stream and closes, waiting at most a second
    /// for the client to take it.
    async fn close(&mut self, code: ErrorCode, message: &str) {
        let text = encode(&ProtocolError::new(code, message).to_message());
        let _ = self.sink.send(true, text.as_bytes(), false);
        // Finish the stream after what is queued, wait for the writer to
        // get it out (at most a second), then close with the code's name.
        let _ = self.sink.reliable.try_send(Vec::new());
        if let Some(writer) = self.writer.take() {
            let _ = timeout(CLOSE_TIMEOUT, writer).await;
        }
        // Give the client the chance to read it and close first, as on
        // WebSocket: closing at once could discard what is in flight.
        let _ = timeout(CLOSE_TIMEOUT, self.connection.closed()).await;
        self.connection.close(1u32.into(), code.as_str().as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(port_from_host: bool) -> WebTransport {
        WebTransport {
            port: 8080,
            port_from_host,
            hashes: Mutex::new(vec!["ab".into()]),
            task: Mutex::new(None),
        }
    }

    #[test]
    fn the_offer_names_the_port_the_page_was_reached_on_when_asked_to() {
        let shared = endpoint(true);
        // Behind a port mapping (Agones: host port 7034 for TCP and UDP).
        assert_eq!(
            shared.offer("10.0.0.5:7034").url,
            "https://10.0.0.5:7034/wt"
        );
        assert_eq!(shared.offer("[::1]:7034").url, "https://[::1]:7034/wt");
        // No port in Host: ours.
        assert_eq!(
            shared.offer("example.com").url,
            "https://example.com:8080/wt"
        );
        assert_eq!(shared.offer("[::1]").url, "https://[::1]:8080/wt");
        // By default (a proxy may stand before TCP alone): always ours.
        let apart = endpoint(false);
        assert_eq!(apart.offer("10.0.0.5:7034").url, "https://10.0.0.5:8080/wt");
        assert_eq!(apart.offer("10.0.0.5:7034").certificate_hashes, ["ab"]);
    }
}
