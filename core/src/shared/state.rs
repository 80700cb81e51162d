//! Who a player is.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A player's identity on the server, unique within a process.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct PlayerId(pub u32);

/// The first id of a thing (a pellet, a ball: the world's, not a
/// player's): ids below are players'.
pub const FIRST_THING: u32 = 1 << 31;

impl PlayerId {
    /// Whether the id is a thing's, not a player's.
    pub fn is_thing(self) -> bool {
        self.0 >= FIRST_THING
    }

    /// The thing this id names on the wire, if it is a thing's.
    pub fn thing(self) -> Option<ThingId> {
        self.is_thing().then_some(ThingId(self.0))
    }
}

/// A thing's identity (a pellet, a ball: the world's, not a player's): a
/// type of its own, so that a thing is never taken for a player where the
/// compiler can tell. Snapshots carry both in one id space, a thing's from
/// [`FIRST_THING`] up ([`ThingId::wire`]), so a set in id order lists the
/// players first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ThingId(u32);

impl ThingId {
    /// The first thing's id.
    pub const FIRST: ThingId = ThingId(FIRST_THING);

    /// Thing number `n`, counted from 0 (`None` past the range).
    pub fn nth(n: u32) -> Option<ThingId> {
        n.checked_add(FIRST_THING).map(ThingId)
    }

    /// Its number, counted from 0.
    pub fn index(self) -> u32 {
        self.0 - FIRST_THING
    }

    /// The id snapshots carry it by.
    pub fn wire(self) -> PlayerId {
        PlayerId(self.0)
    }

    /// The next thing's id (`None` at the end of the range).
    pub(crate) fn next(self) -> Option<ThingId> {
        self.0.checked_add(1).map(ThingId)
    }
}

impl fmt::Display for ThingId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "thing {}", self.index())
    }
}

impl fmt::Display for PlayerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
