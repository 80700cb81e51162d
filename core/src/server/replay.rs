//! Replays a room recording into a fresh [`Room`] and checks, at every
//! tick, the hash of everything the room sent: the first tick that differs
//! stops the replay with the calls that led to it.
//!
//! A recording is untrusted: [`open_room`] refuses a configuration a room
//! cannot run with in bounded time and memory
//! ([`RoomConfig::validate`](crate::RoomConfig::validate)), and the replay
//! keeps nothing of what the room sent (a watcher of [`replay_room_for`]
//! sees it as it goes), so memory stays bounded however long the file.

use std::collections::VecDeque;

use crate::server::record::{open_room_of, RoomCall, RoomEnd};
use crate::server::room::{Outbox, Room};
use crate::server::world::ServerGame;
use crate::shared::protocol::Frame;
use crate::shared::record::FormatError;

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
    /// Events the room sent.
    pub events: u64,
    /// How the room ended, if the recording says (format 2 on; a file cut
    /// by a crash or an older file does not).
    pub ended: Option<RoomEnd>,
    /// Where the file stops inside a chunk (a record, before format 6; a
    /// crash or a kill cut it): the byte that chunk starts at. The replay
    /// ends there, after the whole ticks before it.
    pub cut_at: Option<usize>,
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

fn describe<W: std::fmt::Debug + serde::Serialize>(offset: usize, call: &RoomCall<W>) -> String {
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

/// Replays a room recording of game `G`; see the module docs. `watch`
/// gets every call as it is replayed with what it made the room send
/// (the frames and their recipients, as the room's shell would have them).
/// The watcher keeps what it needs, say a window of the frames sent to a
/// client whose recording it compares; the replay keeps nothing, so its
/// memory stays bounded however long the recording.
///
/// # Errors
/// A damaged, foreign or other-version file, or the first tick that
/// differs.
pub fn replay_room_of<G: ServerGame>(
    bytes: &[u8],
    mut watch: impl FnMut(&RoomCall<G::Wire>, &Outbox),
) -> Result<RoomSummary, RoomReplayError> {
    let (config, mut calls) = open_room_of::<G>(bytes)?;
    let mut summary = RoomSummary {
        name: config.name.clone(),
        ..RoomSummary::default()
    };
    let mut room = Room::<G>::recorded(config);
    let mut out = Outbox::new();
    let mut recent: VecDeque<String> = VecDeque::new();
    let mut scratch = Vec::new();
    let mut next_record = calls.offset();
    // Not a `for`: the position after each record is read between items.
    #[allow(clippy::while_let_on_iterator)]
    while let Some(item) = calls.next() {
        let (offset, call) = match item {
            Ok(record) => {
                next_record = calls.offset();
                record
            }
            Err(e) if e.is_cut_short() => {
                summary.cut_at = Some(next_record);
                break;
            }
            Err(e) => return Err(e.into()),
        };
        match &call {
            RoomCall::Join(id, joiner, seating) => {
                summary.joins += 1;
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
            RoomCall::End(how) => {
                summary.ended = Some(how.clone());
                break;
            }
        }
        if !matches!(call, RoomCall::Tick(_)) {
            if recent.len() >= 16 {
                recent.pop_front();
            }
            recent.push_back(describe(offset, &call));
        }
        watch(&call, &out);
        for &(_, i) in out.deliveries().iter().chain(out.later()) {
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
    summary.events = room.stats().events;
    Ok(summary)
}
