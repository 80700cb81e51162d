//! Blobs, an .io arena on `skirmish-core`: each player steers a blob
//! toward a point (an angle and a boost, not key bits); thousands of
//! pellets the server owns are spawned and eaten; eating grows a blob, a
//! blob much larger than another eats it, a blob slows as it grows, and an
//! eaten player comes back a second later, small, somewhere else.
//!
//! What the page predicts is its own movement (`Body`: where it is, how
//! heavy, and the pace its speed follows). Growth arrives in the
//! authoritative state and never counts as a misprediction: a correction
//! measures where, not how large, and a blob's pace follows its mass only
//! a second after the server schedules it, in the state itself (`next`,
//! `wait`), so a page has always heard of a change of speed before it
//! predicts a step that has it. Pellets are the world's `Things`, sent in the snapshot sets
//! beside the blobs as a `Bit` each (`bit.rs`); the server's rules are in
//! `server.rs`.

mod bit;
pub mod driver;
mod happen;
mod server;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use skirmish_core::{
    ClientGame, ClientState, Codec, Game, Networked, Owned, PlayerId, Replicated, StateHash, Tick,
    Ticked, Vec2, Visual,
};

pub use bit::{Bit, BLOB, DEAD, PELLET};
pub use happen::{Feed, Happening, Note, NOTE_FOR};
pub use server::{BlobSettings, BlobWorld, Body};

/// The game.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Blobs;

/// The arena: a square of `side` units (what `welcome` carries).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Arena {
    /// The square's side, in units.
    pub side: f32,
}

impl Default for Arena {
    fn default() -> Self {
        Arena { side: 5000.0 }
    }
}

/// In binary as serde describes it: the side's bits.
impl Codec for Arena {}

/// One tick's steering: the direction to go (an angle, 65,536 to a turn)
/// and flags: [`MOVE`] to go at all, [`BOOST`] to go faster.
pub type Steer = (u16, u8);

/// Steering flag: go toward the angle.
pub const MOVE: u8 = 1;
/// Steering flag: go faster.
pub const BOOST: u8 = 2;

/// The mass a blob starts with.
pub const START_MASS: f32 = 10.0;
/// The mass a pellet gives.
pub const PELLET_MASS: f32 = 1.0;

/// A blob's radius at `mass`, in units.
pub fn radius(mass: f32) -> f32 {
    4.0 * libm::sqrtf(mass.max(1.0))
}

/// A blob's pace at `mass`: 1 at the start, falling with the square root
/// of the mass.
pub fn pace(mass: f32) -> f32 {
    libm::sqrtf(START_MASS / mass.max(START_MASS))
}

/// A blob's speed at `mass` once its pace has caught up, units per second.
pub fn speed(mass: f32) -> f32 {
    SPEED * pace(mass)
}

/// The speed of a blob of the starting mass, units per second.
pub const SPEED: f32 = 300.0;

/// Ticks between the server scheduling a new pace and the pace taking
/// effect (a second): longer than any page's prediction runs ahead.
pub const PACE_AFTER: u8 = 20;

/// A blob's fields as the server sends them to its own page, exactly (in
/// the library's envelope, [`Owned`]: who, when, which input); a pellet
/// or another blob as a page reads it from a snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Blob {
    /// Where, in units.
    pub at: Vec2,
    /// How heavy.
    pub mass: f32,
    /// What it is: [`BLOB`], [`DEAD`] (eaten, coming back) or [`PELLET`].
    pub kind: u8,
    /// Its pace now, the pace to come and the ticks until it comes (0:
    /// none scheduled); see [`Body`].
    pub pace: (f32, f32, u8),
}

impl Game for Blobs {
    const NAME: &'static str = "blobs";
    const VERSION: u32 = 3;
    type Config = Arena;
    type Input = Steer;
    type Own = Owned<Blob>;
    type Local = Body;

    fn cadence(_: &Arena) -> Duration {
        Duration::from_millis(50)
    }
    fn sanitize((angle, flags): Steer) -> Steer {
        (angle, flags & (MOVE | BOOST))
    }
    /// The one step the page predicts with and the server runs: an eaten
    /// blob stays put; the scheduled pace comes when its wait runs out,
    /// then the blob goes.
    fn predict(mut body: Body, &(angle, flags): &Steer, dt: Duration, arena: &Arena) -> Body {
        if !body.alive {
            return body;
        }
        if body.wait > 0 {
            body.wait -= 1;
            if body.wait == 0 {
                body.pace = body.next;
            }
        }
        if flags & MOVE == 0 {
            return body;
        }
        let turn = f32::from(angle) / 65_536.0 * std::f32::consts::TAU;
        let boost = if flags & BOOST != 0 { 1.5 } else { 1.0 };
        let step = SPEED * body.pace * boost * dt.as_secs_f32();
        let way = Vec2::new(libm::cosf(turn), libm::sinf(turn));
        let at = (body.at + way * step)
            .max(Vec2::ZERO)
            .min(Vec2::splat(arena.side));
        Body { at, ..body }
    }
    fn local(own: &Owned<Blob>) -> Body {
        let (pace, next, wait) = own.state.pace;
        Body {
            at: own.state.at,
            mass: own.state.mass,
            alive: own.state.kind != DEAD,
            pace,
            next,
            wait,
        }
    }
}

/// A body is drawn where it is; a correction moves where, never how large.
impl Visual for Body {
    type Offset = Vec2;
    fn lerp(&self, to: &Body, t: f32) -> Body {
        Body {
            at: self.at.lerp(to.at, t),
            mass: self.mass + (to.mass - self.mass) * t,
            ..*to
        }
    }
    fn offset_to(&self, to: &Body) -> Vec2 {
        to.at - self.at
    }
    fn shifted(&self, by: &Vec2) -> Body {
        Body {
            at: self.at + *by,
            ..*self
        }
    }
    fn is_finite(&self) -> bool {
        self.at.is_finite() && self.mass.is_finite()
    }
    fn place(&self) -> Vec2 {
        self.at
    }
}

/// What a page keeps of every blob and pellet: its state, replaced by the
/// next; between snapshots a blob's happenings change it (eaten, grew,
/// back).
impl Replicated for Blob {
    type Event = Happening;
    fn is_valid(&self) -> bool {
        self.at.is_finite()
            && self.mass.is_finite()
            && self.mass > 0.0
            && self.kind <= PELLET
            && self.pace.0.is_finite()
            && self.pace.1.is_finite()
    }
    fn alive(&self) -> bool {
        self.kind != DEAD
    }
    fn apply(&mut self, happening: &Happening) {
        happening.apply(self);
    }
}

/// The own blob in binary as serde describes it: where, how heavy, what
/// (the library adds who and when).
impl Codec for Blob {}

/// How it travels: the arena in `welcome`, the steering with its tick,
/// every other blob and every pellet as a [`Bit`].
impl Networked for Blobs {
    type Setup = Arena;
    type Wire = Ticked<Steer>;
    type Entity = Bit;

    fn quantise(own: &Owned<Blob>, _: &Arena) -> Bit {
        Bit::of(own.state.at, own.state.mass, own.state.kind)
    }
    fn dequantise(bit: &Bit, id: PlayerId, tick: Tick, _: &Arena) -> Owned<Blob> {
        let blob = Blob {
            at: bit.point(),
            mass: f32::from(bit.mass),
            kind: bit.kind,
            pace: (pace(f32::from(bit.mass)), pace(f32::from(bit.mass)), 0),
        };
        Owned::new(id, tick, None, blob)
    }
}

/// What the page keeps beside its blob: the notes of what happened to it,
/// each shown for a while.
impl ClientState for Feed {
    type Note = Note;
    type Effects = Vec<Note>;
}

/// The page holds a steering; a dead blob steers nowhere. What happens to
/// the own blob is told as a [`Note`] and shown for a while.
impl ClientGame for Blobs {
    type Controls = Steer;
    type Client = Feed;
    fn input(_: &mut Feed, steer: &Steer, alive: bool, _tick: Tick) -> Steer {
        if alive {
            *steer
        } else {
            (steer.0, 0)
        }
    }
    fn event(feed: &mut Feed, happening: &Happening, me: PlayerId, at: Duration) -> Option<Note> {
        let note = Note::of(happening, me)?;
        feed.push(note, at);
        Some(note)
    }
    fn prune(feed: &mut Feed, now: Duration) {
        feed.prune(now);
    }
    fn effects(feed: &Feed, now: Duration) -> Vec<Note> {
        feed.at(now)
    }
    fn forget(feed: &mut Feed, _: bool) {
        feed.clear();
    }
    fn hash_note(note: &Note, hash: &mut StateHash) {
        happen::hash_note(note, hash);
    }
    fn hash_effects(notes: &Vec<Note>, hash: &mut StateHash) {
        hash.word(notes.len() as u64);
    }
}

#[cfg(test)]
mod tests {
    use skirmish_core::{decode_inputs, encode_inputs, ErrorCode, Networked, Tick, Ticked, Wired};

    use super::{Blobs, BOOST, MOVE};

    /// Regression: a steer's head bits, which blobs do not use, were
    /// ignored: each one set is refused now.
    #[test]
    fn a_steer_with_a_head_bit_set_is_refused() {
        let steer = Ticked::<super::Steer>::of(Tick(9), (1_000, MOVE | BOOST), None);
        let mut bytes = Vec::new();
        encode_inputs(&[steer], None, None, &mut bytes);
        let head = 6; // After the kind, the count and the tick.
        assert_eq!(bytes[head], 0);
        assert!(decode_inputs::<<Blobs as Networked>::Wire>(&bytes).is_ok());
        for bit in [0, 1, 2, 3, 4, 6, 7] {
            let mut bad = bytes.clone();
            bad[head] |= 1 << bit;
            let refused = decode_inputs::<<Blobs as Networked>::Wire>(&bad).map_err(|e| e.code);
            assert_eq!(refused.err(), Some(ErrorCode::BadMessage), "bit {bit}");
        }
    }
}
