//! Simulation time as whole ticks.
//!
//! Client input ticks and server ticks are both counted in [`Tick`]s; they are
//! different clocks and are never compared with each other.

use serde::{Deserialize, Serialize};

/// A whole simulation step number. Arithmetic saturates instead of wrapping.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Tick(pub u32);

impl Tick {
    /// The tick before anything happened.
    pub const ZERO: Tick = Tick(0);

    /// The tick after this one.
    #[must_use]
    pub fn next(self) -> Tick {
        Tick(self.0.saturating_add(1))
    }

    /// This tick moved `n` ticks forward, saturating at `u32::MAX`.
    #[must_use]
    pub fn saturating_add(self, n: u32) -> Tick {
        Tick(self.0.saturating_add(n))
    }

    /// This tick moved `n` ticks back, saturating at zero.
    #[must_use]
    pub fn saturating_sub(self, n: u32) -> Tick {
        Tick(self.0.saturating_sub(n))
    }

    /// The raw tick number.
    pub fn get(self) -> u32 {
        self.0
    }
}

impl std::fmt::Display for Tick {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        assert_eq!(Tick(u32::MAX).next(), Tick(u32::MAX));
        assert_eq!(Tick(1).saturating_sub(5), Tick::ZERO);
        assert_eq!(Tick(1).saturating_add(2), Tick(3));
    }
}
