//! Drift: a game on Skirmish, written by `cargo xtask new-game
//! drift`. Players steer a point each across a square field. Change the
//! rules here; `driver.rs` is how the harness plays it, and its page is the
//! crate in `page/`.

use std::time::Duration;

use skirmish_core::{
    ClientGame, Game, Networked, NoSetup, Owned, PlayerId, ServerGame, Spawn, Spot, Step, Tick,
    Ticked, Vec2,
};

pub mod driver;

/// The game.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Drift;

/// The field's side, in units, and a point's speed, in units a second.
pub const FIELD: f32 = 1000.0;
const SPEED: f32 = 200.0;

/// One tick's controls: -1, 0 or 1 along x and along y.
pub type Steer = (i8, i8);

impl Game for Drift {
    const NAME: &'static str = "drift";
    const VERSION: u32 = 1;
    type Config = ();
    type Input = Steer;
    /// A point, sent to its own page exactly in the library's envelope
    /// (who, when, which input it includes).
    type Own = Owned<Vec2>;
    type Local = Vec2;

    fn cadence((): &()) -> Duration {
        Duration::from_millis(50)
    }

    fn sanitize((x, y): Steer) -> Steer {
        (x.clamp(-1, 1), y.clamp(-1, 1))
    }

    /// The one step the page predicts with and the server runs.
    fn predict(at: Vec2, &(x, y): &Steer, dt: Duration, (): &()) -> Vec2 {
        let step = Vec2::new(f32::from(x), f32::from(y)) * (SPEED * dt.as_secs_f32());
        (at + step).max(Vec2::ZERO).min(Vec2::splat(FIELD))
    }

    fn local(own: &Owned<Vec2>) -> Vec2 {
        own.state
    }
}

impl Networked for Drift {
    type Setup = NoSetup;
    type Wire = Ticked<Steer>;
    type Entity = Spot;

    fn quantise(own: &Owned<Vec2>, (): &()) -> Spot {
        Spot::of(own.state)
    }

    fn dequantise(spot: &Spot, id: PlayerId, tick: Tick, (): &()) -> Owned<Vec2> {
        Owned::new(id, tick, None, spot.point())
    }
}

impl ServerGame for Drift {
    type Player = Vec2;
    type World = ();
    type Settings = ();

    fn setup((): &(), (): &()) -> NoSetup {
        NoSetup {}
    }

    fn extent((): &()) -> Vec2 {
        Vec2::splat(FIELD)
    }

    fn spawn(spawn: Spawn<'_, Drift>) -> Vec2 {
        // A 9 by 9 grid, inside the field, however many play.
        let (i, lap) = (spawn.players.len() % 9, spawn.players.len() / 9);
        Vec2::new(100.0 * ((i + lap) % 9 + 1) as f32, 100.0 * (i + 1) as f32)
    }

    /// The library moves each point by its inputs, with `predict`; a
    /// game with rules of its world (collisions, pickups) adds them here.
    fn step(step: Step<'_, Drift>) {
        step.apply_inputs();
    }
}

impl ClientGame for Drift {
    type Controls = Steer;
    type Client = ();

    fn input((): &mut (), steer: &Steer, _alive: bool, _tick: Tick) -> Steer {
        *steer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_moves_at_its_speed_and_stays_on_the_field() {
        let second = Duration::from_secs(1);
        let moved = Drift::predict(Vec2::splat(500.0), &(1, 0), second, &());
        assert_eq!(moved, Vec2::new(700.0, 500.0));
        let edge = Drift::predict(Vec2::splat(990.0), &(1, 1), second, &());
        assert_eq!(edge, Vec2::splat(FIELD));
        assert_eq!(Drift::sanitize((9, -9)), (1, -1));
    }
}
