//! The server's side runs a game that is not the tank game: the world
//! takes a dot game's inputs at the ticks they name, and a room of dots
//! welcomes, snapshots, tells its events and records itself as a room of
//! tanks does.

mod dots;

use std::time::Duration;

use skirmish_core::{PlayerId, Tick};

use dots::*;

#[test]
fn a_dot_world_takes_its_inputs_at_the_ticks_they_name_like_the_tanks() {
    use skirmish_core::{InputMode, World};
    let mut w: World<Dots> = World::of((), skirmish_core::Things::new(), 1);
    let (a, b) = (PlayerId(1), PlayerId(2));
    let x = |joined: Result<DotState, _>| joined.map(|d| d.x);
    assert_eq!(x(w.join_with(a, "a", InputMode::Scheduled)), Ok(0.0));
    assert_eq!(x(w.join_with(b, "b", InputMode::Queued)), Ok(100.0));
    assert!(w.join_with(a, "again", InputMode::Queued).is_err());
    let nudge = |t: u32, by: i8| Nudge { tick: Tick(t), by };
    // Scheduled: tick 1's and tick 3's inputs; tick 2's is missing and
    // repeats tick 1's; queued: two inputs, one per tick. Each arrives
    // sanitized: 5 as 1, -7 as -1.
    w.receive(a, &[nudge(1, 5), nudge(3, -7)]);
    w.receive(b, &[nudge(1, 1), nudge(2, 1)]);
    for _ in 0..3 {
        w.step();
    }
    assert_eq!(w.state_of(a).map(|d| d.x), Some(1.0 + 1.0 - 1.0));
    assert_eq!(w.state_of(b).map(|d| d.x), Some(102.0));
    assert_eq!(w.stats().repeated_inputs, 1);
    assert_eq!(
        w.player(a).and_then(skirmish_core::ServerPlayer::ack),
        Some(Tick(3))
    );
    // Tick 2's input arriving now is late: counted, never applied.
    assert_eq!(w.receive(a, &[nudge(2, 100)]).late, 1);
    w.step();
    assert_eq!(w.stats().late_inputs, 1);
    // Events come back from the step that made them.
    w.receive(b, &[nudge(3, 1)]);
    for t in 4..=1_000 {
        w.receive(b, &[nudge(t, 1)]);
        if !w.step().is_empty() {
            assert_eq!(w.events()[0].dot, b);
            return;
        }
    }
    panic!("the dot never went past 1000");
}

/// The frames `id` got in `out`, in order.
fn frames_for(out: &skirmish_core::Outbox, id: PlayerId) -> Vec<skirmish_core::Frame> {
    out.deliveries()
        .iter()
        .filter(|(to, _)| *to == id)
        .map(|&(_, i)| out.frames()[i].clone())
        .collect()
}

/// A recorded room of dots with a JSON seat and a binary one, and what it
/// sent them.
fn dot_room() -> (skirmish_core::Room<Dots>, skirmish_core::Outbox) {
    dots::dot_room(true)
}

/// The binary dot's nudge of 1 at `tick`, in the binary input message,
/// into the room.
fn nudge_in(room: &mut skirmish_core::Room<Dots>, tick: u32, out: &mut skirmish_core::Outbox) {
    let nudge = Nudge {
        tick: Tick(tick),
        by: 1,
    };
    let mut bytes = Vec::new();
    skirmish_core::encode_inputs(&[nudge], None, Some(0), &mut bytes);
    let message: skirmish_core::ClientMessage<Nudge> =
        skirmish_core::decode_inputs(&bytes).expect("the dot's inputs decode");
    room.receive_frame_at(BINARY, &message, (false, &bytes), Duration::ZERO, out)
        .expect("taken");
}

#[test]
fn a_room_of_dots_welcomes_and_snapshots_like_a_room_of_tanks() {
    use skirmish_core::{compact, control, decode_server, Frame, ServerMessage};
    let (mut room, mut out) = dot_room();
    // Each is welcomed in its own form, with the dot game's setup.
    let Frame::Text(welcome) = &frames_for(&out, TEXT)[0] else {
        panic!("a JSON welcome");
    };
    assert!(welcome.contains(r#""length":1000.0"#), "{welcome}");
    let Frame::Binary(welcome) = &frames_for(&out, BINARY)[0] else {
        panic!("a binary welcome");
    };
    let Ok(ServerMessage::<Dots>::Welcome { setup, .. }) = control::decode_server(welcome) else {
        panic!("a dot welcome");
    };
    assert_eq!(setup, Line { length: 1000.0 });
    out.clear();
    // The snapshot the binary dot gets holds its own state exactly and
    // the other quantised.
    nudge_in(&mut room, 1, &mut out);
    room.tick(&mut out);
    let snapshot = frames_for(&out, BINARY)
        .into_iter()
        .find_map(|f| match f {
            Frame::Binary(b) if b[0] == compact::SNAPSHOT => Some(b),
            _ => None,
        })
        .expect("a compact snapshot");
    let frame = compact::decode_frame::<Pellet, DotState>(&snapshot).expect("decodes");
    assert_eq!(frame.own.x, 100.0 + 1.0, "the second dot, nudged once");
    assert_eq!(frame.own.ack, Some(Tick(1)));
    assert_eq!(frame.players.len(), 2);
    assert_eq!(frame.players[0].1.x, 0, "the first dot, quantised");
    let json = frames_for(&out, TEXT)
        .into_iter()
        .find_map(|f| match f {
            Frame::Text(t) if t.contains("snapshot") => Some(t),
            _ => None,
        })
        .expect("a JSON snapshot");
    let Ok(ServerMessage::<Dots>::Snapshot { players, .. }) = decode_server(&json) else {
        panic!("a dot snapshot: {json}");
    };
    assert_eq!(players[1].x, 101.0);
}

#[test]
fn a_room_of_dots_tells_its_events_and_records_itself_like_a_room_of_tanks() {
    use skirmish_core::{control, decode_server, Frame, ServerMessage};
    let (mut room, mut out) = dot_room();
    // Past 1000 the dot is pushed back: an event, under the game's name in
    // JSON and as binary events for the binary seat.
    let pushed = (1..=1_000).find(|&t| {
        out.clear();
        nudge_in(&mut room, t, &mut out);
        room.tick(&mut out);
        room.stats().events > 0
    });
    assert!(pushed.is_some(), "the dot was never pushed");
    let events = frames_for(&out, TEXT)
        .into_iter()
        .find_map(|f| match f {
            Frame::Text(t) if t.starts_with(r#"{"type":"pushes""#) => Some(t),
            _ => None,
        })
        .expect("the pushes in JSON");
    let Ok(ServerMessage::<Dots>::Events { events }) = decode_server(&events) else {
        panic!("dot events: {events}");
    };
    assert_eq!((events[0].dot, events[0].to), (BINARY, 0.0));
    let binary_events = frames_for(&out, BINARY)
        .into_iter()
        .find_map(|f| match f {
            Frame::Binary(b) if b[0] == control::EVENTS => Some(b),
            _ => None,
        })
        .expect("the pushes in binary");
    assert_eq!(
        control::decode_server::<Dots>(&binary_events),
        Ok(ServerMessage::Events { events })
    );
    // The room recorded itself: the recording replays bit for bit, and is
    // refused as a recording of the tank game.
    let mut recording = Vec::new();
    room.recorder().expect("recorded").take(&mut recording);
    let summary =
        skirmish_core::replay_room_of::<Dots>(&recording, |_, _| {}).expect("a dot room replays");
    assert_eq!((summary.joins, summary.events), (2, 1));
    let tanks = skirmish_core::GameId {
        name: "tanks".into(),
        version: 2,
        shape: None,
    };
    let refused = skirmish_core::Reader::open(&recording, skirmish_core::Kind::Room, &tanks);
    let why = refused.map(|_| ()).expect_err("another game").to_string();
    assert!(why.contains("dots 1"), "names the game: {why}");
}

#[cfg(not(target_arch = "wasm32"))]
mod props {
    use proptest::prelude::*;
    use skirmish_core::{compact, control, decode_server, delta, Frame, PlayerId, ServerMessage};

    use super::dots::{DotState, Dots, Nudge, Pellet};
    use super::{dot_room, frames_for, BINARY};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// For any nudges, every compact frame the binary dot gets holds
        /// its own state exactly as the world has it, with the inputs it
        /// sent acknowledged, and the JSON seat's snapshot agrees.
        #[test]
        fn a_dots_frames_hold_the_worlds_state_for_any_nudges(
            nudges in prop::collection::vec(any::<i8>(), 1..40),
        ) {
            let (mut room, mut out) = dot_room();
            for (t, by) in nudges.iter().enumerate() {
                out.clear();
                let tick = t as u32 + 1;
                let nudge = Nudge { tick: skirmish_core::Tick(tick), by: *by };
                let mut bytes = Vec::new();
                skirmish_core::encode_inputs(&[nudge], None, None, &mut bytes);
                let message = skirmish_core::decode_inputs::<Nudge>(&bytes).expect("decodes");
                room.receive_frame_at(BINARY, &message, (false, &bytes), std::time::Duration::ZERO, &mut out)
                    .expect("taken");
                room.tick(&mut out);
                let truth = room.world().state_of(BINARY).expect("seated");
                let frame = frames_for(&out, BINARY)
                    .into_iter()
                    .find_map(|f| match f {
                        Frame::Binary(b) if b[0] == compact::SNAPSHOT => Some(b),
                        _ => None,
                    })
                    .expect("a snapshot each tick");
                let frame = compact::decode_frame::<Pellet, DotState>(&frame).expect("decodes");
                prop_assert_eq!(frame.own.x.to_bits(), truth.x.to_bits());
                prop_assert_eq!(frame.own.ack, Some(skirmish_core::Tick(tick)));
                let json = frames_for(&out, PlayerId(1))
                    .into_iter()
                    .find_map(|f| match f {
                        Frame::Text(t) if t.contains("\"snapshot\"") => Some(t),
                        _ => None,
                    })
                    .expect("a JSON snapshot each tick");
                let Ok(ServerMessage::<Dots>::Snapshot { players, .. }) = decode_server(&json) else {
                    panic!("a dot snapshot");
                };
                prop_assert_eq!(players[1].x.to_bits(), truth.x.to_bits());
            }
        }

        /// Bytes from the network never panic any of a dot game's decoders.
        #[test]
        fn arbitrary_bytes_never_panic_a_dot_games_decoders(
            bytes in prop::collection::vec(any::<u8>(), 0..120),
        ) {
            let _ = skirmish_core::decode_inputs::<Nudge>(&bytes);
            let _ = control::decode_server::<Dots>(&bytes);
            let _ = decode_server::<Dots>(&String::from_utf8_lossy(&bytes));
            let _ = compact::decode_frame::<Pellet, DotState>(&bytes);
            let _ = compact::decode_own::<DotState>(&bytes);
            let base = [(PlayerId(1), Pellet::default())];
            let _ = delta::decode::<Pellet, DotState>(&bytes, |_| Some(&base[..]), &());
        }
    }
}
