//! Replays a room recording into a fresh [`Room`] and checks, at every
//! tick, the hash of everything the room sent: the first tick that differs
//! stops the replay with the calls that led to it.

use std::collections::{BTreeMap, VecDeque};

use crate::server::record::{open_room, RoomCall};
use crate::server::room::{Outbox, Room};
use crate::shared::protocol::Frame;
use crate::shared::record::FormatError;
use crate::shared::state::PlayerId;

/// What a room replay went through.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoomSummary {
    /// The room's name.
    pub name: String,
    /// Ticks replayed and matched.
    pub ticks: u64,
    /// Joins, leaves and messages replayed.
    pub joins: u64,
    /// Leaves replayed.
    pub leaves: u64,
    /// Messages replayed.
    pub messages: u64,
    /// The most players in the room at once.
    pub most_players: usize,
    /// Frames and bytes the room sent.
    pub frames_sent: u64,
    /// Bytes of those frames.
    pub bytes_sent: u64,
    /// Combat events.
    pub combat_events: u64,
}

/// Where a room replay stopped matching.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoomDivergence {
    /// The tick (counted from 1) whose hash differs.
    pub tick: u64,
    /// The calls since the previous tick (the newest 16), with their byte
    /// offsets.
    pub calls: Vec<String>,
    /// The recorded hash.
    pub recorded: u64,
    /// The replayed hash.
    pub replayed: u64,
    /// The replayed room at that tick.
    pub state: String,
}

/// Why a room replay failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RoomReplayError {
    /// The file is not a readable room recording.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// The replay differs from the recording.
    #[error("tick {} differs from the recording", .0.tick)]
    Diverged(Box<RoomDivergence>),
}

fn describe(offset: usize, call: &RoomCall) -> String {
    let what = match call {
        RoomCall::Message(id, message, since) => {
            let text = crate::shared::protocol::encode(message);
            let cut: String = text.chars().take(160).collect();
            format!("receive from {id}, {since:?} after the tick: {cut}")
        }
        other => format!("{other:?}"),
    };
    format!("byte {offset}: {what}")
}

/// Replays a room recording; see the module docs.
///
/// # Errors
/// A damaged, foreign or other-version file, or the first tick that
/// differs.
pub fn replay_room(bytes: &[u8]) -> Result<RoomSummary, RoomReplayError> {
    replay(bytes, None).map(|(summary, _)| summary)
}

/// The frames a room sent to each player, in order.
pub type SentFrames = BTreeMap<PlayerId, Vec<Frame>>;

/// Replays a room recording like [`replay_room`], and keeps every frame
/// the room sent to each player who joined as `name`, in order: what a
/// client's recording of the same session should have received (its
/// `welcome` says which player it was).
///
/// # Errors
/// As [`replay_room`].
pub fn replay_room_for(
    bytes: &[u8],
    name: &str,
) -> Result<(RoomSummary, SentFrames), RoomReplayError> {
    replay(bytes, Some(name))
}

fn replay(bytes: &[u8], name: Option<&str>) -> Result<(RoomSummary, SentFrames), RoomReplayError> {
    let (config, calls) = open_room(bytes)?;
    let mut kept = SentFrames::new();
    let mut summary = RoomSummary {
        name: config.name.clone(),
        ..RoomSummary::default()
    };
    let mut room = Room::recorded(config);
    let mut out = Outbox::new();
    let mut recent: VecDeque<String> = VecDeque::new();
    let mut scratch = Vec::new();
    for item in calls {
        let (offset, call) = item?;
        match &call {
            RoomCall::Join(id, joiner, seating) => {
                summary.joins += 1;
                if name == Some(joiner.as_str()) {
                    kept.entry(*id).or_default();
                }
                let _ = room.join(*id, joiner, *seating, &mut out);
            }
            RoomCall::Leave(id) => {
                summary.leaves += 1;
                room.leave(*id);
            }
            RoomCall::Message(id, message, since) => {
                summary.messages += 1;
                let _ = room.receive_at(*id, message, *since, &mut out);
            }
            RoomCall::Tick(recorded) => {
                room.tick(&mut out);
                summary.ticks += 1;
                let replayed = room.recorder().map_or(0, |r| r.sent_hash());
                if replayed != *recorded {
                    recent.push_back(describe(offset, &call));
                    return Err(RoomReplayError::Diverged(Box::new(RoomDivergence {
                        tick: summary.ticks,
                        calls: recent.into(),
                        recorded: *recorded,
                        replayed,
                        state: format!("{:#?}", room.world()),
                    })));
                }
                recent.clear();
                summary.most_players = summary.most_players.max(room.len());
            }
        }
        if !matches!(call, RoomCall::Tick(_)) {
            if recent.len() >= 16 {
                recent.pop_front();
            }
            recent.push_back(describe(offset, &call));
        }
        for &(to, i) in out.deliveries() {
            if let (Some(frames), Some(frame)) = (kept.get_mut(&to), out.frames().get(i)) {
                frames.push(frame.clone());
            }
            summary.frames_sent += 1;
            summary.bytes_sent += match out.frames().get(i) {
                Some(Frame::Text(t)) => t.len() as u64,
                Some(Frame::Binary(b)) => b.len() as u64,
                None => 0,
            };
        }
        out.clear();
        // The replaying room records too (for its hash); drop the bytes.
        if let Some(r) = room.recorder() {
            r.take(&mut scratch);
            scratch.clear();
        }
    }
    summary.combat_events = room.stats().combat_events;
    Ok((summary, kept))
}
