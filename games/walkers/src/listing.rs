//! The guide's listing, line for line (`docs/GUIDE.md`; a tidy test
//! checks it), as rustfmt formats it.

use std::time::Duration;

use skirmish_core::prelude::*;

/// The game: players walk a square field, a point each.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Walkers;

/// The field's side, in units, and how fast a walker walks, per second.
pub const FIELD: f32 = 1000.0;
const SPEED: f32 = 200.0;

/// One tick's controls: a step of -1, 0 or 1 along x and along y.
pub type Walk = (i8, i8);

/// A walker is a point: the server sends it to its page exactly, in the
/// library's envelope (`Owned`: who, when, which walk it includes).
impl Game for Walkers {
    const NAME: &'static str = "walkers";
    const VERSION: u32 = 2;
    type Config = ();
    type Input = Walk;
    type Own = Owned<Vec2>;
    type Local = Vec2; // predicted, and drawn where it is

    fn cadence((): &()) -> Duration {
        Duration::from_millis(50)
    }
    fn sanitize((x, y): Walk) -> Walk {
        (x.clamp(-1, 1), y.clamp(-1, 1))
    }
    /// The one step the page predicts with and the server runs.
    fn predict(at: Vec2, &(x, y): &Walk, dt: Duration, (): &()) -> Vec2 {
        let step = Vec2::new(f32::from(x), f32::from(y)) * (SPEED * dt.as_secs_f32());
        (at + step).max(Vec2::ZERO).min(Vec2::splat(FIELD))
    }
    fn local(own: &Owned<Vec2>) -> Vec2 {
        own.state
    }
}

/// How it travels: nothing to add to `welcome`, the input with its tick,
/// the others as a point to a unit.
impl Networked for Walkers {
    type Setup = NoSetup;
    type Wire = Ticked<Walk>;
    type Entity = Spot;

    fn quantise(own: &Owned<Vec2>, (): &()) -> Spot {
        Spot::of(own.state)
    }
    fn dequantise(spot: &Spot, id: PlayerId, tick: Tick, (): &()) -> Owned<Vec2> {
        Owned::new(id, tick, None, spot.point())
    }
}

/// The server keeps a point per walker; the library moves it by each
/// tick's walk, with `predict`.
impl ServerGame for Walkers {
    type Player = Vec2;
    type World = ();
    type Settings = ();

    fn setup((): &(), (): &()) -> NoSetup {
        NoSetup {}
    }
    fn extent((): &()) -> Vec2 {
        Vec2::splat(FIELD)
    }
    fn spawn(spawn: Spawn<'_, Walkers>) -> Vec2 {
        // A 9 by 9 grid, its diagonal first: inside the field however many walk.
        let (i, lap) = (spawn.players.len() % 9, spawn.players.len() / 9);
        Vec2::new(100.0 * ((i + lap) % 9 + 1) as f32, 100.0 * (i + 1) as f32)
    }
    fn step(step: Step<'_, Walkers>) {
        step.apply_inputs();
    }
}

/// The page holds a walk; everything else is the library's default.
impl ClientGame for Walkers {
    type Controls = Walk;
    type Client = ();
    fn input((): &mut (), walk: &Walk, _alive: bool, _tick: Tick) -> Walk {
        *walk
    }
}
