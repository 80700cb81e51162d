//! The client's flight recorder: every call that enters a
//! [`ClientSession`](crate::ClientSession), in order, with the shell's times
//! and the frames' bytes, and after each `advance` a running hash of what
//! the session shows (the own and remote players' visuals and states, the
//! game's effects) and of its events, with the own predicted visual in the
//! clear.
//!
//! [`ClientRecorder`] writes; [`Call`] and [`Calls`] read back what it wrote,
//! for the replay. The layout of each record is in `docs/RECORDING.md`.
//!
//! The records go in checksummed chunks (format 6), each sealed after the
//! frame that brings it to [`CLIENT_CHUNK`] bytes; the bytes are a whole
//! recording after every call, so the page can save it at any moment.

use std::time::Duration;

use std::marker::PhantomData;

use crate::client::conditioner::{Delivery, LinkConditions};
use crate::client::game::{ClientGame, NoteOf};
use crate::client::session::{SessionConfig, SessionEvent, Toggles, View};
use crate::shared::bytes::Codec;
use crate::shared::game::Game;
use crate::shared::protocol::GameId;
use crate::shared::record::{
    FormatError, Kind, Reader, RecordWriter, Records, StateHash, TimeCoder, Writer, CLIENT_CHUNK,
};
use crate::shared::tick::Tick;

mod config;

use self::config::{conditions, read_conditions, read_config, write_config};

const CONTROLS: u8 = 1;
const TOGGLES: u8 = 2;
const DELIVERY: u8 = 3;
const CONDITIONS: u8 = 4;
const TEXT: u8 = 5;
const BINARY: u8 = 6;
const DISCONNECTED: u8 = 7;
const ADVANCE: u8 = 8;
const SENT: u8 = 9;

/// The memory a page's recorder may use by default: 16 MiB, 48 minutes of
/// a 16-player room (`docs/BENCHMARKS.md`, "Recording").
pub const DEFAULT_RECORDING_LIMIT: usize = 16 << 20;

/// One call into a session of a game whose controls are `C` and whose
/// drawn visual is `V`, as recorded.
#[derive(Clone, Debug, PartialEq)]
pub enum Call<'a, C, V> {
    /// `set_controls`.
    Controls(C),
    /// `set_toggles`.
    Toggles(Toggles),
    /// `set_delivery`.
    Delivery(Delivery),
    /// `set_conditions(up, down)`.
    Conditions(LinkConditions, LinkConditions),
    /// `receive(Incoming::Text, at)`; the bytes as they came.
    Text(&'a [u8], Duration),
    /// `receive(Incoming::Binary, at)`.
    Binary(&'a [u8], Duration),
    /// `disconnected(reason)`.
    Disconnected(&'a str),
    /// `advance(now)`, with what the session showed after it.
    Advance {
        /// The shell's time.
        now: Duration,
        /// The running hash after the call.
        hash: u64,
        /// The own predicted visual, once playing.
        own: Option<V>,
    },
    /// `sent(bytes)`.
    Sent(u64),
}

/// Records the calls into a session of game `G` into a bounded buffer.
pub struct ClientRecorder<G> {
    w: RecordWriter,
    times: TimeCoder,
    limit: usize,
    full: bool,
    /// Events since the last `advance`, hashed as they happened.
    events: StateHash,
    /// The running hash over every `advance` so far.
    chain: StateHash,
    game: PhantomData<G>,
}

impl<G> Clone for ClientRecorder<G> {
    fn clone(&self) -> Self {
        ClientRecorder {
            w: self.w.clone(),
            times: self.times,
            limit: self.limit,
            full: self.full,
            events: self.events,
            chain: self.chain,
            game: PhantomData,
        }
    }
}

impl<G> std::fmt::Debug for ClientRecorder<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientRecorder")
            .field("bytes", &self.w.len())
            .field("limit", &self.limit)
            .field("full", &self.full)
            .field("last_hash", &format_args!("{:016x}", self.chain.0))
            .finish_non_exhaustive()
    }
}

impl<G: ClientGame> ClientRecorder<G> {
    /// A recorder of a session set up with `config`, keeping at most about
    /// `limit` bytes (it stops, whole records only, once past it).
    pub fn new(config: &SessionConfig, limit: usize) -> ClientRecorder<G> {
        let mut header = Writer::default();
        write_config(&mut header, config);
        let w = RecordWriter::new(Kind::Client, &GameId::of::<G>(), &header.bytes);
        ClientRecorder {
            full: w.len() >= limit,
            w,
            times: TimeCoder::default(),
            limit,
            events: StateHash::default(),
            chain: StateHash::default(),
            game: PhantomData,
        }
    }

    /// The recording so far: a whole recording, whenever it is asked.
    pub fn bytes(&self) -> &[u8] {
        self.w.bytes()
    }

    /// The running hash after the last `advance` (what the replay checks).
    pub fn last_hash(&self) -> u64 {
        self.chain.0
    }

    /// Whether the limit was reached and the recording stopped.
    pub fn is_full(&self) -> bool {
        self.full
    }

    fn record(&mut self, write: impl FnOnce(&mut Writer, &mut TimeCoder)) {
        if self.full {
            return;
        }
        // Grow by doubling, but never much past the limit: a page's memory
        // never shrinks, so the bound is on what is allocated too.
        let len = self.w.len();
        if self.w.spare() < 1024 {
            let more = len.clamp(4096, self.limit.saturating_sub(len).max(4096));
            self.w.reserve_exact(more);
        }
        let times = &mut self.times;
        self.w.record(|w| write(w, times));
        self.full = self.w.len() >= self.limit;
    }

    /// Records a call other than `advance`.
    pub(crate) fn call(&mut self, call: &Call<'_, G::Controls, G::Local>) {
        self.record(|w, times| write_call(w, times, call));
    }

    /// Folds an event into the hash of this frame.
    pub(crate) fn event(&mut self, event: &SessionEvent<NoteOf<G>>) {
        event_hash::<G>(&mut self.events, event);
    }

    /// Records `advance(now)` with what the session shows after it.
    pub(crate) fn advance(&mut self, now: Duration, view: &View<G>) {
        let hash = frame_hash(&mut self.chain, &mut self.events, view);
        let own = view.own.map(|o| o.predicted);
        self.record(|w, times| {
            write_call::<G::Controls, G::Local>(w, times, &Call::Advance { now, hash, own });
        });
        // A frame ends here: a chunk ends at the frame that fills it.
        if self.w.open_len() >= CLIENT_CHUNK {
            self.w.seal();
        }
    }
}

/// Folds one frame's view and events into the chain; the new chain value.
fn frame_hash<G: ClientGame>(chain: &mut StateHash, events: &mut StateHash, view: &View<G>) -> u64 {
    let mut h = *chain;
    h.word(events.0);
    *events = StateHash::default();
    if let Some(own) = &view.own {
        h.word(u64::from(own.id.0));
        for visual in [own.visible, own.predicted] {
            G::hash_visual(&visual, &mut h);
        }
        h.word(G::hash_state(&own.state, own.alive));
    }
    for r in &view.remotes {
        h.word(u64::from(r.id.0));
        G::hash_visual(&r.visual, &mut h);
        h.word(G::hash_state(&r.state, r.alive));
    }
    G::hash_effects(&view.effects, &mut h);
    *chain = h;
    h.0
}

/// Folds an event, field by field (no `Debug` formatting: the page
/// carries no formatter for it).
fn event_hash<G: ClientGame>(h: &mut StateHash, event: &SessionEvent<NoteOf<G>>) {
    let tick = |t: Option<Tick>| t.map_or(u64::MAX, |t| u64::from(t.0));
    match event {
        SessionEvent::Joined { id, room } => {
            h.word(1);
            h.word(u64::from(id.0));
            h.bytes(room.as_bytes());
        }
        SessionEvent::Snapshot { server_tick } => {
            h.word(2);
            h.word(u64::from(server_tick.0));
        }
        SessionEvent::StepPredicted { tick, acted } => {
            h.word(3);
            h.word(u64::from(tick.0) | u64::from(*acted) << 32);
        }
        SessionEvent::Reconciled { report, placed } => {
            h.word(4);
            h.word(u64::from(report.server_tick.0) | u64::from(*placed) << 32);
            h.word(tick(report.ack));
            h.word(report.pruned as u64);
            h.word(report.replayed as u64);
            h.f32(report.error);
            h.f32(report.error_angle);
            h.word(report.outcome as u64);
        }
        SessionEvent::Note(note) => G::hash_note(note, h),
        SessionEvent::Timing(t) => {
            h.word(7);
            h.word(tick(t.tick));
            h.word(
                u64::from(t.slack_ms as u16)
                    | u64::from(t.late) << 16
                    | u64::from(t.repeated) << 32,
            );
        }
        SessionEvent::Pong { rtt } => {
            h.word(8);
            h.word(u64::try_from(rtt.as_nanos()).unwrap_or(u64::MAX));
        }
        SessionEvent::ServerError { code, message } => {
            h.word(9);
            h.bytes(code.as_str().as_bytes());
            h.bytes(message.as_bytes());
        }
        SessionEvent::BadFrame(e) => {
            h.word(10);
            h.bytes(e.code.as_str().as_bytes());
            h.bytes(e.message.as_bytes());
        }
        SessionEvent::Disconnected { reason } => {
            h.word(11);
            h.bytes(reason.as_bytes());
        }
    }
}

fn write_call<C: Codec, V: Codec>(w: &mut Writer, times: &mut TimeCoder, call: &Call<'_, C, V>) {
    match call {
        Call::Controls(c) => {
            w.u8(CONTROLS);
            c.write(w);
        }
        Call::Toggles(t) => {
            w.u8(TOGGLES);
            let bits = [t.prediction, t.reconciliation, t.smoothing, t.interpolation]
                .iter()
                .enumerate()
                .fold(0u8, |acc, (i, &on)| acc | u8::from(on) << i);
            w.u8(bits);
        }
        Call::Delivery(d) => {
            w.u8(DELIVERY);
            w.u8(u8::from(*d == Delivery::Stream));
        }
        Call::Conditions(up, down) => {
            w.u8(CONDITIONS);
            conditions(w, *up);
            conditions(w, *down);
        }
        Call::Text(bytes, at) | Call::Binary(bytes, at) => {
            w.u8(if matches!(call, Call::Text(..)) {
                TEXT
            } else {
                BINARY
            });
            times.write(w, *at);
            w.byte_string(bytes);
        }
        Call::Disconnected(reason) => {
            w.u8(DISCONNECTED);
            w.text(reason);
        }
        Call::Advance { now, hash, own } => {
            w.u8(ADVANCE);
            times.write(w, *now);
            w.u64(*hash);
            match own {
                Some(visual) => {
                    w.u8(1);
                    visual.write(w);
                }
                None => w.u8(0),
            }
        }
        Call::Sent(bytes) => {
            w.u8(SENT);
            w.varint(*bytes);
        }
    }
}

/// The calls of a client recording, in order; each item says where it
/// starts. Ends at the first damaged record (with its error).
#[derive(Clone, Debug)]
pub struct Calls<'a, G> {
    records: Records<'a>,
    times: TimeCoder,
    /// Frames read so far (what a damaged chunk follows).
    frames: u64,
    game: PhantomData<G>,
}

/// Opens a client recording: the session's configuration and its calls.
///
/// # Errors
/// Not a client recording, another version, or a damaged header or
/// configuration.
pub fn open_client_of<G: ClientGame>(
    bytes: &[u8],
) -> Result<(SessionConfig, Calls<'_, G>), FormatError> {
    let (header, records) = Reader::open(bytes, Kind::Client, &GameId::of::<G>())?;
    let start = header.config_at;
    let mut at = Reader::new(&header.config);
    let config = read_config(&mut at).map_err(|e| match e {
        FormatError::Damaged { offset, what } => FormatError::Damaged {
            offset: start + offset,
            what: format!("the session configuration in the header: {what}"),
        },
        other => other,
    })?;
    Ok((
        config,
        Calls {
            records,
            times: TimeCoder::default(),
            frames: 0,
            game: PhantomData,
        },
    ))
}

/// Reads one client record.
fn read_call<'a, C: Codec, V: Codec>(
    r: &mut Reader<'a>,
    times: &mut TimeCoder,
) -> Result<Call<'a, C, V>, FormatError> {
    let tag = r.u8()?;
    Ok(match tag {
        CONTROLS => Call::Controls(C::read(r)?),
        TOGGLES => {
            let bits = r.u8()?;
            Call::Toggles(Toggles {
                prediction: bits & 1 != 0,
                reconciliation: bits & 2 != 0,
                smoothing: bits & 4 != 0,
                interpolation: bits & 8 != 0,
            })
        }
        DELIVERY => Call::Delivery(if r.u8()? == 0 {
            Delivery::Datagrams
        } else {
            Delivery::Stream
        }),
        CONDITIONS => Call::Conditions(read_conditions(r)?, read_conditions(r)?),
        TEXT | BINARY => {
            let at = times.read(r)?;
            let start = r.offset();
            let bytes = r.byte_string()?;
            if tag == TEXT && std::str::from_utf8(bytes).is_err() {
                return Err(FormatError::Damaged {
                    offset: start,
                    what: "a text frame that is not UTF-8".to_string(),
                });
            }
            if tag == TEXT {
                Call::Text(bytes, at)
            } else {
                Call::Binary(bytes, at)
            }
        }
        DISCONNECTED => Call::Disconnected(r.text()?),
        ADVANCE => {
            let now = times.read(r)?;
            let hash = r.u64()?;
            let own = match r.u8()? {
                0 => None,
                1 => Some(V::read(r)?),
                other => return Err(r.damaged(format!("an own-visual flag of {other}"))),
            };
            Call::Advance { now, hash, own }
        }
        SENT => {
            // A shell sends frames, not gigabytes at once.
            let bytes = r.varint()?;
            if bytes > u64::from(u32::MAX) {
                return Err(r.damaged(format!("{bytes} bytes sent at once")));
            }
            Call::Sent(bytes)
        }
        other => {
            return Err(FormatError::Damaged {
                offset: r.offset() - 1,
                what: format!("an unknown record tag {other}"),
            })
        }
    })
}

impl<'a, G: ClientGame> Iterator for Calls<'a, G> {
    type Item = Result<(usize, Call<'a, G::Controls, <G as Game>::Local>), FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        let times = &mut self.times;
        let frames = self.frames;
        let unit = || match frames {
            0 => "the first calls".to_string(),
            n => format!("the calls after frame {n}"),
        };
        let next = self.records.next_record(unit, |r| read_call(r, times));
        if let Some(Ok((_, Call::Advance { .. }))) = &next {
            self.frames += 1;
        }
        next
    }
}
