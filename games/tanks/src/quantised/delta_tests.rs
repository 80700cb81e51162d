//! Tests of the delta format with the tank game's fields: costs, round
//! trips, refusals, fuzzing.

use glam::Vec2;

use crate::config::SimConfig;
use crate::quantised::{self as tank, quantise_all, Quantised};
use crate::sim::Pose;
use crate::state::PlayerState;
use skirmish_core::delta::*;
use skirmish_core::PlayerId;
use skirmish_core::Tick;

type Entity = skirmish_core::delta::Entity<Quantised>;

fn player(id: u32, x: f32, vx: f32, hp: u16) -> PlayerState {
    PlayerState {
        id: PlayerId(id),
        hp,
        velocity: Some(Vec2::new(vx, 0.0)),
        ..PlayerState::at(Tick(1), None, Pose::new(Vec2::new(x, 600.0), 0.0))
    }
}

fn set(players: &[PlayerState]) -> Vec<Entity> {
    quantise_all(players, &SimConfig::default())
}

#[test]
fn idle_and_steady_players_cost_nothing_and_changes_little() {
    let config = SimConfig::default();
    let own = player(1, 100.0, 0.0, 100);
    // Player 2 idle, player 3 at a steady 200 u/s (10 u per tick).
    let before = set(&[
        own,
        player(2, 500.0, 0.0, 100),
        player(3, 700.0, 200.0, 100),
    ]);
    let after = set(&[
        own,
        player(2, 500.0, 0.0, 100),
        player(3, 740.0, 200.0, 100),
    ]);
    let frame = encode(Tick(14), Tick(10), &own, &before, &after, &config);
    assert_eq!(
        frame.len(),
        tank::HEAD_BYTES + 4 + 1 + 1 + 1,
        "head, baseline tick, two empty counts, no stale mask"
    );
    let decoded =
        decode::<_, PlayerState>(&frame, |t| (t == Tick(10)).then_some(&before[..]), &config)
            .unwrap();
    assert_eq!(decoded.players, after);
    assert_eq!(
        (decoded.server_tick, decoded.own),
        (
            Tick(14),
            PlayerState {
                tick: Tick(14),
                ..own
            }
        )
    );

    // The cost of each entry is what it takes in the body.
    for (before, after) in before.iter().zip(&after) {
        let mut one = Vec::new();
        encode_body(&[*before], &[*after], 4, &config, &mut one);
        let cost = entry_cost(Some(&before.1.predicted(4, &config)), &after.1);
        assert_eq!(one.len() - 3, cost, "{before:?} -> {after:?}");
    }
    // A hit and a turn: a few bytes.
    let mut hurt = player(2, 500.0, 0.0, 80);
    hurt.rotation = 0.5;
    let changed = set(&[own, hurt, player(3, 740.0, 200.0, 100)]);
    let frame = encode(Tick(14), Tick(10), &own, &before, &changed, &config);
    assert!(
        frame.len() <= tank::HEAD_BYTES + 4 + 1 + 1 + 6,
        "{}",
        frame.len()
    );
    let decoded = decode::<_, PlayerState>(&frame, |_| Some(&before[..]), &config).unwrap();
    assert_eq!(decoded.players, changed);
}

#[test]
fn players_come_and_go() {
    let config = SimConfig::default();
    let own = player(1, 100.0, 0.0, 100);
    let before = set(&[own, player(2, 500.0, 0.0, 100), player(300, 9.0, 0.0, 1)]);
    let after = set(&[
        own,
        player(7, 50.0, -50.0, 100),
        player(300, 9.0, 0.0, 1),
        player(70_000, 1.0, 0.0, 5),
    ]);
    let frame = encode(Tick(3), Tick(2), &own, &before, &after, &config);
    let decoded = decode::<_, PlayerState>(&frame, |_| Some(&before[..]), &config).unwrap();
    assert_eq!(decoded.players, after);
    // Against an empty baseline everything is new.
    let frame = encode(Tick(3), Tick(2), &own, &[], &after, &config);
    assert_eq!(
        decode::<_, PlayerState>(&frame, |_| Some(&[][..]), &config)
            .unwrap()
            .players,
        after
    );
}

#[test]
fn a_baseline_not_held_is_an_error_not_a_picture() {
    let config = SimConfig::default();
    let own = player(1, 100.0, 0.0, 100);
    let before = set(&[own, player(2, 500.0, 0.0, 100)]);
    let after = set(&[own, player(2, 510.0, 0.0, 100)]);
    let frame = encode(Tick(3), Tick(2), &own, &before, &after, &config);
    assert!(decode::<Quantised, PlayerState>(&frame, |_| None, &config).is_err());
    // A baseline that lacks the updated player.
    let other = set(&[own]);
    assert!(decode::<_, PlayerState>(&frame, |_| Some(&other[..]), &config).is_err());
    // Every cut is an error.
    for cut in 0..frame.len() {
        assert!(decode::<_, PlayerState>(&frame[..cut], |_| Some(&before[..]), &config).is_err());
    }
}

#[test]
fn the_tick_is_in_bytes_one_to_five_of_every_binary_frame() {
    let config = SimConfig::default();
    let own = player(1, 100.0, 0.0, 100);
    let full = tank::encode(Tick(77), &own, &[own], &config);
    let delta = encode::<Quantised, PlayerState>(Tick(78), Tick(77), &own, &[], &[], &config);
    assert_eq!(frame_tick(&full), Some(Tick(77)));
    assert_eq!(frame_tick(&delta), Some(Tick(78)));
    assert_eq!(
        (baseline_tick(&full), baseline_tick(&delta)),
        (None, Some(Tick(77)))
    );
    assert_eq!(frame_tick(&[2, 1]), None);
}

#[cfg(not(target_arch = "wasm32"))]
mod props {
    use super::*;
    use proptest::prelude::*;
    use skirmish_core::Reader;

    proptest! {
        /// Any bytes against any baseline decode to a frame or an error.
        #[test]
        fn arbitrary_bytes_never_panic(
            bytes in prop::collection::vec(any::<u8>(), 0..120),
            base in prop::collection::vec((1u32..50, any::<[u8; 10]>()), 0..8),
        ) {
            let mut base: Vec<Entity> = base
                .into_iter()
                .map(|(id, b)| (PlayerId(id), read_full::<Quantised>(&mut Reader::new(&b)).unwrap()))
                .collect();
            base.sort_by_key(|(id, _)| *id);
            base.dedup_by_key(|(id, _)| *id);
            let mut framed = vec![DELTA];
            framed.extend_from_slice(&bytes);
            let _ = decode::<_, PlayerState>(&framed, |_| Some(&base[..]), &SimConfig::default());
            let _ = decode::<_, PlayerState>(&bytes, |_| Some(&base[..]), &SimConfig::default());
        }
    }
}
