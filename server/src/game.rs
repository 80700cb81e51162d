//! The games this server hosts: the one module of the server that names
//! them. Everything else takes a game as a type parameter bound by
//! [`Hosted`] (the library's server side of it), so hosting another game
//! is a line in [`each`] and its settings here.
//!
//! Today: the tank game (its pages connect at `/ws`; its settings on the
//! command line are the movement constants and `--arena`), walkers, the
//! guide's game (`docs/GUIDE.md`; its page is `/walkers/`, connecting at
//! `/walkers/ws`), and blobs, the .io arena (`/blobs/`: 5,000 pellets on a
//! square of 5,000 units).

use std::time::Duration;

use clap::Args;
use skirmish_blobs::{BlobSettings, Blobs};
use skirmish_core::{Game as _, ServerGame};
use skirmish_tanks::{SimConfig, TankSettings, Tanks, Vec2};
use skirmish_walkers::Walkers;

/// The game the server's unit tests play (the first one hosted).
#[cfg(test)]
pub(crate) type Tested = Tanks;

/// A message the server of [`Tested`] sends.
#[cfg(test)]
pub(crate) type TestedMessage = skirmish_core::ServerMessage<Tanks>;

/// A game this server can host: the library's server side of it, whose
/// rooms can move between threads.
pub trait Hosted: ServerGame + Send + Sync + std::fmt::Debug {}

impl<G: ServerGame + Send + Sync + std::fmt::Debug> Hosted for G {}

/// What is done with each hosted game: the server opens its registry,
/// routes and WebTransport path.
pub trait EachGame {
    /// Hosts game `G`, whose rooms are set up with `settings` and whose
    /// pages connect under `path` (`""`: at `/ws`; else `/{path}/ws`).
    fn host<G: Hosted>(&mut self, path: &'static str, settings: G::Settings);
}

/// Calls `each` with every game this server hosts, the first one at the
/// server's root.
pub fn each(settings: &GameSettings, each: &mut impl EachGame) {
    each.host::<Tanks>("", settings.settings());
    each.host::<Walkers>("walkers", ());
    each.host::<Blobs>("blobs", settings.blobs());
}

/// The games' settings on the command line.
#[derive(Clone, Debug, Args)]
pub struct GameSettings {
    /// The movement constants every room uses.
    #[arg(skip = SimConfig::default())]
    pub sim: SimConfig,
    /// The arena's size, `WIDTHxHEIGHT` in units (sent in `welcome`);
    /// larger than a screen wants `--interest-radius` too.
    #[arg(long, value_parser = arena)]
    pub arena: Option<Vec2>,
    /// Blobs: the side of the square arena, in units (500 to 60000).
    #[arg(long, default_value_t = BlobSettings::default().side)]
    pub blobs_side: f32,
    /// Blobs: the pellets the server keeps in the arena (at most 100000).
    #[arg(long, default_value_t = BlobSettings::default().pellets)]
    pub blobs_pellets: u32,
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

    /// What every room of blobs is set up with.
    pub fn blobs(&self) -> BlobSettings {
        BlobSettings {
            side: self.blobs_side,
            pellets: self.blobs_pellets,
        }
    }

    /// The length of a tick of the first game with its default settings.
    pub fn default_cadence() -> Duration {
        Tanks::cadence(&SimConfig::default())
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
