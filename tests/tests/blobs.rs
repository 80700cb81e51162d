//! Blobs, the .io game, in the deterministic stepper on the main cell's
//! network (150 ms RTT, ±30 ms jitter, 5 % loss each way) with the
//! shipped defaults: grazers chasing pellets the server owns and fleeing
//! larger blobs meet the tank game's budget, timing and looks: no
//! misprediction that a late or repeated input does not explain (growing
//! changes no prediction; being eaten and coming back are placements, not
//! corrections) and nothing drawn snaps back.

use skirmish_blobs::Blobs;
use skirmish_harness::matrix::main_cell;
use skirmish_harness::Harness;
use skirmish_tests::matrix::{assert_main_cell_budget, summarize, totals};

#[test]
fn blobs_hold_the_main_cells_budget() {
    let stepper = main_cell::<Blobs>();
    let clients: Vec<_> = stepper.clients.iter().collect();
    let counters = stepper.counters();
    let row = summarize(&clients, 0.0, 60.0, 60.0);
    println!("{:?}\n{row:?}", totals(&counters));
    assert_main_cell_budget(Blobs::PLAYERS, &counters, &row);
    // Every snapshot of a crowded view fits the byte budget whole, head
    // and input timing too. (The stepper delivers on a stream, so its
    // heads carry no datagram receipt: tests/tests/quic_congestion.rs
    // checks frames as datagrams.)
    let budget = skirmish_core::InterestConfig::default().budget;
    let largest = stepper
        .clients
        .iter()
        .map(|c| c.trace.largest_snapshot)
        .max()
        .unwrap_or(0);
    println!("largest snapshot {largest}");
    assert!(
        (budget - 100..=budget).contains(&largest),
        "the largest snapshot took {largest} bytes of {budget}"
    );
    // They grazed: the server spawned pellets back all along.
    let grown = stepper
        .clients
        .iter()
        .filter_map(|c| c.session.view().own)
        .filter(|o| o.state.mass > skirmish_blobs::START_MASS + 5.0)
        .count();
    assert!(grown >= 8, "most grew: {grown} of 16");
    // Every blob eaten, every one that ate it and every one back was
    // told so once, by its page, though snapshots were lost.
    let told: u64 = stepper.clients.iter().map(|c| c.trace.notes).sum();
    let happened = stepper.room.stats().events;
    println!("{told} notes of {happened} happenings");
    assert!(happened >= 20, "blobs were eaten: {happened}");
    assert!(
        told <= happened && told + 6 >= happened,
        "{told} of {happened}"
    );
}
