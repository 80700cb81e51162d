//! The transports: each carries bytes between one client and its session,
//! and nothing else. `ws` is a WebSocket after our own HTTP upgrade; `wt` is
//! WebTransport (HTTP/3 over QUIC) beside it. Neither names the other; both
//! implement the session's [`Transport`](crate::session::Transport) and the
//! rooms' [`Outbound`](crate::rooms::Outbound), and both hold what waits
//! for a slow client to the one [`SlowRule`].

pub mod ws;
pub mod wt;

use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::TcpStream;

use crate::app::AppState;
use crate::config::Limits;
use crate::limits::Permit;
use crate::rooms::{AnyRooms, Hosted, Rooms};

/// A session running to its end.
pub type Running = Pin<Box<dyn Future<Output = ()> + Send>>;

/// One game's way in from a transport: a connection that asked for the
/// game's path is served as a client of its rooms.
/// Its folder is its registry's [`AnyRooms::path`]: `""` at the root
/// (`/ws`, `/wt`), else `/{path}/ws` and `/{path}/wt`.
pub trait Door: AnyRooms {
    /// Serves an upgraded WebSocket (see [`ws::serve`]).
    fn websocket(
        self: Arc<Self>,
        tcp: TcpStream,
        read: Vec<u8>,
        state: Arc<AppState>,
        permit: Arc<Permit>,
    ) -> Running;

    /// Serves an accepted WebTransport session (see [`wt::Link`]).
    fn webtransport(
        self: Arc<Self>,
        link: wt::Link,
        state: Arc<AppState>,
        address: IpAddr,
    ) -> Running;
}

impl<G: Hosted> Door for Rooms<G> {
    fn websocket(
        self: Arc<Self>,
        tcp: TcpStream,
        read: Vec<u8>,
        state: Arc<AppState>,
        permit: Arc<Permit>,
    ) -> Running {
        Box::pin(async move { ws::serve(tcp, read, state, &self, permit).await })
    }

    fn webtransport(
        self: Arc<Self>,
        link: wt::Link,
        state: Arc<AppState>,
        address: IpAddr,
    ) -> Running {
        Box::pin(async move { crate::session::serve(&state, &self, link, address).await })
    }
}

/// The door of the game whose path `path` asks for with `end` (`ws` or
/// `wt`): `/ws` for the first game, `/walkers/ws` for a game in the
/// folder `walkers`.
pub fn door<'d>(doors: &'d [Arc<dyn Door>], path: &str, end: &str) -> Option<&'d Arc<dyn Door>> {
    let folder = path.strip_prefix('/')?.strip_suffix(end)?;
    let folder = match folder {
        "" => "",
        folder => folder.strip_suffix('/')?,
    };
    doors.iter().find(|d| d.path() == folder)
}

/// The largest message or frame a client may send; frames announcing more
/// end the connection from their header, before they are buffered. Between
/// [`skirmish_core::MAX_FRAME_BYTES`] and this, a message gets `too_large`.
pub const TRANSPORT_LIMIT: usize = 8 * skirmish_core::MAX_FRAME_BYTES;
/// The most bytes one client's backlog may hold, whatever its frame budget.
pub const MAX_BACKLOG_BYTES: usize = 1024 * 1024;

/// When a client is a slow consumer, whatever carries its frames: what
/// waits for it may hold at most so many frames and bytes, none older than
/// an age.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(clippy::struct_field_names)] // Each is a maximum; `frames` alone would read as a count.
pub struct SlowRule {
    /// Frames that may wait.
    pub max_frames: usize,
    /// Bytes that may wait.
    pub max_bytes: usize,
    /// How long the oldest waiting frame may wait; `None` for no bound.
    pub max_age: Option<Duration>,
}

impl SlowRule {
    /// The rule for the room's frames: `--outbox-capacity` frames,
    /// [`MAX_BACKLOG_BYTES`], `--send-timeout`.
    pub fn for_room(limits: &Limits) -> SlowRule {
        SlowRule {
            max_frames: limits.outbox_capacity.max(1),
            max_bytes: MAX_BACKLOG_BYTES,
            max_age: Some(limits.send_timeout),
        }
    }

    /// The rule for a connection's own few frames (errors, close, answers
    /// to pings): twice the counts and no age, so a verdict can still be
    /// told.
    pub fn for_connection(self) -> SlowRule {
        SlowRule {
            max_frames: 2 * self.max_frames,
            max_bytes: 2 * self.max_bytes,
            max_age: None,
        }
    }

    /// Whether `size` more bytes may join `frames` frames of `bytes` bytes
    /// that have waited since `since` (as of `now`).
    pub fn admits(
        &self,
        frames: usize,
        bytes: usize,
        size: usize,
        since: Option<Instant>,
        now: Instant,
    ) -> bool {
        let fresh = self
            .max_age
            .zip(since)
            .is_none_or(|(age, since)| now.saturating_duration_since(since) <= age);
        frames < self.max_frames && bytes + size <= self.max_bytes && fresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_bytes_and_age_each_make_a_client_slow() {
        let rule = SlowRule {
            max_frames: 4,
            max_bytes: 1000,
            max_age: Some(Duration::from_secs(2)),
        };
        let now = Instant::now();
        let fresh = Some(now);
        assert!(rule.admits(3, 900, 100, fresh, now));
        assert!(!rule.admits(4, 0, 1, fresh, now), "frames");
        assert!(!rule.admits(1, 900, 101, fresh, now), "bytes");
        let old = now.checked_sub(Duration::from_secs(3));
        assert!(!rule.admits(1, 10, 10, old, now), "age");
        let own = rule.for_connection();
        assert!(
            own.admits(7, 1900, 100, old, now),
            "no age, twice the counts"
        );
        assert!(!own.admits(8, 0, 1, old, now));
    }
}
