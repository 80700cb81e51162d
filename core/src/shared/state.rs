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
}

impl fmt::Display for PlayerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
