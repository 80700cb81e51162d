//! The listed games' own settings on the server's command line: the tank
//! game's movement constants and `--arena`, blobs' arena and pellets.

use clap::Args;
use skirmish_blobs::BlobSettings;
use skirmish_core::Vec2;
use skirmish_tanks::{SimConfig, TankSettings};

/// The games' settings on the command line.
#[derive(Clone, Debug, Args)]
pub struct GameSettings {
    /// The movement constants every room uses.
    #[arg(skip = SimConfig::default())]
    pub sim: SimConfig,
    /// The tank game's arena, `WIDTHxHEIGHT` in units (sent in `welcome`);
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

impl Default for GameSettings {
    fn default() -> Self {
        GameSettings {
            sim: SimConfig::default(),
            arena: None,
            blobs_side: BlobSettings::default().side,
            blobs_pellets: BlobSettings::default().pellets,
        }
    }
}

impl GameSettings {
    /// The movement constants with the `--arena` override.
    pub fn sim(&self) -> SimConfig {
        SimConfig {
            arena: self.arena.unwrap_or(self.sim.arena),
            ..self.sim.clone()
        }
    }

    /// What every room of the tank game is set up with.
    pub fn tanks(&self) -> TankSettings {
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
    use clap::Parser;

    #[derive(Parser)]
    struct Line {
        #[command(flatten)]
        games: GameSettings,
    }

    #[test]
    fn arena_sizes_parse_or_say_why_not() {
        assert_eq!(arena("8000x6000"), Ok(Vec2::new(8000.0, 6000.0)));
        assert!(arena("8000").is_err());
        assert!(arena("0x10").is_err());
        assert!(arena("NaNx1000").is_err());
    }

    #[test]
    fn the_default_is_an_empty_command_line() {
        let parsed = Line::try_parse_from(["x", "--arena", "8000x8000"]).expect("parses");
        assert_eq!(parsed.games.sim().arena.x, 8000.0);
        let empty = Line::try_parse_from(["x"]).expect("parses");
        assert_eq!(empty.games.blobs(), GameSettings::default().blobs());
        assert_eq!(empty.games.tanks(), GameSettings::default().tanks());
    }
}
