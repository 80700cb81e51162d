//! What goes to one WebTransport client: droppable frames that fit as
//! datagrams straight away, everything else framed on its stream through a
//! queue that a writer task empties. The queue is held to the same
//! [`SlowRule`] as a WebSocket's backlog (frames, bytes, age), and each
//! write to the stream must finish within the send timeout: a client that
//! does not read is a slow consumer.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use skirmish_core::framing::write_message;
use skirmish_core::ErrorCode;
use tokio::sync::Notify;
use tokio::time::timeout;
use wtransport::error::SendDatagramError;
use wtransport::{Connection, SendStream};

use crate::rooms::{Outbound, SendError};
use crate::session::Peer;
use crate::transport::SlowRule;

/// The largest datagram sent or taken: what every browser path carries.
pub const MAX_DATAGRAM_BYTES: usize = 1200;

/// One client's outbound side.
#[derive(Debug)]
pub struct Sender {
    connection: Connection,
    rule: SlowRule,
    /// How long one write to the stream may take.
    write_timeout: Duration,
    state: Mutex<Queue>,
    /// Wakes the writer task.
    queued: Notify,
}

#[derive(Debug, Default)]
struct Queue {
    /// Framed messages for the stream, each with when it was queued.
    frames: VecDeque<(Instant, Vec<u8>)>,
    bytes: usize,
    /// The frame the writer is writing (when it was queued, its size): it
    /// still waits for the client, and the slow rule counts it, as a
    /// WebSocket's partly sent frame is counted.
    writing: Option<(Instant, usize)>,
    /// Finish the stream once the queue is empty.
    finish: bool,
    /// Set when the room drops the client.
    kicked: Option<ErrorCode>,
    /// The stream or the connection failed.
    failed: bool,
    /// The session, waiting for a verdict.
    verdict: Option<Waker>,
}

impl Queue {
    /// What waits for the client, as the slow rule judges it: frames,
    /// bytes and the oldest's time, the frame being written included.
    fn waiting(&self) -> (usize, usize, Option<Instant>) {
        let (frames, bytes) = self.writing.map_or((0, 0), |(_, n)| (1, n));
        let oldest = self.writing.map(|(at, _)| at);
        (
            self.frames.len() + frames,
            self.bytes + bytes,
            oldest.or(self.frames.front().map(|(at, _)| *at)),
        )
    }

    fn wake(&mut self) {
        if let Some(waker) = self.verdict.take() {
            waker.wake();
        }
    }
}

impl Sender {
    /// A sender on `connection` whose stream queue waits under `rule`.
    pub fn new(connection: Connection, rule: SlowRule, write_timeout: Duration) -> Sender {
        Sender {
            connection,
            rule,
            write_timeout,
            state: Mutex::new(Queue::default()),
            queued: Notify::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        // Plain bytes and flags: a panicking holder leaves them usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Finishes the stream after what is queued.
    pub fn finish(&self) {
        self.lock().finish = true;
        self.queued.notify_one();
    }

    /// Writes queued frames to `stream` until the queue finishes or the
    /// client stops taking them (a write longer than the timeout: slow).
    pub async fn write(&self, mut stream: SendStream) {
        loop {
            // `None` with nothing to do yet, `Some(None)` to finish.
            let next = {
                let mut queue = self.lock();
                queue.writing = None;
                match queue.frames.pop_front() {
                    Some((at, bytes)) => {
                        queue.bytes -= bytes.len();
                        queue.writing = Some((at, bytes.len()));
                        Some(Some(bytes))
                    }
                    None if queue.finish => Some(None),
                    None => None,
                }
            };
            let Some(next) = next else {
                self.queued.notified().await;
                continue;
            };
            let Some(bytes) = next else {
                let _ = timeout(self.write_timeout, stream.finish()).await;
                return;
            };
            match timeout(self.write_timeout, stream.write_all(&bytes)).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => {
                    let mut queue = self.lock();
                    queue.failed = true;
                    queue.wake();
                    return;
                }
                Err(_) => {
                    self.kick(ErrorCode::SlowConsumer);
                    return;
                }
            }
        }
    }
}

impl Outbound for Sender {
    fn send(&self, text: bool, payload: &[u8], droppable: bool) -> Result<(), SendError> {
        if droppable && payload.len() <= MAX_DATAGRAM_BYTES {
            match self.connection.send_datagram(payload) {
                Ok(()) => return Ok(()),
                Err(SendDatagramError::TooLarge) => {}
                Err(_) => {
                    // The room drops the client: its session must end too,
                    // not run on outside the room.
                    let mut queue = self.lock();
                    queue.failed = true;
                    queue.wake();
                    return Err(SendError::Closed);
                }
            }
        }
        let mut queue = self.lock();
        if queue.failed || queue.finish {
            return Err(SendError::Closed);
        }
        let now = Instant::now();
        let (count, bytes, oldest) = queue.waiting();
        let size = payload.len() + 5;
        if !self.rule.admits(count, bytes, size, oldest, now) {
            return Err(SendError::Slow);
        }
        let mut framed = Vec::with_capacity(size);
        write_message(text, payload, &mut framed);
        queue.bytes += framed.len();
        queue.frames.push_back((now, framed));
        drop(queue);
        self.queued.notify_one();
        Ok(())
    }

    fn kick(&self, code: ErrorCode) {
        let mut queue = self.lock();
        queue.kicked = Some(code);
        queue.wake();
    }

    fn datagrams(&self) -> bool {
        true
    }
}

impl Peer for Sender {
    fn poll_verdict(&self, cx: &mut Context<'_>) -> Poll<Result<ErrorCode, SendError>> {
        let mut queue = self.lock();
        if let Some(code) = queue.kicked {
            return Poll::Ready(Ok(code));
        }
        if queue.failed {
            return Poll::Ready(Err(SendError::Closed));
        }
        if !queue
            .verdict
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            queue.verdict = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use wtransport::{ClientConfig, Endpoint, Identity, ServerConfig};

    use super::*;

    #[tokio::test]
    async fn a_client_that_does_not_read_its_stream_becomes_slow_and_memory_stays_bounded(
    ) -> anyhow::Result<()> {
        let identity = Identity::self_signed(["localhost", "127.0.0.1"])?;
        let hash = identity
            .certificate_chain()
            .as_slice()
            .first()
            .map(wtransport::tls::Certificate::hash)
            .ok_or_else(|| anyhow::anyhow!("a self-signed identity has a certificate"))?;
        let server = Endpoint::server(
            ServerConfig::builder()
                .with_bind_address("127.0.0.1:0".parse()?)
                .with_identity(identity)
                .build(),
        )?;
        let url = format!("https://127.0.0.1:{}/wt", server.local_addr()?.port());
        let client = Endpoint::client(
            ClientConfig::builder()
                .with_bind_default()
                .with_server_certificate_hashes([hash])
                .build(),
        )?;
        let (connected, accepted) = tokio::join!(client.connect(&url), async {
            server.accept().await.await?.accept().await
        });
        let (client, connection) = (connected?, accepted?);
        // The client opens its stream (one byte makes it seen) and never
        // reads what comes back.
        let (mut up, _never_read) = client.open_bi().await?.await?;
        up.write_all(b"x").await?;
        let (stream, _) = connection.accept_bi().await?;
        let rule = SlowRule {
            max_frames: 4,
            max_bytes: crate::transport::MAX_BACKLOG_BYTES,
            max_age: Some(Duration::from_secs(60)),
        };
        let sender = Arc::new(Sender::new(connection, rule, Duration::from_secs(60)));
        let writer = tokio::spawn({
            let sender = sender.clone();
            async move { sender.write(stream).await }
        });
        let frame = vec![7u8; 64 * 1024];
        let mut sent = 0;
        let verdict = loop {
            match sender.send(false, &frame, false) {
                Ok(()) => sent += 1,
                Err(e) => break e,
            }
            assert!(sent < 10_000, "never slow");
            // Let the writer and the connection take what the client's
            // window allows.
            for _ in 0..20 {
                tokio::task::yield_now().await;
            }
        };
        assert_eq!(verdict, SendError::Slow);
        assert!(
            sent > rule.max_frames,
            "slow after {sent} frames: the writer never drained to the client"
        );
        // The frame the writer is stuck on counts: it has not reached the
        // client either.
        let (count, bytes, _) = sender.lock().waiting();
        assert!(count <= rule.max_frames, "{count} frames wait");
        assert!(bytes <= rule.max_bytes, "{bytes} bytes wait");
        writer.abort();
        Ok(())
    }
}
