//! The tank game in the harness (`skirmish-harness`): scripted brains
//! (seeded wandering that keeps clear of walls and, optionally, of other
//! players; a shooter; a circler; or a recorded trace of controls), how
//! the stepper sees a tank, its seeded run and its main cell.
//!
//! A brain reads only what a player sees (its session's view) and answers
//! with controls, so the same brain drives bots over real WebSockets and
//! clients in the deterministic stepper.

use std::time::Duration;

use skirmish_core::determinism::Fnv64;
use skirmish_core::{ClientSession, Driver, Harness, QualityWords, RoomConfig, SeededRng, Vec2};

use crate::golden::{golden_input, hash_pose};
use crate::{
    angle_delta, shot_path, Controls, MoveInput, Pose, SimConfig, TankNote, TankSettings, Tanks,
};

/// How a bot decides.
#[derive(Clone, Debug)]
pub enum Script {
    /// Seeded wandering.
    Wander(Wander),
    /// A fixed trace: one entry per 50 ms, repeated.
    Trace(Vec<Controls>),
    /// Stands still and shoots at what it draws of the other players.
    Shooter(Shooter),
    /// Drives in circles at full speed, turning at this rate (-1 to 1).
    Circle(f32),
}

impl Script {
    /// The controls to hold now.
    pub fn controls(&mut self, session: &ClientSession<Tanks>, arena: Vec2) -> Controls {
        match self {
            Script::Wander(w) => w.controls(session, arena),
            Script::Trace(trace) if !trace.is_empty() => {
                let step = (session.now().as_millis() / 50) as usize;
                trace[step % trace.len()]
            }
            Script::Trace(_) => Controls::default(),
            Script::Shooter(s) => s.controls(session),
            Script::Circle(turn) => Controls {
                turn: *turn,
                throttle: 1.0,
                fire: false,
            },
        }
    }
}

/// Drives forward, turning a little now and then; steers away from walls
/// (and from other players when `keep_clear`), fires at random if asked.
#[derive(Clone, Debug)]
pub struct Wander {
    rng: SeededRng,
    turn: f32,
    next_change: Duration,
    /// Keep this far from walls.
    pub wall_margin: f32,
    /// Keep clear of other players (at `player_margin`).
    pub keep_clear: bool,
    /// Keep this far from other players when `keep_clear`.
    pub player_margin: f32,
    /// Chance per call to hold fire.
    pub fire_chance: f32,
}

impl Wander {
    /// A brain that keeps clear of walls and players and never fires.
    pub fn new(seed: u64) -> Wander {
        Wander {
            rng: SeededRng::new(seed),
            turn: 0.0,
            next_change: Duration::ZERO,
            wall_margin: 150.0,
            keep_clear: true,
            player_margin: 250.0,
            fire_chance: 0.0,
        }
    }

    /// The controls to hold now.
    pub fn controls(&mut self, session: &ClientSession<Tanks>, arena: Vec2) -> Controls {
        let now = session.now();
        if now >= self.next_change {
            self.turn = self.rng.range_f32(-0.6, 0.6);
            let ms = self.rng.range_f32(400.0, 1500.0);
            self.next_change = now + Duration::from_secs_f32(ms / 1000.0);
        }
        let fire = self.fire_chance > 0.0 && self.rng.chance(self.fire_chance);
        let view = session.view();
        let Some(own) = view.own.filter(|o| o.alive) else {
            return Controls {
                fire: false,
                ..Controls::default()
            };
        };
        let p = own.predicted.position;
        let m = self.wall_margin;
        let mut away = Vec2::ZERO;
        if p.x < m || p.y < m || p.x > arena.x - m || p.y > arena.y - m {
            away += arena * 0.5 - p;
        }
        if self.keep_clear {
            for remote in view.remotes.iter().filter(|r| r.alive) {
                let d = p - remote.visual.position;
                if d.length() < self.player_margin {
                    away += d.normalize_or_zero() * self.player_margin;
                }
            }
        }
        let turn = if away == Vec2::ZERO {
            self.turn
        } else {
            let wanted = away.y.atan2(away.x);
            skirmish_core::clamp(angle_delta(own.predicted.rotation, wanted) * 3.0, -1.0, 1.0)
        };
        Controls {
            turn,
            throttle: 1.0,
            fire,
        }
    }
}

/// Stands still, turns towards the nearest living player as its own
/// session draws it (interpolated, in the past: what a player sees), and
/// taps fire when the shot drawn from its own predicted pose would pass
/// through that drawn player's middle half.
#[derive(Clone, Debug)]
pub struct Shooter {
    /// The player radius of the world.
    pub radius: f32,
}

impl Shooter {
    /// The controls to hold now.
    pub fn controls(&mut self, session: &ClientSession<Tanks>) -> Controls {
        let view = session.view();
        let Some(own) = view.own.filter(|o| o.alive) else {
            return Controls::default();
        };
        let me = own.predicted;
        let Some(target) = view.remotes.iter().filter(|r| r.alive).min_by(|a, b| {
            let da = a.visual.position.distance(me.position);
            let db = b.visual.position.distance(me.position);
            da.total_cmp(&db)
        }) else {
            return Controls::default();
        };
        let to = target.visual.position - me.position;
        let wanted = to.y.atan2(to.x);
        let delta = angle_delta(me.rotation, wanted);
        // The shot's own path, as core computes it: off the target's centre
        // by this much, and in front.
        let Some(sim) = session.game_config() else {
            return Controls::default();
        };
        let (dir, reach) = shot_path(sim, &me, f32::MAX);
        let miss = to.perp_dot(dir).abs();
        let ahead = to.dot(dir);
        Controls {
            turn: skirmish_core::clamp(delta * 4.0, -1.0, 1.0),
            throttle: 0.0,
            fire: miss < self.radius * 0.5 && ahead > 0.0 && ahead < reach,
        }
    }
}

impl Driver<Tanks> for Script {
    fn controls(&mut self, session: &ClientSession<Tanks>, config: &SimConfig) -> Controls {
        Script::controls(self, session, config.arena)
    }
}

/// The harness's side: the golden trajectory's run (a new turn and
/// throttle every 20 steps) for the determinism check; the main cell, 16
/// bots wandering clear of walls and of each other in an open arena of
/// 6,000 units, never firing. A tank brakes before it reverses (the
/// stepper's default snap-back rule); a confirmed hit is a hit.
impl Harness for Tanks {
    type Driver = Script;

    const WORDS: QualityWords = QualityWords {
        title: "tanks, the first game",
        cell: "`games/tanks/src/script.rs`: 16 bots wandering clear of walls and of each other in an open arena \
of 6,000 units, never firing, the real `Room` and `ClientSession`s",
        remark: "These bots never collide, so every misprediction is a late or repeated input's.",
    };

    fn main_room() -> RoomConfig<Tanks> {
        RoomConfig {
            name: "stepper".into(),
            capacity: usize::MAX,
            game: TankSettings::from(SimConfig {
                arena: Vec2::new(6000.0, 6000.0),
                obstacles: Vec::new(),
                ..SimConfig::default()
            }),
            seed: 11,
            ..RoomConfig::default()
        }
    }

    fn main_player(i: usize) -> (Script, u64) {
        let i = i as u64;
        (Script::Wander(Wander::new(100 + i)), 200 + i)
    }

    fn is_hit(note: &TankNote) -> bool {
        matches!(note, TankNote::HitConfirmed(_))
    }

    fn seeded_start(_: &SimConfig) -> Pose {
        Pose::new(Vec2::new(100.0, 100.0), 0.0)
    }

    fn seeded_input(rng: &mut SeededRng, step: u32, previous: MoveInput) -> MoveInput {
        golden_input(rng, step, previous)
    }

    fn hash(pose: &Pose, hash: &mut Fnv64) {
        hash_pose(pose, hash);
    }
}

/// A room of `sim` with the rules of combat as shipped.
impl From<SimConfig> for TankSettings {
    fn from(sim: SimConfig) -> TankSettings {
        TankSettings {
            sim,
            ..TankSettings::default()
        }
    }
}
