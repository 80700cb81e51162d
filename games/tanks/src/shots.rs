//! Combat both sides compute: the rules (sent in `welcome`), the path of a
//! shot, the ray tests and the cooldown in ticks. The server judges hits
//! with them; the client draws its own shot's tracer with the very same
//! path and cooldown, so a prediction never disagrees with the rules in
//! force.

use glam::Vec2;

use crate::config::SimConfig;
use crate::sim::Pose;
use skirmish_core::Tick;

/// The rules of combat, with the defaults of protocol v1. The server sends
/// them in `welcome`, so a client's predicted shots use the same numbers; a
/// field missing from the wire takes its default.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct CombatRules {
    /// Hit points of a fresh player.
    pub max_hp: u16,
    /// Damage of one hit.
    pub damage: u16,
    /// Range of a shot, in units.
    pub range: f32,
    /// Shortest time between two shots of one player; both sides count it
    /// in whole ticks ([`CombatRules::cooldown_ticks`]).
    pub cooldown_ms: u32,
    /// Time dead before respawning.
    pub respawn_ms: u32,
    /// How far back a shooter's view is honoured, from the tick its input
    /// is simulated at. The default, 750 ms, covers a 250 ms round trip,
    /// the largest interpolation delay a client chooses
    /// ([`MAX_VIEW_DELAY_MS`](skirmish_core::timing::MAX_VIEW_DELAY_MS)) and 100 ms of input slack. It is the bound
    /// for every shooter; the server bounds a protocol-2 shooter whose
    /// round trip it has measured more tightly (its round trip, plus
    /// [`MAX_VIEW_DELAY_MS`](skirmish_core::timing::MAX_VIEW_DELAY_MS), plus a margin, from the moment the input
    /// arrived), never beyond this.
    pub max_rewind_ms: u32,
    /// How much pose history each player keeps.
    pub history_ms: u32,
}

impl CombatRules {
    /// Whether the numbers are usable, as rules from the network must be:
    /// a finite, non-negative range.
    pub fn is_valid(&self) -> bool {
        self.range.is_finite() && self.range >= 0.0
    }
}

impl CombatRules {
    /// The cooldown in whole ticks of `sim`'s cadence (rounded up).
    pub fn cooldown_ticks(&self, sim: &SimConfig) -> u32 {
        sim.ticks_of(self.cooldown_ms)
    }
}

impl Default for CombatRules {
    fn default() -> Self {
        CombatRules {
            max_hp: 100,
            damage: 20,
            range: 800.0,
            cooldown_ms: 250,
            respawn_ms: 3000,
            max_rewind_ms: 750,
            history_ms: 1000,
        }
    }
}

/// When a player may fire again, counted in ticks of one side's clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cooldown {
    next_fire: Tick,
}

impl Cooldown {
    /// Fires at `tick` if the cooldown has passed, and starts it again for
    /// `ticks`; `false` (and nothing changes) while it runs.
    pub fn fire(&mut self, tick: Tick, ticks: u32) -> bool {
        if tick < self.next_fire {
            return false;
        }
        self.next_fire = tick.saturating_add(ticks);
        true
    }
}

/// A shot fired from `from`: its unit direction and how far it flies before
/// an obstacle stops it (at most `range`). The server and the client's own
/// tracer both use it.
pub fn shot_path(sim: &SimConfig, from: &Pose, range: f32) -> (Vec2, f32) {
    let dir = Vec2::new(libm::cosf(from.rotation), libm::sinf(from.rotation));
    let reach = sim
        .obstacles
        .iter()
        .filter_map(|rect| ray_rect(from.position, dir, rect.min, rect.max))
        .fold(range, f32::min);
    (dir, reach)
}

/// Distance along the unit ray `origin + t * dir` (t >= 0) to a circle, if it
/// is hit; 0 if the origin is inside.
pub fn ray_circle(origin: Vec2, dir: Vec2, centre: Vec2, radius: f32) -> Option<f32> {
    let to_centre = centre - origin;
    let along = to_centre.dot(dir);
    let dist2 = to_centre.length_squared() - along * along;
    let r2 = radius * radius;
    if dist2 > r2 {
        return None;
    }
    let t = along - (r2 - dist2).max(0.0).sqrt();
    if t >= 0.0 {
        Some(t)
    } else if to_centre.length_squared() <= r2 {
        Some(0.0)
    } else {
        None
    }
}

/// Distance along the unit ray to where it enters an axis-aligned
/// rectangle, if it does (slab method).
pub fn ray_rect(origin: Vec2, dir: Vec2, min: Vec2, max: Vec2) -> Option<f32> {
    let mut t_enter = 0.0_f32;
    let mut t_exit = f32::INFINITY;
    for (o, d, lo, hi) in [
        (origin.x, dir.x, min.x, max.x),
        (origin.y, dir.y, min.y, max.y),
    ] {
        if d == 0.0 {
            if o < lo || o > hi {
                return None;
            }
        } else {
            let (a, b) = ((lo - o) / d, (hi - o) / d);
            t_enter = t_enter.max(a.min(b));
            t_exit = t_exit.min(a.max(b));
        }
    }
    (t_enter <= t_exit).then_some(t_enter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cooldown_counts_ticks() {
        let sim = SimConfig::default();
        let rules = CombatRules::default();
        // 250 ms at 50 ms ticks.
        assert_eq!(rules.cooldown_ticks(&sim), 5);
        let mut cooldown = Cooldown::default();
        assert!(cooldown.fire(Tick(1), 5));
        assert!(!cooldown.fire(Tick(5), 5));
        assert!(cooldown.fire(Tick(6), 5));
        assert!(!cooldown.fire(Tick(10), 5));
        // Rounded up: 120 ms at 50 ms is 3 ticks.
        let rules = CombatRules {
            cooldown_ms: 120,
            ..rules
        };
        assert_eq!(rules.cooldown_ticks(&sim), 3);
    }

    #[test]
    fn ray_helpers() {
        assert_eq!(
            ray_circle(Vec2::ZERO, Vec2::X, Vec2::new(10.0, 0.0), 2.0),
            Some(8.0)
        );
        assert_eq!(
            ray_circle(Vec2::ZERO, Vec2::X, Vec2::new(-10.0, 0.0), 2.0),
            None
        );
        assert_eq!(
            ray_circle(Vec2::ZERO, Vec2::X, Vec2::new(1.0, 0.0), 2.0),
            Some(0.0)
        );
        assert_eq!(
            ray_rect(
                Vec2::ZERO,
                Vec2::X,
                Vec2::new(5.0, -1.0),
                Vec2::new(6.0, 1.0)
            ),
            Some(5.0)
        );
        assert_eq!(
            ray_rect(
                Vec2::ZERO,
                Vec2::X,
                Vec2::new(5.0, 2.0),
                Vec2::new(6.0, 3.0)
            ),
            None
        );
    }
}
