//! The guide's game runs in the deterministic stepper on the main cell's
//! network (150 ms RTT, ±30 ms jitter, 5 % loss each way), with the
//! defaults a session ships with, and meets the tank game's timing
//! targets: the library's netcode, not the tank game, earns them.

use skirmish_harness::matrix::main_cell;
use skirmish_harness::Harness;
use skirmish_tests::matrix::{assert_main_cell_budget, summarize, totals};
use skirmish_walkers::Walkers;

#[test]
fn walkers_hold_the_main_cells_timing_budget() {
    let stepper = main_cell::<Walkers>();
    let clients: Vec<_> = stepper.clients.iter().collect();
    let counters = stepper.counters();
    let row = summarize(&clients, 0.0, 60.0, 60.0);
    println!("{:?}\n{row:?}", totals(&counters));
    assert_main_cell_budget(Walkers::PLAYERS, &counters, &row);
    // A walker turns back at once, so a repeated tick across a turn is off
    // by two steps (20 units), which snaps: every snap is such a
    // misprediction.
    for c in &counters {
        assert!(c.snaps <= c.mispredictions, "{c:?}");
    }
}
