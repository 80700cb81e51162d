//! The server's rules: steering moves a blob as its page predicts; a blob
//! eats the pellets under it and the blobs it is much larger than; an
//! eaten blob comes back a second later; pellets are spawned back up to
//! the room's count, in bulk, at seeded places.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use skirmish_core::{
    Codec, Command, Game, IntoOwn, Owned, PlayerId, SeededRng, ServerGame, ServerPlayer, Spawn,
    Stamp, Step, Thing, Things, Tick, Vec2,
};

use crate::{
    pace, radius, speed, Arena, Bit, Blob, Blobs, Happening, BLOB, DEAD, PACE_AFTER, PELLET,
    PELLET_MASS, START_MASS,
};

/// What a blob is, moving: where, how heavy, whether it is alive, and its
/// pace (the fraction of [`SPEED`](crate::SPEED) it goes at). The pace
/// follows the mass only when the server schedules it: `next` comes after
/// `wait` more steps, in the step both sides run. An eaten blob stays
/// where it was eaten, on both sides, until it comes back.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Body {
    /// Where, in units.
    pub at: Vec2,
    /// How heavy.
    pub mass: f32,
    /// Not eaten.
    pub alive: bool,
    /// Its pace now.
    pub pace: f32,
    /// The pace to come.
    pub next: f32,
    /// Steps until `next` comes; 0: none scheduled.
    pub wait: u8,
}

impl Body {
    /// A new blob of the starting mass at `at`.
    pub fn fresh(at: Vec2) -> Body {
        Body {
            at,
            mass: START_MASS,
            alive: true,
            pace: 1.0,
            next: 1.0,
            wait: 0,
        }
    }
}

/// A body in binary as serde describes it, as the flight recorder hashes
/// it: exactly.
impl Codec for Body {}

/// A player on the server: its body, and when an eaten one comes back.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Player {
    /// Its body.
    pub body: Body,
    /// When an eaten one comes back.
    pub back_at: Tick,
}

/// How a room of blobs is set up.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BlobSettings {
    /// The arena's side, in units.
    pub side: f32,
    /// Pellets the server keeps in the arena.
    pub pellets: u32,
}

impl Default for BlobSettings {
    fn default() -> Self {
        BlobSettings {
            side: Arena::default().side,
            pellets: 5000,
        }
    }
}

/// The world beyond the players: its pellets and how many it keeps.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BlobWorld {
    /// The pellets, in id order.
    pub pellets: Things<Bit>,
    /// How many it keeps.
    pub target: u32,
}

/// Ticks an eaten blob waits (one second).
const BACK_AFTER: u32 = 20;
/// Pellets spawned back per tick at most.
const SPAWN_PER_TICK: u32 = 500;
/// How much larger a blob must be to eat another.
const EATS_AT: f32 = 1.25;
/// The side of a cell of the pellet grid, in units.
const CELL: f32 = 100.0;

/// The server keeps a blob's body and when it comes back; its page gets
/// the body.
impl IntoOwn<Owned<Blob>> for Player {
    fn own(&self, id: PlayerId, stamp: Stamp) -> Owned<Blob> {
        let body = &self.body;
        let blob = Blob {
            at: body.at,
            mass: body.mass,
            kind: if body.alive { BLOB } else { DEAD },
            pace: (body.pace, body.next, body.wait),
        };
        Owned::new(id, stamp.tick, stamp.ack, blob)
    }
}

impl ServerGame for Blobs {
    type Player = Player;
    type World = BlobWorld;
    type Settings = BlobSettings;

    fn start(settings: &BlobSettings) -> (Arena, BlobWorld) {
        let world = BlobWorld {
            pellets: Things::new(),
            target: settings.pellets,
        };
        (
            Arena {
                side: settings.side,
            },
            world,
        )
    }
    fn check(settings: &BlobSettings) -> Result<(), String> {
        if !(500.0..=60_000.0).contains(&settings.side) {
            return Err(format!(
                "an arena of {} units (500 to 60000)",
                settings.side
            ));
        }
        if settings.pellets > 100_000 {
            return Err(format!("{} pellets (at most 100000)", settings.pellets));
        }
        Ok(())
    }
    /// A blob sees 1,200 units around it (more as it grows), not the
    /// whole arena of thousands of pellets.
    fn interest_radius(_: &BlobSettings) -> Option<f32> {
        Some(1200.0)
    }
    fn setup(_: &BlobWorld, arena: &Arena) -> Arena {
        *arena
    }
    fn speed(own: &Owned<Blob>, _: &Arena) -> f32 {
        speed(own.mass) / speed(START_MASS)
    }
    fn extent(arena: &Arena) -> Vec2 {
        Vec2::splat(arena.side)
    }
    fn things(world: &BlobWorld) -> &[Thing<Bit>] {
        world.pellets.as_slice()
    }
    /// A larger blob sees further: ten of its radii beyond the room's.
    fn view_radius(own: &Owned<Blob>, radius_: f32) -> f32 {
        radius_ + 10.0 * radius(own.mass)
    }
    /// The eaten and the eater keep each other in view a while.
    fn partners(happening: &Happening) -> Option<(PlayerId, PlayerId)> {
        match *happening {
            Happening::Eaten { target, by, .. } => Some((target, by)),
            _ => None,
        }
    }
    fn spawn(spawn: Spawn<'_, Blobs>) -> Player {
        Player {
            body: Body::fresh(somewhere(spawn.rng, *spawn.config)),
            back_at: Tick::ZERO,
        }
    }
    fn step(step: Step<'_, Blobs>) {
        let cadence = Blobs::cadence(step.config);
        for (id, player) in step.players.iter_mut() {
            let (commands, p) = player.commands_and_state();
            for command in commands {
                // Sanitized by the library on its way in.
                if let Command::Apply { input, .. } = command {
                    p.body = Blobs::predict(p.body, &input.input, cadence, step.config);
                }
            }
            if !p.body.alive && step.tick >= p.back_at {
                p.body = Body::fresh(somewhere(step.rng, *step.config));
                step.events.push(Happening::Back {
                    tick: step.tick,
                    target: *id,
                    at: p.body.at,
                });
            }
        }
        eat_pellets(step.world, step.players, *step.config);
        eat_blobs(step.players, step.tick, step.events);
        // A pace that no longer fits the mass is scheduled, a second
        // ahead: the page hears of it long before it predicts it.
        for player in step.players.values_mut() {
            let body = &mut player.state.body;
            let fits = pace(body.mass);
            if body.wait == 0 && fits != body.pace {
                body.next = fits;
                body.wait = PACE_AFTER;
            }
        }
        let missing = step
            .world
            .target
            .saturating_sub(step.world.pellets.len() as u32);
        let arena = *step.config;
        let rng = &mut *step.rng;
        step.world
            .pellets
            .spawn_many((0..missing.min(SPAWN_PER_TICK)).map(|_| {
                let at = somewhere(rng, arena);
                (at, Bit::of(at, PELLET_MASS, PELLET))
            }));
    }
}

/// A seeded place in the arena.
fn somewhere(rng: &mut SeededRng, arena: Arena) -> Vec2 {
    Vec2::new(
        rng.range_f32(0.0, arena.side),
        rng.range_f32(0.0, arena.side),
    )
}

/// Every living blob, in id order, eats the pellets under it.
fn eat_pellets(
    world: &mut BlobWorld,
    players: &mut BTreeMap<PlayerId, ServerPlayer<Blobs>>,
    arena: Arena,
) {
    let columns = (arena.side / CELL) as usize + 1;
    let cell = |v: f32| ((v.max(0.0) / CELL) as usize).min(columns - 1);
    let mut grid: Vec<Vec<usize>> = vec![Vec::new(); columns * columns];
    let pellets = world.pellets.as_slice();
    for (i, p) in pellets.iter().enumerate() {
        grid[cell(p.at.y) * columns + cell(p.at.x)].push(i);
    }
    let mut eaten = vec![false; pellets.len()];
    let mut any = false;
    for player in players.values_mut() {
        let p = &mut player.state;
        if !p.body.alive {
            continue;
        }
        let r = radius(p.body.mass);
        let (x0, x1) = (cell(p.body.at.x - r), cell(p.body.at.x + r));
        let (y0, y1) = (cell(p.body.at.y - r), cell(p.body.at.y + r));
        for y in y0..=y1 {
            for x in x0..=x1 {
                for &i in &grid[y * columns + x] {
                    if !eaten[i] && pellets[i].at.distance(p.body.at) < r {
                        eaten[i] = true;
                        any = true;
                        p.body.mass += PELLET_MASS;
                    }
                }
            }
        }
    }
    if any {
        let mut gone = eaten.iter();
        world
            .pellets
            .despawn_where(|_| gone.next().copied().unwrap_or(false));
    }
}

/// A blob much larger than another that covers its centre eats it: the
/// eaten one waits to come back, the eater takes most of its mass.
fn eat_blobs(
    players: &mut BTreeMap<PlayerId, ServerPlayer<Blobs>>,
    tick: Tick,
    events: &mut Vec<Happening>,
) {
    let bodies: Vec<(PlayerId, Body)> = players
        .iter()
        .filter(|(_, p)| p.state.body.alive)
        .map(|(id, p)| (*id, p.state.body))
        .collect();
    let mut gained: BTreeMap<PlayerId, f32> = BTreeMap::new();
    let mut eaten: Vec<PlayerId> = Vec::new();
    let mut meals: Vec<(PlayerId, PlayerId, f32)> = Vec::new();
    for (a, big) in &bodies {
        for (b, small) in &bodies {
            let eats = big.mass >= EATS_AT * small.mass
                && big.at.distance(small.at) < radius(big.mass)
                && !eaten.contains(b)
                && !eaten.contains(a);
            if eats {
                eaten.push(*b);
                meals.push((*a, *b, 0.8 * small.mass));
            }
        }
    }
    // A blob eaten later in the same tick keeps none of what it ate.
    for &(by, target, gain) in &meals {
        events.push(Happening::Eaten { tick, target, by });
        if !eaten.contains(&by) {
            *gained.entry(by).or_default() += gain;
            events.push(Happening::Grew {
                tick,
                target: by,
                ate: target,
                gain,
            });
        }
    }
    for (id, p) in players.iter_mut() {
        if eaten.contains(id) {
            p.state.body.alive = false;
            p.state.back_at = Tick(tick.0 + BACK_AFTER);
        } else if let Some(mass) = gained.get(id) {
            p.state.body.mass += mass;
        }
    }
}
