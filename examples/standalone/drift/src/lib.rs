//! Drift: a game on Skirmish, written by `cargo xtask new-game
//! drift`. Players steer a point each across a square field. Change the
//! rules here; `driver.rs` is how the harness plays it, and its page is the
//! crate in `page/`.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use skirmish_core::{
    determinism, ClientGame, Codec, Command, Game, Harness, Networked, NoEvent, NoSetup, OwnState,
    PlayerId, ReadError, Reader, Replicated, SeededRng, ServerGame, ServerPlayer, Spot, Stamp,
    Step, Tick, Ticked, Vec2, Writer,
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

/// A player's point as the server sends it to its own page.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Who.
    pub id: PlayerId,
    /// The server tick it is true at.
    pub tick: Tick,
    /// The newest input it includes.
    pub ack: Option<Tick>,
    /// Where, in units.
    pub at: Vec2,
}

impl Game for Drift {
    const NAME: &'static str = "drift";
    const VERSION: u32 = 1;
    type Config = ();
    type Input = Steer;
    type Own = Point;
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

    fn local(own: &Point) -> Vec2 {
        own.at
    }

    fn is_valid(own: &Point) -> bool {
        own.at.is_finite()
    }
}

impl Replicated for Point {
    type Event = NoEvent;

    fn is_valid(&self) -> bool {
        self.at.is_finite()
    }

    fn apply(&mut self, event: &NoEvent) {
        match *event {}
    }
}

impl OwnState for Point {
    const BYTES: usize = 8;

    fn id(&self) -> PlayerId {
        self.id
    }

    fn stamp(&self) -> Stamp {
        Stamp {
            tick: self.tick,
            ack: self.ack,
        }
    }

    fn write(&self, w: &mut Writer) {
        Codec::write(&self.at, w);
    }

    fn read(id: PlayerId, stamp: Stamp, r: &mut Reader<'_>) -> Result<Point, ReadError> {
        Ok(Point {
            id,
            tick: stamp.tick,
            ack: stamp.ack,
            at: Vec2::read(r)?,
        })
    }
}

impl Networked for Drift {
    type Setup = NoSetup;
    type Wire = Ticked<Steer>;
    type Entity = Spot;
    const EVENTS: &'static str = "events";

    fn config(_: &NoSetup) -> &() {
        &()
    }

    fn wire(tick: Tick, steer: Steer, view_tick: Option<f64>) -> Ticked<Steer> {
        Ticked::new(tick, steer, view_tick)
    }

    fn quantise(own: &Point, (): &()) -> Spot {
        Spot::of(own.at)
    }

    fn dequantise(spot: &Spot, id: PlayerId, tick: Tick, (): &()) -> Point {
        Point {
            id,
            tick,
            ack: None,
            at: spot.point(),
        }
    }
}

impl ServerGame for Drift {
    type Player = Vec2;
    type World = ();
    type Settings = ();

    fn start((): &()) -> ((), ()) {
        ((), ())
    }

    fn setup((): &(), (): &()) -> NoSetup {
        NoSetup {}
    }

    fn position(own: &Point) -> Vec2 {
        own.at
    }

    fn extent((): &()) -> Vec2 {
        Vec2::splat(FIELD)
    }

    fn spawn(
        (): &(),
        (): &(),
        others: &BTreeMap<PlayerId, ServerPlayer<Drift>>,
        _: Tick,
        _: &mut SeededRng,
    ) -> Vec2 {
        // A 9 by 9 grid inside the field, however many play.
        let (i, lap) = (others.len() % 9, others.len() / 9);
        Vec2::new(100.0 * ((i + lap) % 9 + 1) as f32, 100.0 * (i + 1) as f32)
    }

    fn step(step: Step<'_, Drift>) {
        let cadence = Drift::cadence(&());
        for player in step.players.values_mut() {
            let (commands, at) = player.commands_and_state();
            for command in commands {
                if let Command::Apply { input, .. } = command {
                    *at = Drift::predict(*at, &Drift::sanitize(input.input), cadence, &());
                }
            }
        }
    }

    fn own((): &(), player: &ServerPlayer<Drift>, id: PlayerId, tick: Tick) -> Point {
        Point {
            id,
            tick,
            ack: player.ack(),
            at: player.state,
        }
    }
}

impl ClientGame for Drift {
    type Controls = Steer;
    type Client = ();
    type Note = ();
    type Effects = ();

    fn input((): &mut (), steer: &Steer, _alive: bool, _tick: Tick) -> Steer {
        *steer
    }
}

/// The determinism check: a seeded walk from the middle.
impl Harness for Drift {
    fn config() {}

    fn start((): &()) -> Vec2 {
        Vec2::splat(FIELD / 2.0)
    }

    fn seeded_input(rng: &mut SeededRng, _: u32, _: Steer) -> Steer {
        (rng.below(3) as i8 - 1, rng.below(3) as i8 - 1)
    }

    fn hash(at: &Vec2, hash: &mut determinism::Fnv64) {
        hash.f32(at.x);
        hash.f32(at.y);
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
