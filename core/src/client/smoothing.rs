//! Visual correction of the controlled player: how a misprediction is shown.
//!
//! Gameplay truth is the predicted state. What is drawn is the predicted
//! state shifted by a [`Correction`] offset (the game's [`Offset`]: for a
//! game on a plane, a position and a rotation along the shortest arc).
//! Reconciliation sets the offset to *visible minus new prediction*, so
//! what is drawn does not move at the instant of reconciliation; between
//! authoritative states the offset only decays, while live prediction keeps
//! running underneath, so the player's own input shows on the very next
//! frame.
//!
//! The rules, with [`SmoothingConfig`]'s defaults:
//! - A reconciliation whose error (old prediction vs rebuilt prediction) is
//!   below the dead zone (0.5 u, 0.01 rad) is *absorbed*: it folds into the
//!   offset, nothing jumps, and it is not counted as a correction (RS-5).
//! - A larger error is a *correction*: it folds into any active offset
//!   (CAPS-3) and decays with a half-life of 100 ms.
//! - If the folded offset exceeds the snap distance (64 u) or angle (pi/2),
//!   what is drawn *snaps* to the prediction and the offset is cleared
//!   (LPR-5, CAPS-4).
//! - A correction still visible (above the dead zone) when its budget of
//!   500 ms runs out snaps too; the budget starts with the correction and is
//!   not restarted by corrections folded into it (CAPS-4).
//! - An offset that decays below 0.01 u and 0.001 rad is cleared.
//!
//! Everything here is a pure function of state and elapsed time; the caller
//! supplies the frame time.

use serde::{Deserialize, Serialize};

use crate::shared::game::{Offset, Visual};

/// An offset below this (in units) is cleared as settled.
pub const SETTLED_DISTANCE: f32 = 0.01;
/// A rotation offset below this (in radians) is cleared as settled.
pub const SETTLED_ANGLE: f32 = 0.001;

/// How corrections are shown. See the module docs for the rules.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SmoothingConfig {
    /// Whether corrections are smoothed at all; when off, every correction
    /// snaps (the HUD toggle that shows what smoothing does).
    pub enabled: bool,
    /// A visible offset larger than this snaps, in units.
    pub snap_distance: f32,
    /// A visible rotation offset larger than this snaps, in radians.
    pub snap_angle: f32,
    /// Time for the offset to halve, in seconds.
    pub half_life: f32,
    /// Longest a correction may stay visible, in seconds, before it snaps.
    pub budget: f32,
    /// Errors below this distance are absorbed without a visible change.
    pub dead_zone: f32,
    /// Rotation errors below this angle are absorbed likewise.
    pub dead_zone_angle: f32,
}

impl Default for SmoothingConfig {
    fn default() -> Self {
        SmoothingConfig {
            enabled: true,
            snap_distance: 64.0,
            snap_angle: std::f32::consts::FRAC_PI_2,
            half_life: 0.1,
            budget: 0.5,
            dead_zone: 0.5,
            dead_zone_angle: 0.01,
        }
    }
}

/// What a reconciliation did to what is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CorrectionOutcome {
    /// The first authoritative state: the player was placed, nothing counted.
    Placed,
    /// No error at all.
    None,
    /// An error below the dead zone, folded in without a visible change.
    Absorbed,
    /// A correction folded into the offset, decaying smoothly.
    Smoothed,
    /// What is drawn jumped to the prediction.
    Snapped,
}

/// The visual offset between what is drawn and the prediction, of a
/// game whose visuals differ by `O`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Correction<O> {
    offset: O,
    /// Seconds since the active correction began, if one is active.
    age: Option<f32>,
}

impl<O: Offset> Correction<O> {
    /// The offset added to the prediction.
    pub fn offset(&self) -> O {
        self.offset
    }

    /// Whether a counted correction is still converging.
    pub fn is_active(&self) -> bool {
        self.age.is_some()
    }

    /// Whether there is any offset at all.
    pub fn is_zero(&self) -> bool {
        self.offset == O::default()
    }

    /// `visual` with the offset added.
    pub fn apply<V: Visual<Offset = O>>(&self, visual: &V) -> V {
        visual.shifted(&self.offset)
    }

    /// Clears the offset: what is drawn is the prediction.
    pub fn clear(&mut self) {
        self.offset = O::default();
        self.age = None;
    }

    /// Folds a reconciliation's shift (from the new prediction back to the
    /// old one) into the offset and says what became of it.
    pub fn on_reconcile(&mut self, shift: O, config: &SmoothingConfig) -> CorrectionOutcome {
        if shift == O::default() {
            return CorrectionOutcome::None;
        }
        let offset = self.offset.plus(&shift);
        let step = shift.size();
        if step.distance < config.dead_zone && step.angle < config.dead_zone_angle {
            self.offset = offset;
            return CorrectionOutcome::Absorbed;
        }
        let out_of_budget = self.age.is_some_and(|age| age >= config.budget);
        let size = offset.size();
        if !config.enabled
            || out_of_budget
            || !offset.is_finite()
            || size.distance > config.snap_distance
            || size.angle > config.snap_angle
        {
            self.clear();
            return CorrectionOutcome::Snapped;
        }
        self.offset = offset;
        self.age.get_or_insert(0.0);
        CorrectionOutcome::Smoothed
    }

    /// Lets `dt` seconds of frame time pass: the offset decays. Returns
    /// `true` if the correction ran out of budget while still visible and
    /// snapped.
    pub fn advance(&mut self, dt: f32, config: &SmoothingConfig) -> bool {
        if self.is_zero() || !(dt.is_finite() && dt > 0.0) {
            return false;
        }
        let factor = if config.half_life > 0.0 {
            libm::exp2f(-dt / config.half_life)
        } else {
            0.0
        };
        self.offset = self.offset.scaled(factor);
        let size = self.offset.size();
        if let Some(age) = self.age.as_mut() {
            *age += dt;
            if *age >= config.budget {
                let visible =
                    size.distance >= config.dead_zone || size.angle >= config.dead_zone_angle;
                self.clear();
                return visible;
            }
        }
        if size.distance < SETTLED_DISTANCE && size.angle < SETTLED_ANGLE {
            self.clear();
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared::game::Size;

    /// An offset along a line.
    #[derive(Clone, Copy, Debug, Default, PartialEq)]
    struct Shift(f32);

    impl Offset for Shift {
        fn plus(&self, other: &Shift) -> Shift {
            Shift(self.0 + other.0)
        }
        fn negated(&self) -> Shift {
            Shift(-self.0)
        }
        fn scaled(&self, factor: f32) -> Shift {
            Shift(self.0 * factor)
        }
        fn size(&self) -> Size {
            Size {
                distance: self.0.abs(),
                angle: 0.0,
            }
        }
        fn is_finite(&self) -> bool {
            self.0.is_finite()
        }
    }

    fn shift(x: f32) -> Shift {
        Shift(x)
    }

    #[test]
    fn decay_halves_per_half_life_and_settles() {
        let config = SmoothingConfig::default();
        let mut c = Correction::default();
        assert_eq!(
            c.on_reconcile(shift(8.0), &config),
            CorrectionOutcome::Smoothed
        );
        assert!(!c.advance(0.1, &config));
        assert!((c.offset().0 - 4.0).abs() < 1e-5);
        // Within the budget the correction converges below the dead zone and
        // is cleared without a snap.
        assert!(!c.advance(0.4, &config));
        assert!(c.is_zero());
        assert!(!c.is_active());
    }

    #[test]
    fn disabled_smoothing_snaps_every_correction() {
        let config = SmoothingConfig {
            enabled: false,
            ..SmoothingConfig::default()
        };
        let mut c = Correction::default();
        assert_eq!(
            c.on_reconcile(shift(3.0), &config),
            CorrectionOutcome::Snapped
        );
        assert!(c.is_zero());
    }

    #[test]
    fn non_finite_time_changes_nothing() {
        let config = SmoothingConfig::default();
        let mut c = Correction::default();
        c.on_reconcile(shift(3.0), &config);
        let before = c;
        assert!(!c.advance(f32::NAN, &config));
        assert!(!c.advance(-1.0, &config));
        assert_eq!(c, before);
    }
}
