//! A game of its own, written here against `skirmish-core` alone as a
//! game outside the repository would be, run by the harness: its main
//! cell holds the budget with the harness's asserts, its quality page
//! says its own words, and the replayer reads its recordings by the name
//! in their header.
//!
//! The game: strollers, a point each on a square field, stepping the way
//! their controls say (the guide's game under another name, so that
//! nothing here is one of the repository's games).

use std::time::Duration;

use skirmish_core::determinism::Fnv64;
use skirmish_core::{
    ClientGame, ClientSession, Command, Game, GameId, Harness, Networked, NoSetup, Owned, PlayerId,
    RoomConfig, SeededRng, ServerGame, SessionConfig, Spawn, Spot, Step, Tick, Ticked, Vec2,
};
use skirmish_harness::matrix::{assert_main_cell_budget, main_cell, summarize, totals};
use skirmish_harness::quality::{game_page, Provenance};
use skirmish_harness::replay::{recorded_game, replay, ReplayArgs};
use skirmish_harness::{Driver, QualityWords};

/// The game.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Strollers;

thread_local! {
    /// Above 0: the step counts here, outside its world, each tick.
    static CHEAT: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// The field's side and the pace, units and units a second.
const FIELD: f32 = 1000.0;
const SPEED: f32 = 150.0;

/// One tick's controls: a step of -1, 0 or 1 along x and along y.
type Stroll = (i8, i8);

/// A stroller as its own page gets it: a point, in the library's envelope.
type Stroller = Owned<Vec2>;

impl Game for Strollers {
    const NAME: &'static str = "strollers";
    const VERSION: u32 = 1;
    type Config = ();
    type Input = Stroll;
    type Own = Stroller;
    type Local = Vec2;

    fn cadence((): &()) -> Duration {
        Duration::from_millis(50)
    }
    fn sanitize((x, y): Stroll) -> Stroll {
        (x.clamp(-1, 1), y.clamp(-1, 1))
    }
    fn predict(at: Vec2, &(x, y): &Stroll, dt: Duration, (): &()) -> Vec2 {
        let step = Vec2::new(f32::from(x), f32::from(y)) * (SPEED * dt.as_secs_f32());
        (at + step).max(Vec2::ZERO).min(Vec2::splat(FIELD))
    }
    fn local(own: &Stroller) -> Vec2 {
        own.state
    }
}

impl Networked for Strollers {
    type Setup = NoSetup;
    type Wire = Ticked<Stroll>;
    type Entity = Spot;

    fn quantise(own: &Stroller, (): &()) -> Spot {
        Spot::of(own.state)
    }
    fn dequantise(spot: &Spot, id: PlayerId, tick: Tick, (): &()) -> Stroller {
        Owned::new(id, tick, None, spot.point())
    }
}

impl ServerGame for Strollers {
    type Player = Vec2;
    type World = ();
    type Settings = ();

    fn setup((): &(), (): &()) -> NoSetup {
        NoSetup {}
    }
    fn extent((): &()) -> Vec2 {
        Vec2::splat(FIELD)
    }
    fn spawn(spawn: Spawn<'_, Strollers>) -> Vec2 {
        Vec2::new(500.0, 100.0 + 100.0 * (spawn.players.len() % 9) as f32)
    }
    fn step(step: Step<'_, Strollers>) {
        let cadence = Strollers::cadence(&());
        // A step that counts in a place outside its world (only where a
        // test asks it to): a re-simulation cannot give the same states.
        let drift = CHEAT.with(|cheat| {
            cheat.set(cheat.get() + u32::from(cheat.get() > 0));
            cheat.get() as f32 * 0.001
        });
        for player in step.players.values_mut() {
            let (commands, at) = player.commands_and_state();
            for command in commands {
                if let Command::Apply { input, .. } = command {
                    *at = Strollers::predict(*at, &input.input, cadence, &()) + drift;
                }
            }
        }
    }
}

impl ClientGame for Strollers {
    type Controls = Stroll;
    type Client = ();
    fn input((): &mut (), stroll: &Stroll, _alive: bool, _tick: Tick) -> Stroll {
        *stroll
    }
}

// ---- What the harness needs: a few lines more.

/// Strolls along x between two marks, turning back at each.
#[derive(Clone, Debug)]
struct Back {
    marks: (f32, f32),
    right: bool,
}

impl Driver<Strollers> for Back {
    fn controls(&mut self, session: &ClientSession<Strollers>, (): &()) -> Stroll {
        if let Some(me) = session.view().own {
            if me.predicted.x >= self.marks.1 {
                self.right = false;
            } else if me.predicted.x <= self.marks.0 {
                self.right = true;
            }
        }
        (if self.right { 1 } else { -1 }, 0)
    }
}

/// A seeded stroll from the middle; a stroller turns back at once: it
/// snapped back only if drawn going back faster than it strolls (1.5 units
/// in a 10 ms frame, 1.65 while the remote timeline catches up).
impl Harness for Strollers {
    type Driver = Back;
    const PLAYERS: usize = 4;
    const WORDS: QualityWords = QualityWords {
        title: "strollers, a test's own game",
        cell: "`harness/tests/own_game.rs`: 4 strollers walking back and forth",
        remark: "A stroller turns back at once.",
    };

    fn main_room() -> RoomConfig<Strollers> {
        RoomConfig {
            name: "strollers".into(),
            capacity: usize::MAX,
            seed: 5,
            ..RoomConfig::default()
        }
    }

    fn main_player(i: usize) -> (Back, u64) {
        let from = 200.0 + 100.0 * i as f32;
        let back = Back {
            marks: (from, from + 300.0),
            right: true,
        };
        (back, 700 + i as u64)
    }
    fn seeded_start((): &()) -> Vec2 {
        Vec2::splat(FIELD / 2.0)
    }
    fn seeded_input(rng: &mut SeededRng, _: u32, _: Stroll) -> Stroll {
        (rng.below(3) as i8 - 1, 0)
    }
    fn hash(at: &Vec2, hash: &mut Fnv64) {
        hash.f32(at.x);
        hash.f32(at.y);
    }
    fn snapped_back(before: Vec2, now: Vec2) -> bool {
        before.length() > 0.1 && now.dot(before) < 0.0 && now.length() > 1.7
    }
}

#[test]
fn a_game_of_its_own_holds_the_main_cells_budget_and_gets_its_page() {
    let stepper = main_cell::<Strollers>();
    let clients: Vec<_> = stepper.clients.iter().collect();
    let counters = stepper.counters();
    let row = summarize(&clients, 0.0, 60.0, 60.0);
    println!("{:?}\n{row:?}", totals(&counters));
    assert_main_cell_budget(Strollers::PLAYERS, &counters, &row);

    let provenance = Provenance {
        command: "`cargo test`",
        asserted: "",
    };
    let page = game_page::<Strollers>(&provenance, &row);
    for words in [
        "# Netcode quality: strollers, a test's own game",
        "Game: strollers 1",
        "`harness/tests/own_game.rs`: 4 strollers walking back and forth",
        "A stroller turns back at once.",
        "| main cell, compact (as shipped) |",
    ] {
        assert!(page.contains(words), "{words} in:\n{page}");
    }
}

#[test]
fn the_replayer_reads_a_recording_of_its_game_by_the_name_in_its_header() {
    let mut session = ClientSession::<Strollers>::recorded(
        SessionConfig::default(),
        skirmish_core::DEFAULT_RECORDING_LIMIT,
    );
    let _ = session.hello();
    let _ = session.advance(Duration::from_millis(16));
    let bytes = session.recording().expect("recorded").bytes().to_vec();
    let file = std::env::temp_dir().join(format!("strollers-{}.skrec", std::process::id()));
    std::fs::write(&file, bytes).expect("a temporary file");
    assert_eq!(recorded_game(&file), Ok(GameId::of::<Strollers>()));
    let args = ReplayArgs {
        file: file.clone(),
        room: false,
        until: None,
        svg: Some(file.with_extension("svg")),
        with_room: None,
    };
    assert_eq!(replay::<Strollers>(&args), std::process::ExitCode::SUCCESS);
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_file(file.with_extension("svg"));
}

/// The whole-game checks take a game from outside too: its forms round-
/// trip and its step re-simulates; a step that keeps a count outside its
/// world is caught by the sync test, which names the tick and the player.
#[test]
fn its_forms_round_trip_and_a_step_reading_outside_its_world_is_caught() {
    use skirmish_harness::whole::{round_trips, sync_test};
    let counts = round_trips::<Strollers>(&(), 5, 3, 50).expect("round trips");
    assert_eq!(counts.own_states, 150);
    assert_eq!(
        sync_test::<Strollers>(&(), 5, (3, 20, 4)).map(|r| r.compared),
        Ok(80)
    );
    CHEAT.with(|cheat| cheat.set(1));
    let divergence = sync_test::<Strollers>(&(), 5, (3, 20, 4)).expect_err("caught");
    CHEAT.with(|cheat| cheat.set(0));
    assert_eq!(divergence.tick, Tick(1), "{divergence:?}");
    assert!(
        divergence.what.starts_with("player 1's own state"),
        "{divergence:?}"
    );
}
