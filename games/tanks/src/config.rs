//! The constants of the movement model, shared by client and server.
//!
//! The server sends its [`SimConfig`] in `welcome`, so both sides always run
//! the same movement code with the same numbers (RS-7). A config from the
//! network is untrusted: [`SimConfig::validate`] says what is wrong with it.

use std::time::Duration;

use glam::Vec2;
use serde::{Deserialize, Serialize};

/// Largest number of obstacles a valid config may hold.
pub const MAX_OBSTACLES: usize = 64;

/// An axis-aligned rectangle, `min` at the top-left corner.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rect {
    /// The corner with the smallest coordinates.
    pub min: Vec2,
    /// The corner with the largest coordinates.
    pub max: Vec2,
}

impl Rect {
    /// A rectangle from its corner and its size.
    pub fn new(x: f32, y: f32, w: f32, h: f32) -> Rect {
        Rect {
            min: Vec2::new(x, y),
            max: Vec2::new(x + w, y + h),
        }
    }
}

/// Everything the movement step depends on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimConfig {
    /// The authoritative cadence: one server tick and one client fixed step.
    pub tick_ms: u32,
    /// Forward speed at full throttle, in units per second.
    pub speed: f32,
    /// Turn rate at full turn, in radians per second.
    pub turn_rate: f32,
    /// Radius of a player's collision circle.
    pub player_radius: f32,
    /// Size of the arena; it spans `(0, 0)` to `arena`.
    pub arena: Vec2,
    /// Static rectangular obstacles, resolved in this order.
    pub obstacles: Vec<Rect>,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            tick_ms: 50,
            speed: 200.0,
            turn_rate: std::f32::consts::PI,
            player_radius: 20.0,
            arena: Vec2::new(2000.0, 1200.0),
            obstacles: vec![
                Rect::new(400.0, 250.0, 160.0, 200.0),
                Rect::new(1440.0, 250.0, 160.0, 200.0),
                Rect::new(400.0, 750.0, 160.0, 200.0),
                Rect::new(1440.0, 750.0, 160.0, 200.0),
                Rect::new(900.0, 520.0, 200.0, 160.0),
            ],
        }
    }
}

/// Why a [`SimConfig`] cannot be used.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// The cadence is outside 1..=1000 ms.
    #[error("tick_ms must be within 1..=1000, got {0}")]
    Cadence(u32),
    /// A number is negative, zero where it may not be, NaN or infinite.
    #[error("{0} must be a finite positive number")]
    NotPositive(&'static str),
    /// The arena cannot hold one player.
    #[error("the arena must be larger than a player in both directions")]
    ArenaTooSmall,
    /// An obstacle has non-finite corners or `min > max`.
    #[error("obstacle {0} is not a finite rectangle with min <= max")]
    Obstacle(usize),
    /// More obstacles than [`MAX_OBSTACLES`].
    #[error("at most {MAX_OBSTACLES} obstacles, got {0}")]
    TooManyObstacles(usize),
}

impl SimConfig {
    /// The fixed step as a duration.
    pub fn cadence(&self) -> Duration {
        Duration::from_millis(u64::from(self.tick_ms))
    }

    /// Whole ticks covering `ms`, rounded up.
    pub fn ticks_of(&self, ms: u32) -> u32 {
        ms.div_ceil(self.tick_ms.max(1))
    }

    /// The fixed step in seconds, as the simulation uses it.
    pub fn cadence_secs(&self) -> f32 {
        self.tick_ms as f32 / 1000.0
    }

    /// Checks that every number is usable, for a config read from the network.
    ///
    /// # Errors
    /// Returns the first problem found.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(1..=1000).contains(&self.tick_ms) {
            return Err(ConfigError::Cadence(self.tick_ms));
        }
        for (name, value) in [
            ("speed", self.speed),
            ("turn_rate", self.turn_rate),
            ("player_radius", self.player_radius),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(ConfigError::NotPositive(name));
            }
        }
        if !self.arena.is_finite()
            || self.arena.x <= 2.0 * self.player_radius
            || self.arena.y <= 2.0 * self.player_radius
        {
            return Err(ConfigError::ArenaTooSmall);
        }
        if self.obstacles.len() > MAX_OBSTACLES {
            return Err(ConfigError::TooManyObstacles(self.obstacles.len()));
        }
        for (i, rect) in self.obstacles.iter().enumerate() {
            if !rect.min.is_finite() || !rect.max.is_finite() || rect.min.cmpgt(rect.max).any() {
                return Err(ConfigError::Obstacle(i));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_config_is_valid() {
        assert_eq!(SimConfig::default().validate(), Ok(()));
        assert_eq!(SimConfig::default().cadence(), Duration::from_millis(50));
    }

    /// RS-7: the server sends its config in `welcome`; the client must end up
    /// with the very same constants, bit for bit.
    #[test]
    fn rs7_config_travels_bit_exactly_as_json() {
        let config = SimConfig {
            speed: 0.1 + 0.2,
            turn_rate: std::f32::consts::PI / 3.0,
            ..SimConfig::default()
        };
        let json = serde_json::to_string(&config).unwrap();
        let back: SimConfig = serde_json::from_str(&json).unwrap();
        assert_eq!(back.speed.to_bits(), config.speed.to_bits());
        assert_eq!(back.turn_rate.to_bits(), config.turn_rate.to_bits());
        assert_eq!(back, config);
    }

    #[test]
    fn invalid_configs_are_named() {
        let bad = |f: fn(&mut SimConfig)| {
            let mut c = SimConfig::default();
            f(&mut c);
            c.validate()
        };
        assert_eq!(bad(|c| c.tick_ms = 0), Err(ConfigError::Cadence(0)));
        assert_eq!(
            bad(|c| c.speed = f32::NAN),
            Err(ConfigError::NotPositive("speed"))
        );
        assert_eq!(
            bad(|c| c.arena = Vec2::new(30.0, 1000.0)),
            Err(ConfigError::ArenaTooSmall)
        );
        assert_eq!(
            bad(|c| c.obstacles[1].max.x = 0.0),
            Err(ConfigError::Obstacle(1))
        );
        assert_eq!(
            bad(|c| c.obstacles = vec![Rect::new(0.0, 0.0, 1.0, 1.0); 65]),
            Err(ConfigError::TooManyObstacles(65))
        );
    }
}
