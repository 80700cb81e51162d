//! A client's TCP socket after the WebSocket upgrade, shared by two writers:
//! its room, which writes each tick's frames straight to the socket, and its
//! session task, which reads frames and writes answers to pings and the
//! close frame.
//!
//! Every byte for the client goes through one [`Writer`]: a frame is written
//! with one `send` (a small frame copied whole into one buffer, a large one
//! vectored) when nothing is waiting; what the socket does not take goes into
//! a bounded backlog that the session task drains when the socket is
//! writable. Frames are only ever appended whole, under the writer's lock,
//! so the room's frames and the session's never interleave inside a frame.
//! The room therefore needs no channel and wakes no task to send a
//! snapshot: per client per tick it costs one system call.
//!
//! A client whose backlog breaks the [`SlowRule`] (frames, bytes, age) is a
//! slow consumer: the room drops it.

use std::collections::VecDeque;
use std::io::{self, IoSlice};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use tokio::net::TcpStream;

use skirmish_core::ErrorCode;

use super::frames::{header, Opcode};
use crate::rooms::{Outbound, SendError};
use crate::session::Peer;
use crate::transport::SlowRule;
/// Frames up to this size are copied into one buffer for a plain `send`.
const SMALL_FRAME: usize = 512;
/// A backlog's buffer larger than this is freed once it drains.
const KEEP_BYTES: usize = 64 * 1024;

/// The single way bytes reach one client.
#[derive(Debug)]
pub struct Writer {
    stream: Arc<TcpStream>,
    rule: SlowRule,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Bytes the socket has not taken yet, from `start` on.
    backlog: Vec<u8>,
    start: usize,
    /// Where each waiting frame ends in `backlog`, and when it was queued:
    /// the front's time is the age the [`SlowRule`] judges, as the
    /// WebTransport sender's oldest frame is.
    ends: VecDeque<(usize, Instant)>,
    /// The connection task, parked until there is something to drain or a
    /// verdict to hear.
    drainer: Option<Waker>,
    /// Set when the room drops the client.
    kicked: Option<ErrorCode>,
    closed: bool,
}

impl State {
    fn waiting(&self) -> bool {
        self.start < self.backlog.len()
    }

    /// Forgets the `n` bytes the socket took.
    fn consumed(&mut self, n: usize) {
        self.start += n;
        while self.ends.front().is_some_and(|&(end, _)| end <= self.start) {
            self.ends.pop_front();
        }
        if !self.waiting() {
            self.backlog.clear();
            if self.backlog.capacity() > KEEP_BYTES {
                // A client that caught up does not keep its peak.
                self.backlog = Vec::new();
            }
            self.start = 0;
            self.ends.clear();
        }
    }

    /// Bytes waiting.
    fn waiting_bytes(&self) -> usize {
        self.backlog.len() - self.start
    }

    fn wake(&mut self) {
        if let Some(waker) = self.drainer.take() {
            waker.wake();
        }
    }
}

impl Writer {
    /// A writer for `stream` whose room frames wait under `rule`.
    pub fn new(stream: Arc<TcpStream>, rule: SlowRule) -> Arc<Writer> {
        Arc::new(Writer {
            stream,
            rule,
            state: Mutex::new(State::default()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Plain bytes and counters: a panicking holder leaves them usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends one WebSocket data frame (`text` or binary) carrying `payload`.
    ///
    /// # Errors
    /// [`SendError::Slow`] if the client is not keeping up (nothing is
    /// queued then), [`SendError::Closed`] if the socket is gone.
    pub fn send(&self, text: bool, payload: &[u8]) -> Result<(), SendError> {
        let opcode = if text { Opcode::Text } else { Opcode::Binary };
        self.frame(opcode, payload, Budget::Room)
    }

    /// Sends the connection's own control frame (a pong, a close) within
    /// [`SlowRule::for_connection`].
    ///
    /// # Errors
    /// As [`Writer::send`].
    pub fn control(&self, opcode: Opcode, payload: &[u8]) -> Result<(), SendError> {
        self.frame(opcode, payload, Budget::Connection)
    }

    fn frame(&self, opcode: Opcode, payload: &[u8], budget: Budget) -> Result<(), SendError> {
        let mut head = [0u8; 10];
        let used = header(opcode, payload.len(), &mut head);
        self.write_frame(&[&head[..used], payload], budget)
    }

    /// Sends what waits, for as long as the socket takes it.
    pub async fn flush(&self) -> io::Result<()> {
        std::future::poll_fn(|cx| self.poll_flushed(cx)).await
    }

    /// Writes one whole frame given in parts, or queues what the socket
    /// does not take, within `budget`.
    fn write_frame(&self, parts: &[&[u8]], budget: Budget) -> Result<(), SendError> {
        let mut state = self.lock();
        if state.closed {
            return Err(SendError::Closed);
        }
        let size: usize = parts.iter().map(|p| p.len()).sum();
        let rule = match budget {
            Budget::Room => self.rule,
            Budget::Connection => self.rule.for_connection(),
        };
        // The byte cap binds one frame too: a frame larger than a whole
        // backlog may hold is never queued, waiting or not.
        if size > rule.max_bytes {
            return Err(SendError::Slow);
        }
        if state.waiting() {
            let now = Instant::now();
            let oldest = state.ends.front().map(|&(_, at)| at);
            let over = !rule.admits(state.ends.len(), state.waiting_bytes(), size, oldest, now);
            if over {
                return Err(SendError::Slow);
            }
            queue(&mut state, parts, 0, now);
            return Ok(());
        }
        let total = size;
        let written = match self.write_now(parts, total) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => 0,
            Err(_) => {
                state.closed = true;
                state.wake();
                return Err(SendError::Closed);
            }
        };
        if written < total {
            queue(&mut state, parts, written, Instant::now());
            state.wake();
        }
        Ok(())
    }

    /// One write of a whole frame: a small one copied into one buffer and
    /// written with `send` (one piece for the kernel instead of `writev`'s
    /// two; its gain alone was not measured), a large one vectored.
    fn write_now(&self, parts: &[&[u8]], total: usize) -> io::Result<usize> {
        if total <= SMALL_FRAME {
            let mut buffer = [0u8; SMALL_FRAME];
            let mut at = 0;
            for part in parts {
                buffer[at..at + part.len()].copy_from_slice(part);
                at += part.len();
            }
            return self.stream.try_write(&buffer[..at]);
        }
        let slices: Vec<IoSlice<'_>> = parts.iter().map(|p| IoSlice::new(p)).collect();
        self.stream.try_write_vectored(&slices)
    }

    /// Tells the connection task that the room dropped its client.
    pub fn kick(&self, code: ErrorCode) {
        let mut state = self.lock();
        state.kicked = Some(code);
        state.wake();
    }

    /// Writes what waits while the socket takes it; resolves only with the
    /// room's verdict or a failure, so the connection task can poll it in
    /// its loop for as long as the connection lives.
    pub fn poll_drain(&self, cx: &mut Context<'_>) -> Poll<Result<ErrorCode, SendError>> {
        loop {
            {
                let mut state = self.lock();
                if let Some(code) = state.kicked {
                    return Poll::Ready(Ok(code));
                }
                if state.closed {
                    return Poll::Ready(Err(SendError::Closed));
                }
                // Parked before draining: a frame queued or a verdict given
                // from here on wakes this task.
                if !state
                    .drainer
                    .as_ref()
                    .is_some_and(|w| w.will_wake(cx.waker()))
                {
                    state.drainer = Some(cx.waker().clone());
                }
                if !state.waiting() {
                    return Poll::Pending;
                }
            }
            match self.poll_flushed(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(_)) => return Poll::Ready(Err(SendError::Closed)),
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// Writes what waits; ready once nothing waits (or the socket failed).
    fn poll_flushed(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            let mut state = self.lock();
            if state.closed {
                return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
            }
            if !state.waiting() {
                return Poll::Ready(Ok(()));
            }
            match self.stream.try_write(&state.backlog[state.start..]) {
                Ok(n) => state.consumed(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    drop(state);
                    if self.stream.poll_write_ready(cx)?.is_pending() {
                        return Poll::Pending;
                    }
                }
                Err(e) => {
                    state.closed = true;
                    return Poll::Ready(Err(e));
                }
            }
        }
    }
}

/// Which rule a frame waits under.
#[derive(Clone, Copy)]
enum Budget {
    /// The room's frames and the session's errors: the client's rule.
    Room,
    /// The connection's own few frames (close, answers to WebSocket pings):
    /// [`SlowRule::for_connection`]; a client that sends pings without
    /// reading the answers ends there.
    Connection,
}

impl Outbound for Writer {
    fn send(&self, text: bool, payload: &[u8], _droppable: bool) -> Result<(), SendError> {
        Writer::send(self, text, payload)
    }

    fn kick(&self, code: ErrorCode) {
        Writer::kick(self, code);
    }
}

impl Peer for Writer {
    fn poll_verdict(&self, cx: &mut Context<'_>) -> Poll<Result<ErrorCode, SendError>> {
        self.poll_drain(cx)
    }
}

/// Appends the parts of a frame, from byte `skip` on, to the backlog, as
/// queued `now`.
fn queue(state: &mut State, parts: &[&[u8]], mut skip: usize, now: Instant) {
    for part in parts {
        let from = skip.min(part.len());
        state.backlog.extend_from_slice(&part[from..]);
        skip -= from;
    }
    let end = state.backlog.len();
    state.ends.push_back((end, now));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tokio::io::AsyncReadExt;
    use tokio::net::TcpListener;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
    use tokio_tungstenite::tungstenite::protocol::frame::FrameHeader;

    fn rule(max_frames: usize, max_age: Duration) -> SlowRule {
        SlowRule {
            max_frames,
            max_bytes: crate::transport::MAX_BACKLOG_BYTES,
            max_age: Some(max_age),
        }
    }

    async fn pair() -> io::Result<(Arc<TcpStream>, TcpStream)> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let client = TcpStream::connect(listener.local_addr()?).await?;
        let (server, _) = listener.accept().await?;
        Ok((Arc::new(server), client))
    }

    /// The age the slow rule judges is that of the oldest frame still
    /// waiting (a frame partly sent still waits), not how long the backlog
    /// has been non-empty: a client that drains nearly everything each
    /// tick is never too late.
    #[test]
    fn the_age_judged_is_the_oldest_waiting_frame() {
        let mut state = State::default();
        let t0 = Instant::now();
        let t1 = t0 + Duration::from_secs(1);
        queue(&mut state, &[b"ab"], 0, t0);
        queue(&mut state, &[b"c", b"d"], 0, t1);
        let oldest = |state: &State| state.ends.front().map(|&(_, at)| at);
        state.consumed(1);
        assert_eq!(oldest(&state), Some(t0));
        state.consumed(1);
        assert_eq!(oldest(&state), Some(t1));
        queue(&mut state, &[b"ef"], 0, t1 + Duration::from_secs(1));
        state.consumed(2);
        assert_eq!(oldest(&state), Some(t1 + Duration::from_secs(1)));
        state.consumed(2);
        assert_eq!(oldest(&state), None);
    }

    #[tokio::test]
    async fn frames_arrive_whole_with_headers_tungstenite_parses() -> io::Result<()> {
        let (server, mut client) = pair().await?;
        let writer = Writer::new(server, rule(8, Duration::from_secs(2)));
        for len in [0usize, 125, 126, 65_535, 65_536] {
            let payload = vec![7u8; len];
            writer
                .send(false, &payload)
                .map_err(|e| io::Error::other(format!("{e:?}")))?;
            let mut got = Vec::new();
            let (header, length) = loop {
                let mut byte = [0u8; 1];
                client.read_exact(&mut byte).await?;
                got.push(byte[0]);
                let mut cursor = io::Cursor::new(&got);
                if let Some(parsed) = FrameHeader::parse(&mut cursor).map_err(io::Error::other)? {
                    break parsed;
                }
            };
            assert_eq!(header.opcode, OpCode::Data(Data::Binary));
            assert!(header.is_final && header.mask.is_none());
            assert_eq!(length, len as u64);
            let mut body = vec![0u8; len];
            client.read_exact(&mut body).await?;
            assert_eq!(body, payload);
        }
        Ok(())
    }

    #[tokio::test]
    async fn a_client_that_does_not_read_becomes_slow_and_memory_stays_bounded() -> io::Result<()> {
        let (server, _client) = pair().await?;
        let writer = Writer::new(server, rule(4, Duration::from_secs(60)));
        let frame = vec![1u8; 64 * 1024];
        let mut sent = 0;
        let verdict = loop {
            match writer.send(false, &frame) {
                Ok(()) => sent += 1,
                Err(e) => break e,
            }
            assert!(sent < 10_000, "never slow");
        };
        assert_eq!(verdict, SendError::Slow);
        let waiting = writer.lock().ends.len();
        assert_eq!(waiting, 4, "at most the budget waits");
        Ok(())
    }

    /// A frame larger than the whole backlog may hold is refused even with
    /// nothing waiting: it is never queued (it was, whole, once).
    #[tokio::test]
    async fn a_frame_past_the_byte_cap_is_refused_whole() -> io::Result<()> {
        let (server, _client) = pair().await?;
        let writer = Writer::new(server, rule(8, Duration::from_secs(60)));
        let huge = vec![1u8; crate::transport::MAX_BACKLOG_BYTES + 1];
        assert_eq!(writer.send(false, &huge), Err(SendError::Slow));
        assert_eq!(writer.lock().ends.len(), 0, "nothing queued");
        writer
            .send(false, &[1, 2, 3])
            .map_err(|e| io::Error::other(format!("{e:?}")))?;
        Ok(())
    }
}
