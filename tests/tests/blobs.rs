//! Blobs, the .io game, in the deterministic stepper on the main cell's
//! network (150 ms RTT, ±30 ms jitter, 5 % loss each way) with the
//! shipped defaults: grazers chasing pellets the server owns and fleeing
//! larger blobs meet the tank game's timing targets. Not yet met, and
//! printed rather than asserted: a blob's speed follows its mass, so a
//! pellet eaten while inputs are pending makes the page's prediction of
//! them a little off (a misprediction no late input explains), and a
//! fleeing blob's instant turn is sometimes drawn as a snap-back.

use skirmish_tests::blobs;
use skirmish_tests::matrix::{assert_main_cell_timing, summarize, totals};

#[test]
fn blobs_hold_the_main_cells_timing_budget() {
    let stepper = blobs::main_cell();
    let clients: Vec<_> = stepper.clients.iter().collect();
    let counters = stepper.counters();
    let row = summarize(&clients, 0.0, 60.0, 60.0);
    println!("{:?}\n{row:?}", totals(&counters));
    assert_main_cell_timing(&counters, &row);
    // They grazed: the server spawned pellets back all along.
    let grown = stepper
        .clients
        .iter()
        .filter_map(|c| c.session.view().own)
        .filter(|o| o.state.mass > skirmish_blobs::START_MASS + 5.0)
        .count();
    assert!(grown >= 8, "most grew: {grown} of 16");
}
