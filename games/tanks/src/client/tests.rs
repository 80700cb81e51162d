//! The library's client parts with the tank game: its owned states and
//! hits (CAPS-1, CAPS-6, CAPS-8).

use glam::Vec2;

use crate::sim::Pose;
use crate::state::PlayerState;
use crate::CombatEvent;
use skirmish_core::PlayerId;
use skirmish_core::Tick;
use skirmish_core::{Authority, Refused};

fn state(id: u32, tick: u32, x: f32, hp: u16) -> PlayerState {
    PlayerState {
        id: PlayerId(id),
        hp,
        velocity: Some(Vec2::new(1.0, 0.0)),
        ..PlayerState::at(Tick(tick), None, Pose::new(Vec2::new(x, 50.0), 0.5))
    }
}

fn hit(tick: u32, target: u32, hp: u16, killed: bool) -> CombatEvent {
    CombatEvent {
        server_tick: Tick(tick),
        attacker: PlayerId(9),
        target: PlayerId(target),
        damage: 20,
        hp,
        killed,
        from: Vec2::ZERO,
        to: Vec2::ONE,
    }
}

#[test]
fn caps1_newer_state_replaces_the_owned_snapshot() {
    let mut authority = Authority::default();
    authority
        .insert(PlayerId(1), Tick(10), &state(1, 10, 100.0, 100))
        .unwrap();
    let newer = state(1, 11, 110.0, 80);
    authority.insert(newer.id, newer.tick, &newer).unwrap();
    let owned = authority.get(PlayerId(1)).unwrap();
    assert_eq!(
        owned, &newer,
        "position, rotation, hp and velocity all from it"
    );
    assert_eq!(authority.stats().accepted, 2);
}

#[test]
fn caps6_stale_state_never_overwrites() {
    let mut authority = Authority::default();
    authority
        .insert(PlayerId(1), Tick(10), &state(1, 10, 100.0, 100))
        .unwrap();
    assert!(matches!(
        authority.insert(PlayerId(1), Tick(9), &state(1, 9, 0.0, 5)),
        Err(Refused::Stale { .. })
    ));
    assert!(authority
        .insert(PlayerId(1), Tick(10), &state(1, 10, 0.0, 5))
        .is_err());
    assert_eq!(authority.get(PlayerId(1)).unwrap().position.x, 100.0);
    assert_eq!(authority.stats().stale, 2);
    // Another player's older tick is its own business.
    authority
        .insert(PlayerId(2), Tick(3), &state(2, 3, 0.0, 100))
        .unwrap();
}

#[test]
fn caps8_combat_event_updates_hp_until_the_next_state() {
    let mut authority = Authority::default();
    authority
        .insert(PlayerId(1), Tick(10), &state(1, 10, 100.0, 100))
        .unwrap();
    assert!(authority.apply(&hit(11, 1, 80, false)));
    assert_eq!(authority.get(PlayerId(1)).unwrap().hp, 80);
    // Arriving twice applies once.
    assert!(!authority.apply(&hit(11, 1, 80, false)));
    assert_eq!(authority.stats().events_applied, 1);
    // A kill marks the player dead.
    assert!(authority.apply(&hit(12, 1, 0, true)));
    assert!(!authority.get(PlayerId(1)).unwrap().alive);
    // A later full state refreshes everything.
    authority
        .insert(PlayerId(1), Tick(80), &state(1, 80, 300.0, 100))
        .unwrap();
    let owned = authority.get(PlayerId(1)).unwrap();
    assert!(owned.alive && owned.hp == 100);
    // An event the owned snapshot already includes changes nothing.
    assert!(!authority.apply(&hit(80, 1, 60, false)));
    assert_eq!(authority.get(PlayerId(1)).unwrap().hp, 100);
    // An event for an unknown player is ignored.
    assert!(!authority.apply(&hit(90, 7, 60, false)));
}

#[test]
fn an_older_state_never_undoes_a_combat_result() {
    let mut a = Authority::default();
    a.insert(PlayerId(2), Tick(103), &state(2, 103, 0.0, 80))
        .unwrap();
    assert!(a.apply(&hit(105, 2, 60, false)));
    // Tick 104 was sent before the hit: newer than the owned 103, but
    // its HP must not go back to 80.
    a.insert(PlayerId(2), Tick(104), &state(2, 104, 5.0, 80))
        .unwrap();
    assert_eq!(a.get(PlayerId(2)).unwrap().hp, 60);
    assert_eq!(
        a.get(PlayerId(2)).unwrap().position.x,
        5.0,
        "the rest is taken"
    );
    // From the result's tick on, states are the truth again.
    a.insert(PlayerId(2), Tick(106), &state(2, 106, 6.0, 100))
        .unwrap();
    assert_eq!(a.get(PlayerId(2)).unwrap().hp, 100);
}

#[test]
fn players_missing_from_a_snapshot_are_forgotten() {
    let mut authority = Authority::default();
    for id in 1..=3 {
        authority
            .insert(PlayerId(id), Tick(1), &state(id, 1, 0.0, 100))
            .unwrap();
    }
    assert_eq!(authority.retain_present(&[PlayerId(3), PlayerId(1)]), 1);
    assert!(authority.get(PlayerId(2)).is_none());
    assert_eq!(authority.len(), 2);
}

#[test]
fn non_finite_states_are_refused() {
    let mut authority = Authority::default();
    assert!(authority
        .insert(PlayerId(1), Tick(1), &state(1, 1, f32::NAN, 100))
        .is_err());
    assert!(authority.is_empty());
    assert_eq!(authority.stats().invalid, 1);
}
