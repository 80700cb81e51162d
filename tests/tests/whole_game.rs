//! The whole game, checked for every game of the list
//! (`skirmish_harness::whole`): for any seed, a seeded world's every own
//! state, event, setup, input, snapshot entity and drawn state comes back
//! from each of its forms as it went, and the server's step re-simulated
//! from a saved world (a sync test, four ticks ahead every tick) gives the
//! same hash, every tick. A game added to the list is checked here with
//! nothing written.

use proptest::prelude::*;
use skirmish_games::{each, Entry, GameSettings, Listed, Visit};
use skirmish_harness::whole::{round_trips, sync_test};

/// Both checks, on one seed, for each game.
struct Whole {
    seed: u64,
    checked: Vec<&'static str>,
}

impl Visit for Whole {
    fn game<G: Listed>(&mut self, game: Entry<G>) {
        let counts = round_trips::<G>(&game.settings, self.seed, 6, 120)
            .unwrap_or_else(|e| panic!("{}, seed {}: {e}", game.name, self.seed));
        assert!(
            counts.own_states >= 6 * 120 && counts.inputs >= 6 * 120 && counts.visuals > 0,
            "{}: {counts:?}",
            game.name
        );

        let report = sync_test::<G>(&game.settings, self.seed, (4, 60, 4))
            .unwrap_or_else(|d| panic!("{}, seed {}: {d:?}", game.name, self.seed));
        assert_eq!(report.compared, 60 * 4, "{}", game.name);
        self.checked.push(game.name);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3))]

    #[test]
    fn every_games_forms_round_trip_and_its_server_step_resimulates(seed in any::<u64>()) {
        let mut whole = Whole { seed, checked: Vec::new() };
        // A small blobs arena, so blobs eat and come back within the run.
        let settings = GameSettings { blobs_side: 500.0, blobs_pellets: 60, ..GameSettings::default() };
        each(&settings, &mut whole);
        prop_assert!(whole.checked.len() >= 3, "{:?}", whole.checked);
    }
}

/// Events round-trip too: a crowded blobs arena, where blobs eat and come
/// back, gives some (the runs above may see none).
struct Events(Option<u64>);

impl Visit for Events {
    fn game<G: Listed>(&mut self, game: Entry<G>) {
        if game.name == "blobs" {
            let counts = round_trips::<G>(&game.settings, 7, 16, 400)
                .unwrap_or_else(|e| panic!("{}: {e}", game.name));
            self.0 = Some(counts.events);
        }
    }
}

#[test]
fn events_seen_in_play_round_trip() {
    let crowded = GameSettings {
        blobs_side: 500.0,
        blobs_pellets: 60,
        ..GameSettings::default()
    };
    let mut events = Events(None);
    each(&crowded, &mut events);
    let seen = events.0.expect("blobs is in the list");
    assert!(seen >= 5, "blobs happenings round-tripped: {seen}");
}
