//! The library's envelope around a player's own state: whose it is, the
//! server tick it is true at and the newest input it includes. A game
//! whose own state is only its own fields uses [`Owned`] and writes none
//! of this; a game whose JSON shape is fixed elsewhere (by a specification
//! its other clients follow) implements [`OwnState`] itself.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::shared::bytes::{Codec, ReadError, Reader, Writer};
use crate::shared::game::{OwnState, Replicated, Stamp};
use crate::shared::state::PlayerId;
use crate::shared::tick::Tick;

/// A player's own state `S` as it travels to that player: the game's
/// fields in the library's envelope.
///
/// In JSON: `{"id": 3, "tick": 120, "ack": 118, "state": ...}`; in binary
/// the library's head, then the state's [`Codec`] form. Its events,
/// validity and liveness are the state's ([`Replicated`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Owned<S> {
    /// Whose state it is.
    pub id: PlayerId,
    /// The server tick it is true at.
    pub tick: Tick,
    /// The newest of the player's input ticks it includes.
    pub ack: Option<Tick>,
    /// The game's fields.
    pub state: S,
}

impl<S> Owned<S> {
    /// Player `id`'s `state` at `tick`, including its inputs up to `ack`.
    pub fn new(id: PlayerId, tick: Tick, ack: Option<Tick>, state: S) -> Owned<S> {
        Owned {
            id,
            tick,
            ack,
            state,
        }
    }
}

/// The game's fields, read through the envelope (`own.at` for
/// `own.state.at`).
/// What the server keeps of a player, as its own state: player `id`'s at
/// `stamp`. A game whose server keeps exactly the fields it sends (an
/// `Owned<S>` kept as `S`) gets it from the library; a game whose server
/// keeps more says what it sends.
pub trait IntoOwn<O> {
    /// The own state its player gets.
    fn own(&self, id: PlayerId, stamp: Stamp) -> O;
}

impl<S: Clone> IntoOwn<Owned<S>> for S {
    fn own(&self, id: PlayerId, stamp: Stamp) -> Owned<S> {
        Owned::new(id, stamp.tick, stamp.ack, self.clone())
    }
}

impl<S> std::ops::Deref for Owned<S> {
    type Target = S;

    fn deref(&self) -> &S {
        &self.state
    }
}

impl<S> std::ops::DerefMut for Owned<S> {
    fn deref_mut(&mut self) -> &mut S {
        &mut self.state
    }
}

/// The state's events, validity and liveness.
impl<S: Replicated> Replicated for Owned<S> {
    type Event = S::Event;

    fn is_valid(&self) -> bool {
        self.state.is_valid()
    }

    fn alive(&self) -> bool {
        self.state.alive()
    }

    fn apply(&mut self, event: &S::Event) {
        self.state.apply(event);
    }
}

/// The library's head, then the state's binary form, exactly.
impl<S: Replicated + Codec + Serialize + DeserializeOwned> OwnState for Owned<S> {
    // About: a state's binary form is at most its fields, unpadded.
    const BYTES: usize = std::mem::size_of::<S>();

    fn id(&self) -> PlayerId {
        self.id
    }

    fn stamp(&self) -> Stamp {
        Stamp {
            tick: self.tick,
            ack: self.ack,
        }
    }

    fn write(&self, w: &mut Writer) {
        self.state.write(w);
    }

    fn read(id: PlayerId, stamp: Stamp, r: &mut Reader<'_>) -> Result<Owned<S>, ReadError> {
        Ok(Owned::new(id, stamp.tick, stamp.ack, S::read(r)?))
    }
}
