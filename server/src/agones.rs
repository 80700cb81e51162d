//! Running as an Agones game server (`--agones`, cargo feature `agones`).
//!
//! Agones runs each server in a pod beside an SDK sidecar and talks to it
//! over gRPC on `localhost:$AGONES_SDK_GRPC_PORT`. The server:
//!
//! - connects to the sidecar before it binds, retrying for
//!   `--agones-connect-timeout`, and exits saying why if it cannot;
//! - calls `Ready` once, after its listener is bound (rooms can be joined);
//! - sends a health ping every 2 s while every room's tick is on time; a
//!   room that has not finished a tick for more than a second stops the
//!   pings, so Agones marks the server `Unhealthy` after its
//!   `failureThreshold`;
//! - publishes its occupancy on every change: the Counters `rooms` and
//!   `players` (count, and capacity at start) and the label `rooms`;
//! - watches its `GameServer`: an allocation whose metadata carries the
//!   annotation [`ROOM_ANNOTATION`] opens that room, ready for its players;
//! - on SIGTERM, or `--agones-shutdown-when-empty` seconds without players
//!   after an allocation, stops accepting, tells its clients why, closes
//!   their connections, then calls `Shutdown`.
//!
//! This file holds the settings and the decisions, which are plain
//! functions of what the server sees and when; `agones/sdk.rs` (only with
//! the feature) carries them out against the real SDK. Without the feature
//! `--agones` refuses to start and says how to build it.

use std::time::{Duration, Instant};

pub use crate::config::AgonesSettings;

#[cfg(feature = "agones")]
mod publish;
#[cfg(feature = "agones")]
mod sdk;

#[cfg(feature = "agones")]
pub use sdk::Agones;

/// The `GameServer` annotation that names the room an allocation is for
/// (set in the `GameServerAllocation`'s `metadata.annotations`).
pub const ROOM_ANNOTATION: &str = "skirmish.dev/room";
/// The `GameServer` annotation that names the game of the allocated room
/// (its name, `Game::NAME`, or the path it is hosted at); without it, the
/// game hosted first.
pub const GAME_ANNOTATION: &str = "skirmish.dev/game";
/// The Agones Counter of open rooms (and of the most rooms, as capacity).
pub const ROOMS_COUNTER: &str = "rooms";
/// The Agones Counter of seated players.
pub const PLAYERS_COUNTER: &str = "players";
/// The label (`agones.dev/sdk-rooms` on the `GameServer`) with the room count.
pub const ROOMS_LABEL: &str = "rooms";

/// Whether a health ping is due: every room finished a tick within
/// `stall_after` (`slowest` is the longest any room has gone without one).
pub fn healthy(slowest: Option<Duration>, stall_after: Duration) -> bool {
    slowest.is_none_or(|since| since <= stall_after)
}

/// What the server publishes about its occupancy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Occupancy {
    /// Open rooms.
    pub rooms: i64,
    /// Seated players.
    pub players: i64,
}

/// One call that brings Agones up to date.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Update {
    /// Set a Counter's count.
    Count(&'static str, i64),
    /// Set a label.
    Label(&'static str, String),
}

/// The calls that bring Agones from `published` (nothing yet: `None`) to
/// `now`; counts are set, not incremented, so a lost or repeated update
/// cannot leave the counters wrong.
pub fn updates(published: Option<Occupancy>, now: Occupancy) -> Vec<Update> {
    let mut calls = Vec::new();
    if published.map(|p| p.rooms) != Some(now.rooms) {
        calls.push(Update::Count(ROOMS_COUNTER, now.rooms));
        calls.push(Update::Label(ROOMS_LABEL, now.rooms.to_string()));
    }
    if published.map(|p| p.players) != Some(now.players) {
        calls.push(Update::Count(PLAYERS_COUNTER, now.players));
    }
    calls
}

/// The room an allocation asks for, if its annotation names one.
pub fn allocated_room<'a>(
    mut annotations: impl Iterator<Item = (&'a String, &'a String)>,
) -> Option<&'a str> {
    annotations
        .find(|(key, _)| key.as_str() == ROOM_ANNOTATION)
        .map(|(_, room)| room.trim())
        .filter(|room| !room.is_empty())
}

/// The game an allocation asks for, if its annotation names one.
pub fn allocated_game<'a>(
    mut annotations: impl Iterator<Item = (&'a String, &'a String)>,
) -> Option<&'a str> {
    annotations
        .find(|(key, _)| key.as_str() == GAME_ANNOTATION)
        .map(|(_, game)| game.trim())
        .filter(|game| !game.is_empty())
}

/// When `--agones-shutdown-when-empty` is due: the server was allocated
/// and has had no players for the whole period since.
#[derive(Clone, Debug)]
pub struct EmptyDrain {
    after: Option<Duration>,
    /// Since when the server has been allocated and empty.
    empty_since: Option<Instant>,
}

impl EmptyDrain {
    /// A drain after `after` (never without it).
    pub fn new(after: Option<Duration>) -> EmptyDrain {
        EmptyDrain {
            after,
            empty_since: None,
        }
    }

    /// Notes what the server looks like at `now`.
    pub fn observe(&mut self, allocated: bool, players: i64, now: Instant) {
        if allocated && players == 0 {
            self.empty_since.get_or_insert(now);
        } else {
            self.empty_since = None;
        }
    }

    /// A new allocation came: players are on their way, so the empty
    /// period starts again.
    pub fn allocated_again(&mut self) {
        self.empty_since = None;
    }

    /// Whether the server should drain at `now`.
    pub fn due(&self, now: Instant) -> bool {
        match (self.after, self.empty_since) {
            (Some(after), Some(since)) => now.saturating_duration_since(since) >= after,
            _ => false,
        }
    }
}

/// Without the `agones` feature: `--agones` cannot start.
#[cfg(not(feature = "agones"))]
#[derive(Debug)]
pub enum Agones {}

#[cfg(not(feature = "agones"))]
impl Agones {
    /// Always fails: this build has no Agones SDK.
    ///
    /// # Errors
    /// Always, saying how to build a server that has it.
    #[allow(clippy::unused_async)]
    pub async fn connect(_settings: &AgonesSettings) -> anyhow::Result<Agones> {
        anyhow::bail!(
            "--agones needs a server built with the `agones` feature \
             (`cargo build --release -p skirmish-server --features agones`, which needs protoc)"
        )
    }

    /// Never called: no `Agones` exists without the feature.
    ///
    /// # Errors
    /// Never.
    #[allow(clippy::unused_async)]
    pub async fn run(
        self,
        _server: crate::server::RunningServer,
        _stop: impl std::future::Future<Output = ()>,
    ) -> anyhow::Result<()> {
        match self {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn health_stops_only_while_a_room_is_late() {
        let limit = Duration::from_secs(1);
        assert!(healthy(None, limit), "no rooms is healthy");
        assert!(healthy(Some(Duration::from_millis(50)), limit));
        assert!(healthy(Some(limit), limit));
        assert!(!healthy(Some(Duration::from_millis(1001)), limit));
    }

    #[test]
    fn updates_set_only_what_changed() {
        let first = updates(
            None,
            Occupancy {
                rooms: 0,
                players: 0,
            },
        );
        assert_eq!(
            first,
            vec![
                Update::Count(ROOMS_COUNTER, 0),
                Update::Label(ROOMS_LABEL, "0".into()),
                Update::Count(PLAYERS_COUNTER, 0),
            ]
        );
        let a = Occupancy {
            rooms: 1,
            players: 3,
        };
        assert!(updates(Some(a), a).is_empty());
        assert_eq!(
            updates(Some(a), Occupancy { players: 2, ..a }),
            vec![Update::Count(PLAYERS_COUNTER, 2)]
        );
        assert_eq!(
            updates(Some(a), Occupancy { rooms: 2, ..a }),
            vec![
                Update::Count(ROOMS_COUNTER, 2),
                Update::Label(ROOMS_LABEL, "2".into())
            ]
        );
    }

    #[test]
    fn the_room_comes_from_its_annotation() {
        let mut meta = BTreeMap::new();
        meta.insert("other".to_string(), "x".to_string());
        assert_eq!(allocated_room(meta.iter()), None);
        meta.insert(ROOM_ANNOTATION.to_string(), "  ".to_string());
        assert_eq!(allocated_room(meta.iter()), None);
        meta.insert(ROOM_ANNOTATION.to_string(), "final-7".to_string());
        assert_eq!(allocated_room(meta.iter()), Some("final-7"));
        assert_eq!(allocated_game(meta.iter()), None);
        meta.insert(GAME_ANNOTATION.to_string(), " blobs ".to_string());
        assert_eq!(allocated_game(meta.iter()), Some("blobs"));
    }

    #[test]
    fn drain_waits_for_an_allocation_and_a_whole_empty_period() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut drain = EmptyDrain::new(Some(10 * s));
        drain.observe(false, 0, t0);
        assert!(!drain.due(t0 + 60 * s), "never before an allocation");
        drain.observe(true, 2, t0 + s);
        assert!(!drain.due(t0 + 60 * s), "never with players");
        drain.observe(true, 0, t0 + 2 * s);
        assert!(!drain.due(t0 + 11 * s));
        drain.observe(true, 1, t0 + 5 * s);
        drain.observe(true, 0, t0 + 6 * s);
        assert!(!drain.due(t0 + 15 * s), "a player in between restarts it");
        assert!(drain.due(t0 + 16 * s));
        drain.allocated_again();
        drain.observe(true, 0, t0 + 17 * s);
        assert!(!drain.due(t0 + 26 * s), "a new allocation restarts it");
        assert!(drain.due(t0 + 27 * s));
        let never = EmptyDrain::new(None);
        assert!(!never.due(t0 + 1000 * s));
    }

    #[test]
    fn defaults_are_off_with_the_documented_port() {
        let settings = crate::config::ServerConfig::default().agones;
        assert!(!settings.enabled);
        assert_eq!(settings.health_every, Duration::from_secs(2));
        assert_eq!(settings.stall_after, Duration::from_secs(1));
        assert_eq!(settings.shutdown_when_empty, None);
    }
}
