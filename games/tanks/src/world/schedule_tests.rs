//! The world's input timing (the schedule of protocol 2), tested with tanks.

use glam::Vec2;

use std::time::Duration;

use crate::world::tests::{at, fire, input, kill, open, place};
use crate::{Arena, Tanks};
use skirmish_core::*;

const MS: fn(u64) -> Duration = Duration::from_millis;

fn scheduled() -> (World<crate::Tanks>, PlayerId) {
    let mut w = World::of(open(), Arena::default(), 7);
    let id = PlayerId(1);
    w.join_with(id, "a", InputMode::Scheduled).unwrap();
    place(&mut w, id, at(500.0, 600.0, 0.0));
    (w, id)
}

#[test]
fn an_input_is_simulated_at_the_tick_it_names() {
    let (mut w, id) = scheduled();
    // At tick 0, 10 ms in: input for tick 3 is 140 ms early.
    let r = w.receive_at(id, &[input(3, 1.0)], MS(10));
    assert_eq!(r.queued, 1);
    let timing = w.take_timing(id).unwrap();
    assert_eq!((timing.tick, timing.slack_ms), (Some(Tick(3)), 140));
    assert_eq!(w.take_timing(id).unwrap().tick, None, "reported once");
    w.step();
    w.step();
    assert_eq!(
        w.player(id).unwrap().ack(),
        None,
        "nothing before its first"
    );
    assert_eq!(w.player(id).unwrap().state.pose.position.x, 500.0);
    w.step();
    assert_eq!(w.player(id).unwrap().ack(), Some(Tick(3)));
    assert_eq!(w.player(id).unwrap().state.pose.position.x, 510.0);
}

#[test]
fn a_missing_input_repeats_the_last_and_its_late_arrival_is_counted_once() {
    let (mut w, id) = scheduled();
    w.receive_at(id, &[input(1, 1.0)], MS(0));
    w.step();
    w.step(); // tick 2 is missing: repeated
    assert_eq!(w.player(id).unwrap().ack(), Some(Tick(2)));
    assert_eq!(w.player(id).unwrap().state.pose.position.x, 520.0);
    assert_eq!(w.stats().repeated_inputs, 1);
    // Its input arrives 20 ms after tick 2 was simulated: late.
    let r = w.receive_at(id, &[input(2, 0.0), input(3, 1.0)], MS(20));
    assert_eq!((r.late, r.queued), (1, 1));
    let timing = w.take_timing(id).unwrap();
    assert_eq!((timing.tick, timing.slack_ms), (Some(Tick(2)), -20));
    assert_eq!((timing.late, timing.repeated), (1, 1));
    // Its lateness apart from the slack of the inputs in time (1 and 3).
    let stats = w.stats();
    assert_eq!((stats.lateness.count(), stats.lateness.sum_ms), (1, 20));
    assert_eq!((stats.slack.count(), stats.slack.sum_ms), (2, 50 + 30));
    // Resent: a duplicate now, not late again.
    let r = w.receive_at(id, &[input(2, 0.0)], MS(30));
    assert_eq!((r.late, r.duplicates), (0, 1));
    assert_eq!(w.stats().late_inputs, 1);
    // Tick 1 was simulated as itself: a resend is a duplicate.
    assert_eq!(w.receive_at(id, &[input(1, 1.0)], MS(30)).duplicates, 1);
}

#[test]
fn inputs_before_the_first_are_late_once_and_never_before_the_join() {
    let mut w = World::<Tanks>::of(open(), Arena::default(), 1);
    // The world runs 10 ticks before the player joins at tick 10.
    for _ in 0..10 {
        w.step();
    }
    let id = PlayerId(7);
    w.join_with(id, "late", InputMode::Scheduled).unwrap();
    for _ in 0..5 {
        w.step();
    }
    // Ticks before the join are never late; 11..=15 once each, however
    // often they are resent before the first input is simulated.
    let old: Vec<_> = (1..=10).map(|t| input(t, 0.0)).collect();
    assert_eq!(w.receive_at(id, &old, MS(10)).late, 0);
    let past: Vec<_> = (11..=15).map(|t| input(t, 0.0)).collect();
    assert_eq!(w.receive_at(id, &past, MS(10)).late, 5);
    for _ in 0..100 {
        assert_eq!(w.receive_at(id, &past, MS(10)).late, 0);
    }
    assert_eq!(w.stats().late_inputs, 5);
}

#[test]
fn an_input_in_time_for_a_tick_running_behind_has_zero_slack_not_lateness() {
    let (mut w, id) = scheduled();
    // 70 ms after tick 0, tick 1 (due at 50 ms) has not run yet.
    let r = w.receive_at(id, &[input(1, 1.0)], MS(70));
    assert_eq!((r.queued, r.late), (1, 0));
    assert_eq!(
        w.take_timing(id).unwrap().slack_ms,
        -20,
        "the clock hears it"
    );
    let stats = w.stats();
    assert_eq!((stats.slack.count(), stats.slack.sum_ms), (1, 0));
    assert_eq!(stats.lateness.count(), 0);
}

#[test]
fn one_input_per_tick_however_many_arrive() {
    let (mut w, id) = scheduled();
    let batch: Vec<_> = (1..=10).map(|t| input(t, 1.0)).collect();
    w.receive_at(id, &batch, MS(0));
    for t in 1..=10 {
        w.step();
        assert_eq!(w.player(id).unwrap().ack(), Some(Tick(t)));
    }
    assert_eq!(w.player(id).unwrap().state.pose.position.x, 600.0);
    assert_eq!(w.stats().repeated_inputs, 0);
}

#[test]
fn inputs_too_far_ahead_are_dropped() {
    let (mut w, id) = scheduled();
    let r = w.receive_at(id, &[input(MAX_AHEAD_TICKS + 1, 1.0)], MS(0));
    assert_eq!(r.dropped, 1);
    assert_eq!(w.stats().dropped_inputs, 1);
}

/// [`scheduled`] with a protocol-1 target (player 2) 300 u ahead of
/// the shooter, which played tick 1 standing still and whose input for
/// tick 2 was missing (a repeat).
fn duel_with_a_missing_tick() -> (World<crate::Tanks>, PlayerId) {
    let (mut w, id) = scheduled();
    w.join_with(PlayerId(2), "target", InputMode::Queued)
        .unwrap();
    place(&mut w, PlayerId(2), at(800.0, 600.0, 0.0));
    w.receive_at(id, &[input(1, 0.0)], MS(0));
    w.step();
    w.step();
    assert_eq!(w.stats().repeated_inputs, 1);
    (w, id)
}

fn hp(w: &World<crate::Tanks>, id: PlayerId) -> u16 {
    w.player(id).unwrap().state.hp
}

#[test]
fn a_late_shot_fires_once_at_the_next_tick() {
    let (mut w, id) = duel_with_a_missing_tick();
    // Tick 2 fired on the shooter's page; its input arrives 10 ms after
    // tick 2 ran, with tick 3 moving the shooter forward.
    let late = [fire(2, None), input(3, 1.0)];
    let r = w.receive_at(id, &late, MS(10));
    assert_eq!((r.late, r.queued), (1, 1));
    // Resent once before the next tick and twice after: duplicates.
    assert_eq!(w.receive_at(id, &late, MS(30)).late, 0);
    let events = w.step().to_vec();
    assert_eq!(events.len(), 1, "honoured at tick 3");
    let e = events[0];
    assert_eq!(
        (e.server_tick, e.attacker, e.target),
        (Tick(3), id, PlayerId(2))
    );
    assert_eq!(e.from, Vec2::new(510.0, 600.0), "from the pose at tick 3");
    for _ in 0..2 {
        let r = w.receive_at(id, &[fire(2, None)], MS(10));
        assert_eq!((r.late, r.duplicates), (0, 1));
        assert!(w.step().is_empty(), "never fired again");
    }
    let stats = w.stats();
    assert_eq!(
        (
            stats.late_inputs,
            stats.late_actions_honoured,
            stats.view_actions
        ),
        (1, 1, 1)
    );
    assert_eq!(hp(&w, PlayerId(2)), 80);
}

#[test]
fn a_late_shot_counts_its_cooldown_from_its_own_tick() {
    // Honoured at tick 3 but counted at tick 2, as the page counted
    // it: the page's next shot, at tick 7 (250 ms = 5 ticks later),
    // fires too; one at tick 6 would not have.
    let (mut w, id) = duel_with_a_missing_tick();
    w.receive_at(id, &[fire(2, None)], MS(10));
    let rest: Vec<_> = (3..=7).map(|t| fire(t, None)).collect();
    w.receive_at(id, &rest, MS(10));
    let ticks: Vec<Tick> = (3..=7)
        .flat_map(|_| w.step().to_vec())
        .map(|e| e.server_tick)
        .collect();
    assert_eq!(ticks, [Tick(3), Tick(7)]);
    assert_eq!(w.stats().late_actions_honoured, 1);
}

#[test]
fn a_late_shot_under_cooldown_does_not_fire() {
    let (mut w, id) = scheduled();
    w.join_with(PlayerId(2), "target", InputMode::Queued)
        .unwrap();
    place(&mut w, PlayerId(2), at(800.0, 600.0, 0.0));
    // Tick 1 fires in time; tick 2 is missing, and its late input fires
    // inside tick 1's cooldown.
    w.receive_at(id, &[fire(1, None)], MS(0));
    assert_eq!(w.step().len(), 1);
    w.step();
    assert_eq!(w.receive_at(id, &[fire(2, None)], MS(10)).late, 1);
    assert!(w.step().is_empty());
    assert!(w.step().is_empty(), "not kept for later");
    assert_eq!(w.stats().late_actions_honoured, 0);
    assert_eq!(hp(&w, PlayerId(2)), 80);
}

#[test]
fn a_late_shot_from_a_dead_shooter_does_not_fire() {
    // Killed after tick 2 (until tick 100): its late shot of tick 2
    // never fires, not even after a respawn.
    let (mut w, id) = duel_with_a_missing_tick();
    kill(&mut w, id, Tick(100));
    assert_eq!(w.receive_at(id, &[fire(2, None)], MS(10)).late, 1);
    assert!(w.step().is_empty());
    assert_eq!(w.stats().late_actions_honoured, 0);

    // Alive at its tick, but killed and respawned before its input
    // arrived: a shot from before the death never comes back.
    let (mut w, id) = duel_with_a_missing_tick();
    kill(&mut w, id, Tick(3));
    w.step();
    assert!(
        w.player(id).unwrap().state.life.is_alive(),
        "respawned in tick 3"
    );
    assert_eq!(w.receive_at(id, &[fire(2, None)], MS(10)).late, 1);
    assert!(w.step().is_empty());
    assert_eq!(w.stats().late_actions_honoured, 0);
    assert_eq!(hp(&w, PlayerId(2)), 100);
}

#[test]
fn a_late_shot_before_the_first_input_fires_from_where_the_player_stands() {
    let (mut w, id) = scheduled();
    w.join_with(PlayerId(2), "target", InputMode::Queued)
        .unwrap();
    place(&mut w, PlayerId(2), at(800.0, 600.0, 0.0));
    w.step();
    assert_eq!(w.receive_at(id, &[fire(1, None)], MS(10)).late, 1);
    let events = w.step().to_vec();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].from, Vec2::new(500.0, 600.0));
    assert_eq!(w.player(id).unwrap().ack(), None, "still nothing simulated");
}

#[test]
fn a_repeat_never_fires() {
    let (mut w, id) = scheduled();
    w.receive_at(id, &[fire(1, None)], MS(0));
    w.step();
    w.step();
    assert_eq!(w.stats().repeated_inputs, 1);
    assert_eq!(w.stats().view_actions, 1, "only the real input fired");
}
