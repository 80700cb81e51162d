//! Impairment relays on 127.0.0.1 between bots and the server: this machine
//! has no kernel network emulation (no netem), so loss, latency and jitter
//! are injected in user space.
//!
//! - [`UdpRelay`] forwards datagrams (QUIC, so WebTransport) with seeded
//!   loss, latency, jitter (which reorders), and duplication, per direction.
//! - [`TcpRelay`] forwards a byte stream (WebSocket) with latency and jitter
//!   per chunk, in order. Packet loss on TCP cannot be injected here: the
//!   kernel retransmits below us, and without netem nothing can drop a
//!   segment; the relay only delays.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::Result;
use skirmish_core::SeededRng;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UdpSocket};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// What one direction does to what passes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Impairment {
    /// One-way latency, ms.
    pub latency_ms: f64,
    /// Uniform jitter around the latency (plus or minus), ms.
    pub jitter_ms: f64,
    /// Probability a datagram is lost (UDP only).
    pub loss: f64,
    /// Probability a datagram is delivered twice (UDP only).
    pub duplicate: f64,
}

impl Impairment {
    fn delay(&self, rng: &mut SeededRng) -> Duration {
        let jitter = if self.jitter_ms > 0.0 {
            f64::from(rng.range_f32(-self.jitter_ms as f32, self.jitter_ms as f32))
        } else {
            0.0
        };
        Duration::from_secs_f64((self.latency_ms + jitter).max(0.0) / 1000.0)
    }
}

/// Counters of a relay.
#[derive(Debug, Default)]
pub struct RelayStats {
    /// Datagrams or chunks forwarded, each way.
    pub forwarded: u64,
    /// Datagrams dropped.
    pub dropped: u64,
    /// Datagrams duplicated.
    pub duplicated: u64,
}

/// A UDP relay: clients talk to [`UdpRelay::addr`], the relay to the
/// server from one socket per client.
pub struct UdpRelay {
    /// Where clients send.
    pub addr: SocketAddr,
    /// What it did.
    pub stats: Arc<Mutex<RelayStats>>,
    /// The impairments in force, up and down (changed by [`UdpRelay::set`]).
    impairments: Arc<Mutex<(Impairment, Impairment)>>,
    task: JoinHandle<()>,
}

impl Drop for UdpRelay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl UdpRelay {
    /// Relays to `server` with `up` (client to server) and `down`
    /// impairments, seeded.
    ///
    /// # Errors
    /// No socket could be bound.
    pub async fn start(
        server: SocketAddr,
        up: Impairment,
        down: Impairment,
        seed: u64,
    ) -> Result<UdpRelay> {
        let front = Arc::new(UdpSocket::bind("127.0.0.1:0").await?);
        let addr = front.local_addr()?;
        let stats = Arc::new(Mutex::new(RelayStats::default()));
        let impairments = Arc::new(Mutex::new((up, down)));
        let task = tokio::spawn(run_udp(
            front,
            server,
            impairments.clone(),
            seed,
            stats.clone(),
        ));
        Ok(UdpRelay {
            addr,
            stats,
            impairments,
            task,
        })
    }

    /// A handle that changes the impairments while the relay runs.
    pub fn handle(&self) -> RelayHandle {
        RelayHandle(self.impairments.clone())
    }
}

/// Changes a running [`UdpRelay`]'s impairments.
#[derive(Clone, Debug)]
pub struct RelayHandle(Arc<Mutex<(Impairment, Impairment)>>);

impl RelayHandle {
    /// From now on, datagrams are impaired by `up` and `down` (a latency
    /// step; what is already in flight keeps its delay).
    pub fn set(&self, up: Impairment, down: Impairment) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = (up, down);
    }
}

/// Sends `bytes` on `socket` to `to` after the impairment's delay, maybe
/// twice, maybe not at all.
fn impair(
    socket: &Arc<UdpSocket>,
    to: Option<SocketAddr>,
    bytes: &[u8],
    how: &Impairment,
    rng: &mut SeededRng,
    stats: &Mutex<RelayStats>,
) {
    let mut stats = stats.lock().unwrap_or_else(PoisonError::into_inner);
    if how.loss > 0.0 && rng.chance(how.loss as f32) {
        stats.dropped += 1;
        return;
    }
    let copies = if how.duplicate > 0.0 && rng.chance(how.duplicate as f32) {
        stats.duplicated += 1;
        2
    } else {
        1
    };
    stats.forwarded += 1;
    for _ in 0..copies {
        let due = Instant::now() + how.delay(rng);
        let socket = socket.clone();
        let bytes = bytes.to_vec();
        tokio::spawn(async move {
            tokio::time::sleep_until(due).await;
            let _ = match to {
                Some(to) => socket.send_to(&bytes, to).await,
                None => socket.send(&bytes).await,
            };
        });
    }
}

async fn run_udp(
    front: Arc<UdpSocket>,
    server: SocketAddr,
    impairments: Arc<Mutex<(Impairment, Impairment)>>,
    seed: u64,
    stats: Arc<Mutex<RelayStats>>,
) {
    let now = || *impairments.lock().unwrap_or_else(PoisonError::into_inner);
    let mut clients: HashMap<SocketAddr, Arc<UdpSocket>> = HashMap::new();
    let mut rng = SeededRng::new(seed);
    let mut buf = vec![0u8; 65_536];
    let (back_tx, mut back_rx) = mpsc::unbounded_channel::<(SocketAddr, Vec<u8>)>();
    let mut down_rng = SeededRng::new(seed.wrapping_add(1));
    loop {
        tokio::select! {
            received = front.recv_from(&mut buf) => {
                let Ok((n, from)) = received else { return };
                let upstream = if let Some(s) = clients.get(&from) {
                    s.clone()
                } else {
                    let Ok(socket) = UdpSocket::bind("127.0.0.1:0").await else { continue };
                    if socket.connect(server).await.is_err() {
                        continue;
                    }
                    let socket = Arc::new(socket);
                    clients.insert(from, socket.clone());
                    tokio::spawn(read_back(socket.clone(), from, back_tx.clone()));
                    socket
                };
                let bytes = buf.get(..n).unwrap_or_default();
                impair(&upstream, None, bytes, &now().0, &mut rng, &stats);
            }
            Some((to, bytes)) = back_rx.recv() => {
                impair(&front, Some(to), &bytes, &now().1, &mut down_rng, &stats);
            }
        }
    }
}

async fn read_back(
    socket: Arc<UdpSocket>,
    client: SocketAddr,
    back: mpsc::UnboundedSender<(SocketAddr, Vec<u8>)>,
) {
    let mut buf = vec![0u8; 65_536];
    while let Ok(n) = socket.recv(&mut buf).await {
        if back
            .send((client, buf.get(..n).unwrap_or_default().to_vec()))
            .is_err()
        {
            return;
        }
    }
}

/// A TCP relay: clients connect to [`TcpRelay::addr`]; each connection is
/// forwarded to the server with the impairments' latency and jitter, in
/// order.
pub struct TcpRelay {
    /// Where clients connect.
    pub addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Drop for TcpRelay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl TcpRelay {
    /// Relays to `server` with `up` and `down` latency and jitter (loss is
    /// ignored: see the module's docs).
    ///
    /// # Errors
    /// No listener could be bound.
    pub async fn start(
        server: SocketAddr,
        up: Impairment,
        down: Impairment,
        seed: u64,
    ) -> Result<TcpRelay> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            let mut n = 0u64;
            while let Ok((client, _)) = listener.accept().await {
                n += 1;
                let Ok(upstream) = TcpStream::connect(server).await else {
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = upstream.set_nodelay(true);
                let (cr, cw) = client.into_split();
                let (ur, uw) = upstream.into_split();
                tokio::spawn(pipe(cr, uw, up, seed.wrapping_add(2 * n)));
                tokio::spawn(pipe(ur, cw, down, seed.wrapping_add(2 * n + 1)));
            }
        });
        Ok(TcpRelay { addr, task })
    }
}

/// Copies `from` to `to`, each chunk after its delay and never before the
/// chunk ahead of it.
async fn pipe(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    how: Impairment,
    seed: u64,
) {
    let (tx, mut rx) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    let writer = tokio::spawn(async move {
        while let Some((due, bytes)) = rx.recv().await {
            tokio::time::sleep_until(due).await;
            if to.write_all(&bytes).await.is_err() {
                return;
            }
        }
        let _ = to.shutdown().await;
    });
    let mut rng = SeededRng::new(seed);
    let mut last = Instant::now();
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let due = (Instant::now() + how.delay(&mut rng)).max(last);
        last = due;
        if tx
            .send((due, buf.get(..n).unwrap_or_default().to_vec()))
            .is_err()
        {
            break;
        }
    }
    drop(tx);
    let _ = writer.await;
}
