//! The game this server hosts: the one module of the server that names it.
//! Everything else takes it as [`Game`] through the library's generic
//! types ([`Room`], [`ClientMessage`], ...), so hosting another game is
//! this file.
//!
//! Today it is the tank game: its settings on the command line are the
//! movement constants and `--arena`.

use std::time::Duration;

use clap::Args;
use skirmish_core::{Game as _, Networked};
use skirmish_tanks::{SimConfig, TankSettings, Vec2};

/// The game of this build's rooms.
pub use skirmish_tanks::Tanks as Game;

/// A room of [`Game`].
pub type Room = skirmish_core::Room<Game>;
/// How a room of [`Game`] is set up.
pub type RoomConfig = skirmish_core::RoomConfig<Game>;
/// A message a client of [`Game`] sends.
pub type ClientMessage = skirmish_core::ClientMessage<<Game as Networked>::Wire>;
/// A message the server of [`Game`] sends.
pub type ServerMessage = skirmish_core::ServerMessage<Game>;

/// The game's settings on the command line.
#[derive(Clone, Debug, Args)]
pub struct GameSettings {
    /// The movement constants every room uses.
    #[arg(skip = SimConfig::default())]
    pub sim: SimConfig,
    /// The arena's size, `WIDTHxHEIGHT` in units (sent in `welcome`);
    /// larger than a screen wants `--interest-radius` too.
    #[arg(long, value_parser = arena)]
    pub arena: Option<Vec2>,
}

impl GameSettings {
    /// The movement constants with the `--arena` override.
    pub fn sim(&self) -> SimConfig {
        SimConfig {
            arena: self.arena.unwrap_or(self.sim.arena),
            ..self.sim.clone()
        }
    }

    /// What every room of the game is set up with.
    pub fn settings(&self) -> TankSettings {
        TankSettings {
            sim: self.sim(),
            ..TankSettings::default()
        }
    }

    /// The length of a room's tick.
    pub fn cadence(&self) -> Duration {
        Game::cadence(&self.sim())
    }

    /// The length of a tick with the game's default settings.
    pub fn default_cadence() -> Duration {
        Game::cadence(&SimConfig::default())
    }
}

/// `WIDTHxHEIGHT`, both positive.
fn arena(text: &str) -> Result<Vec2, String> {
    let (w, h) = text
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("`{text}` is not WIDTHxHEIGHT"))?;
    let size = |v: &str| -> Result<f32, String> {
        v.trim()
            .parse::<f32>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 100.0 && *v <= 1_000_000.0)
            .ok_or_else(|| format!("`{v}` is not a size from 100 to 1000000 units"))
    };
    Ok(Vec2::new(size(w)?, size(h)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arena_sizes_parse_or_say_why_not() {
        assert_eq!(arena("8000x6000"), Ok(Vec2::new(8000.0, 6000.0)));
        assert!(arena("8000").is_err());
        assert!(arena("0x10").is_err());
        assert!(arena("NaNx1000").is_err());
    }
}
