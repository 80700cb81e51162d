//! The room recorder: what enters a [`Room`](crate::Room) (joins, leaves,
//! decoded messages with when they arrived after the last tick, ticks), and
//! at every tick a running hash of everything the room sent since the last
//! one. [`RoomRecorder`] writes; [`RoomCall`] and [`RoomCalls`] read back.
//! The shell drains the bytes into files (`--record DIR`).
//!
//! The records go in checksummed chunks (format 6), one a tick: the calls
//! since the last tick and the tick (sealed too whenever the shell takes
//! the bytes, which the server does after every tick). The checksum is
//! CRC-32C over the tick's bytes as they are written, nothing more on the
//! tick's path.

use std::time::Duration;

use std::marker::PhantomData;

use serde::de::DeserializeOwned;

use crate::server::room::{Outbox, RoomConfig, Seating};
use crate::server::world::ServerGame;
use crate::shared::protocol::{
    check_inputs, check_room_name, decode_client, decode_client_frame, encode, ClientMessage,
    Encoding, Frame, GameId, MAX_ROOM_CHARS,
};
use crate::shared::protocol::{from_json, MAX_INPUTS_PER_MESSAGE};
use crate::shared::record::{FormatError, Kind, Reader, RecordWriter, Records, StateHash, Writer};
use crate::shared::state::PlayerId;
use crate::shared::tick::Tick;
use crate::shared::wired::{Wired, GAME_BITS};

const JOIN: u8 = 1;
const LEAVE: u8 = 2;
const INPUT: u8 = 3;
const MESSAGE: u8 = 4;
const TICK: u8 = 5;
const END: u8 = 6;
const FRAME: u8 = 7;
/// An input message with its sequence number (format 3): as [`INPUT`],
/// the number after the acknowledgement.
const NUMBERED_INPUT: u8 = 8;
/// An input's head bit: its view follows (an `f64`, exactly).
const VIEW: u8 = 0x20;

/// How a recorded room ended, as its last record says (format 2 on).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RoomEnd {
    /// It closed after being empty.
    Emptied,
    /// The server shut down and told its players.
    ShutDown,
    /// A tick failed (a panic, with its message): the room was closed and
    /// its players told; what was recorded up to the failing tick is all
    /// there is.
    Failed(String),
}

/// One call into a room, as recorded (of a game whose inputs travel as
/// `W`).
#[derive(Clone, Debug, PartialEq)]
pub enum RoomCall<W> {
    /// `join(id, name, seating)`.
    Join(PlayerId, String, Seating),
    /// `leave(id)`.
    Leave(PlayerId),
    /// `receive_at(id, message, since)`.
    Message(PlayerId, ClientMessage<W>, Duration),
    /// `tick()`, with the hash of what the room sent up to it.
    Tick(u64),
    /// The room ended; nothing follows.
    End(RoomEnd),
}

/// Records a room's calls; the shell takes the bytes out as it goes.
#[derive(Clone, Debug)]
pub struct RoomRecorder {
    w: RecordWriter,
    sent: StateHash,
}

impl RoomRecorder {
    /// A recorder of a room set up with `config` (the header is the first
    /// bytes to take), and the configuration as the replay will read it.
    pub fn new<G: ServerGame>(config: RoomConfig<G>) -> (RoomRecorder, RoomConfig<G>) {
        let json = encode(&config);
        let config = from_json(&json).unwrap_or(config);
        let w = RecordWriter::new(Kind::Room, &GameId::of::<G>(), json.as_bytes());
        let recorder = RoomRecorder {
            w,
            sent: StateHash::default(),
        };
        (recorder, config)
    }

    /// Moves the bytes recorded so far to the end of `into`: whole
    /// chunks, the open one sealed.
    pub fn take(&mut self, into: &mut Vec<u8>) {
        self.w.take(into);
    }

    /// Bytes recorded and not taken yet.
    pub(crate) fn pending(&self) -> usize {
        self.w.len()
    }

    /// The running hash of what the room sent.
    pub fn sent_hash(&self) -> u64 {
        self.sent.0
    }

    pub(crate) fn join(&mut self, id: PlayerId, name: &str, seating: Seating) {
        self.w.record(|w| {
            w.u8(JOIN);
            w.varint(u64::from(id.0));
            w.text(name);
            w.u8(u8::from(seating.encoding == Encoding::Compact)
                | u8::from(seating.datagrams) << 1
                | u8::from(seating.binary_control) << 2);
            w.varint(u64::from(seating.protocol));
        });
    }

    pub(crate) fn leave(&mut self, id: PlayerId) {
        self.w.record(|w| {
            w.u8(LEAVE);
            w.varint(u64::from(id.0));
        });
    }

    pub(crate) fn message<W: Wired + serde::Serialize>(
        &mut self,
        id: PlayerId,
        message: &ClientMessage<W>,
        since: Duration,
    ) {
        self.w.record(|w| write_message(w, id, message, since));
    }

    /// A message as its frame arrived (format 2): its bytes, never a
    /// larger re-encoding, decoded again on replay.
    pub(crate) fn frame(&mut self, id: PlayerId, text: bool, payload: &[u8], since: Duration) {
        self.w.record(|w| {
            w.u8(FRAME);
            w.varint(u64::from(id.0));
            w.varint(u64::try_from(since.as_nanos()).unwrap_or(u64::MAX));
            w.u8(u8::from(text));
            w.byte_string(payload);
        });
    }

    /// A tick, with the hash of everything sent up to and with it; its
    /// chunk ends with it.
    pub(crate) fn tick(&mut self) {
        let sent = self.sent.0;
        self.w.record(|w| {
            w.u8(TICK);
            w.u64(sent);
        });
        self.w.seal();
    }

    /// The last record: how the room ended.
    pub fn end(&mut self, how: &RoomEnd) {
        self.w.record(|w| {
            w.u8(END);
            match how {
                RoomEnd::Emptied => w.u8(0),
                RoomEnd::ShutDown => w.u8(1),
                RoomEnd::Failed(why) => {
                    w.u8(2);
                    // A panic message is the server's own text; bounded anyway.
                    let cut = why.char_indices().nth(512).map_or(why.len(), |(i, _)| i);
                    w.text(&why[..cut]);
                }
            }
        });
    }

    /// Folds what the last call added to `out` (from frame `frames` and
    /// delivery `deliveries` on) into the hash of what was sent.
    pub(crate) fn sent(&mut self, out: &Outbox, frames: usize, deliveries: usize) {
        fold_sent(&mut self.sent, out, frames, deliveries);
    }
}

/// Folds the frames and deliveries `out` holds past the given counts.
pub(crate) fn fold_sent(h: &mut StateHash, out: &Outbox, frames: usize, deliveries: usize) {
    for frame in out.frames().get(frames..).unwrap_or_default() {
        match frame {
            Frame::Text(text) => h.bytes(text.as_bytes()),
            Frame::Binary(bytes) => h.bytes(bytes),
        }
    }
    for &(to, i) in out.deliveries().get(deliveries..).unwrap_or_default() {
        h.word(u64::from(to.0) << 32 | (i - frames.min(i)) as u64);
    }
}

fn write_message<W: Wired + serde::Serialize>(
    w: &mut Writer,
    id: PlayerId,
    message: &ClientMessage<W>,
    since: Duration,
) {
    let since = u64::try_from(since.as_nanos()).unwrap_or(u64::MAX);
    match message {
        ClientMessage::Input {
            inputs,
            snapshot_ack,
            seq,
        } => {
            w.u8(if seq.is_some() { NUMBERED_INPUT } else { INPUT });
            w.varint(u64::from(id.0));
            w.varint(since);
            w.varint(snapshot_ack.map_or(0, |t| u64::from(t.0) + 1));
            if let Some(seq) = seq {
                w.varint(u64::from(*seq));
            }
            w.varint(inputs.len() as u64);
            for input in inputs {
                w.varint(u64::from(input.tick().0));
                // The head is filled once the game has written its bytes.
                let at = w.bytes.len();
                w.u8(0);
                let view = input.view_tick();
                let bits = input.write_bits(&mut w.bytes) & GAME_BITS;
                w.bytes[at] = bits | if view.is_some() { VIEW } else { 0 };
                if let Some(v) = view {
                    w.f64(v);
                }
            }
        }
        other => {
            w.u8(MESSAGE);
            w.varint(u64::from(id.0));
            w.varint(since);
            w.text(&encode(other));
        }
    }
}

/// The calls of a room recording, each with its byte offset; ends at the
/// first damaged record (with its error). Inputs read as `W`.
#[derive(Clone, Debug)]
pub struct RoomCalls<'a, W> {
    records: Records<'a>,
    /// Ticks read so far (what a damaged chunk follows).
    ticks: u64,
    inputs: PhantomData<W>,
}

/// Opens a room recording of game `G`: the room's configuration and its
/// calls.
///
/// # Errors
/// Not a room recording, another game or version, or a damaged header.
pub fn open_room_of<G: ServerGame>(
    bytes: &[u8],
) -> Result<(RoomConfig<G>, RoomCalls<'_, G::Wire>), FormatError> {
    let (header, records) = Reader::open(bytes, Kind::Room, &GameId::of::<G>())?;
    let config: RoomConfig<G> = std::str::from_utf8(&header.config)
        .map_err(|e| e.to_string())
        .and_then(from_json)
        .map_err(|e| FormatError::Damaged {
            offset: 0,
            what: format!("the room configuration does not read: {e}"),
        })?;
    config.validate().map_err(|e| FormatError::Damaged {
        offset: 0,
        what: format!("the room configuration: {e}"),
    })?;
    Ok((
        config,
        RoomCalls {
            records,
            ticks: 0,
            inputs: PhantomData,
        },
    ))
}

/// The most seats a room may have: past the 800 players the benchmarks
/// run (`docs/BENCHMARKS.md`; 400 to 800 is what a room affords at
/// 20 Hz). A tick's work grows with the square of the players.
const MOST_SEATS: usize = 1024;

/// The interest grid's cells across the world's larger side at most: the
/// radius (the cell's size) is at least that side over this. The grid is
/// built every tick and a viewer's lookup may cover all of it.
const MOST_GRID_CELLS: f32 = 64.0;

/// Why a [`RoomConfig`](crate::RoomConfig) cannot be used.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RoomConfigError {
    /// The room's name is not one a client could ask for.
    #[error("the name {0:?} is not 1 to {MAX_ROOM_CHARS} printable characters")]
    Name(String),
    /// The game's settings do not check ([`ServerGame::check`]).
    #[error("{0}")]
    Game(String),
    /// A number is outside what a room can run with.
    #[error("{what} of {value} (must be {range})")]
    OutOfRange {
        /// Which number.
        what: &'static str,
        /// Its value.
        value: String,
        /// What it must be.
        range: String,
    },
}

impl<G: ServerGame> RoomConfig<G> {
    /// Checks that a room can run with this configuration, each call in
    /// bounded time and memory, as one read from an untrusted file (a
    /// recording's header) must: the game's settings as [`ServerGame::check`]
    /// checks them; at most 1024 seats; an interest radius of at least
    /// 1/64 of the world's larger side (a grid of at most 64 x 64 cells)
    /// and a finite margin.
    ///
    /// # Errors
    /// The first problem found.
    pub fn validate(&self) -> Result<(), RoomConfigError> {
        let out = |what, value: String, range: String| {
            Err(RoomConfigError::OutOfRange { what, value, range })
        };
        if check_room_name(&self.name).is_err() {
            return Err(RoomConfigError::Name(self.name.chars().take(40).collect()));
        }
        if self.capacity > MOST_SEATS {
            let range = format!("at most {MOST_SEATS} seats");
            return out("a capacity", self.capacity.to_string(), range);
        }
        G::check(&self.game).map_err(RoomConfigError::Game)?;
        let (config, _) = G::start(&self.game);
        let extent = G::extent(&config);
        let interest = &self.interest;
        let least = extent.max_element() / MOST_GRID_CELLS;
        if let Some(radius) = interest.radius.filter(|r| !(r.is_finite() && *r >= least)) {
            let range = format!("at least {least} in this world, 1/64 of its larger side");
            return out("an interest radius", radius.to_string(), range);
        }
        if !(interest.margin.is_finite() && interest.margin >= 0.0) {
            let range = "finite and not negative".to_string();
            return out("an interest margin", interest.margin.to_string(), range);
        }
        Ok(())
    }
}

fn id(r: &mut Reader<'_>) -> Result<PlayerId, FormatError> {
    let v = r.varint()?;
    u32::try_from(v)
        .map(PlayerId)
        .map_err(|_| r.damaged(format!("a player id of {v}")))
}

fn since(r: &mut Reader<'_>) -> Result<Duration, FormatError> {
    Ok(Duration::from_nanos(r.varint()?))
}

/// A joiner's seating: bit 0 of its first byte is compact, bit 1
/// (format 3) datagrams, bit 2 (format 4) binary control messages; then
/// its protocol.
fn read_seating(r: &mut Reader<'_>) -> Result<Seating, FormatError> {
    let how = r.u8()?;
    if how > 7 {
        return Err(r.damaged(format!("an unknown seating {how:#04x}")));
    }
    let protocol = r.varint()?;
    let protocol = u32::try_from(protocol).map_err(|_| r.damaged("a protocol past u32"))?;
    Ok(Seating {
        encoding: if how & 1 == 0 {
            Encoding::Json
        } else {
            Encoding::Compact
        },
        protocol,
        datagrams: how & 2 != 0,
        binary_control: how & 4 != 0,
    })
}

/// Reads one room record.
fn read_call<W: Wired + DeserializeOwned>(r: &mut Reader<'_>) -> Result<RoomCall<W>, FormatError> {
    let tag = r.u8()?;
    Ok(match tag {
        JOIN => {
            let id = id(r)?;
            let name = r.text()?.to_string();
            RoomCall::Join(id, name, read_seating(r)?)
        }
        LEAVE => RoomCall::Leave(id(r)?),
        INPUT | NUMBERED_INPUT => {
            let id = id(r)?;
            let since = since(r)?;
            let ack = r.varint()?;
            let snapshot_ack = match ack {
                0 => None,
                n => Some(Tick(
                    u32::try_from(n - 1).map_err(|_| r.damaged("an ack past u32"))?,
                )),
            };
            let seq = if tag == NUMBERED_INPUT {
                let n = r.varint()?;
                Some(u16::try_from(n).map_err(|_| r.damaged("a sequence number past u16"))?)
            } else {
                None
            };
            let count = r.varint()?;
            // No more than a message may carry: a count past it is
            // damage, not an allocation.
            let count = usize::try_from(count)
                .ok()
                .filter(|&c| c <= MAX_INPUTS_PER_MESSAGE)
                .ok_or_else(|| r.damaged(format!("{count} inputs in one message")))?;
            let mut inputs = Vec::with_capacity(count.min(64));
            for _ in 0..count {
                let tick = r.varint()?;
                let tick = Tick(u32::try_from(tick).map_err(|_| r.damaged("a tick past u32"))?);
                let head = r.u8()?;
                if head & !(GAME_BITS | VIEW) != 0 {
                    return Err(r.damaged(format!("an input head of {head:#04x}")));
                }
                let input = W::read_bits(head & GAME_BITS, r, tick)?;
                let view_tick = if head & VIEW != 0 {
                    Some(r.f64()?)
                } else {
                    None
                };
                inputs.push(input.with_view(view_tick));
            }
            // The server only ever handed the room inputs that passed
            // these checks: anything else is damage.
            check_inputs(&inputs)
                .map_err(|e| r.damaged(format!("inputs the server refuses: {e}")))?;
            RoomCall::Message(
                id,
                ClientMessage::Input {
                    inputs,
                    snapshot_ack,
                    seq,
                },
                since,
            )
        }
        MESSAGE => {
            let id = id(r)?;
            let since = since(r)?;
            let at = r.offset();
            let text = r.text()?;
            let message = decode_client(text).map_err(|e| FormatError::Damaged {
                offset: at,
                what: format!("a message that does not decode: {e}"),
            })?;
            RoomCall::Message(id, message, since)
        }
        TICK => RoomCall::Tick(r.u64()?),
        FRAME => {
            let id = id(r)?;
            let since = since(r)?;
            let text = match r.u8()? {
                0 => false,
                1 => true,
                other => return Err(r.damaged(format!("a frame kind {other}"))),
            };
            let at = r.offset();
            let payload = r.byte_string()?;
            // Only frames the server decoded were recorded: anything else
            // is damage.
            let message = decode_client_frame(text, payload).map_err(|e| FormatError::Damaged {
                offset: at,
                what: format!("a frame the server could not have taken: {e}"),
            })?;
            RoomCall::Message(id, message, since)
        }
        END => RoomCall::End(match r.u8()? {
            0 => RoomEnd::Emptied,
            1 => RoomEnd::ShutDown,
            2 => RoomEnd::Failed(r.text()?.to_string()),
            other => return Err(r.damaged(format!("an unknown room ending {other}"))),
        }),
        other => {
            return Err(FormatError::Damaged {
                offset: r.offset() - 1,
                what: format!("an unknown record tag {other}"),
            })
        }
    })
}

impl<W> RoomCalls<'_, W> {
    /// Where the next record starts (or the chunk it is in).
    pub fn offset(&self) -> usize {
        self.records.offset()
    }
}

impl<W: Wired + DeserializeOwned> Iterator for RoomCalls<'_, W> {
    type Item = Result<(usize, RoomCall<W>), FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        let ticks = self.ticks;
        let unit = || match ticks {
            0 => "the first calls".to_string(),
            n => format!("the calls after tick {n}"),
        };
        let next = self.records.next_record(unit, read_call);
        if let Some(Ok((_, RoomCall::Tick(_)))) = &next {
            self.ticks += 1;
        }
        next
    }
}
