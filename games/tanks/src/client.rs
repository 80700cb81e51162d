//! Where the page starts its tank.

use glam::Vec2;

use crate::config::SimConfig;
use crate::sim::Pose;
use crate::Tanks;
use skirmish_core::{LocalPlayer, SmoothingConfig};

/// A tank's predicted player where the page starts it: (100, 100),
/// facing +x, with the default configuration and smoothing.
pub fn tank_player() -> LocalPlayer<Tanks> {
    LocalPlayer::new(
        SimConfig::default(),
        SmoothingConfig::default(),
        Pose::new(Vec2::new(100.0, 100.0), 0.0),
    )
}

#[cfg(test)]
mod remotes;
#[cfg(test)]
mod tests;
