//! The client's flight recorder and its replay: a session recorded while it
//! plays against a real `Room` replays bit for bit; a changed byte is
//! refused by its chunk's checksum and, with the checksums recomputed,
//! caught at the frame it affects; damaged, foreign and other-version files
//! are refused with a reason, and arbitrary bytes never panic the replay.

// proptest and the harness run natively only (as in fuzz.rs).
#![cfg(not(target_arch = "wasm32"))]

use std::collections::VecDeque;
use std::time::Duration;

use proptest::prelude::*;
use skirmish_core::{
    decode_client_frame, reseal_recording, ClientMessage, ClientSession, Encoding, Frame, Incoming,
    LinkConditions, Outbox, PlayerId, ReplayError, ReplayOptions, Room, RoomCall, RoomConfig,
    RoomReplayError, Seating, SessionConfig, PROTOCOL_VERSION,
};
use skirmish_tanks::{open_room, replay_client, replay_room, Controls, Tanks, WireInput};

const FRAME: Duration = Duration::from_micros(16_667);
const TICK: Duration = Duration::from_millis(50);

/// Frames on their way, each with when it arrives.
type Wire = VecDeque<(Duration, Frame)>;

/// Two sessions (the first recorded) in one room, with `one_way` latency
/// each way and the first session's conditioner adding jitter and loss;
/// plays `seconds` and returns the first session's recording and the
/// room's.
fn play(seconds: u64, encoding: Encoding, one_way: Duration) -> (Vec<u8>, Vec<u8>) {
    let mut room =
        Room::<skirmish_tanks::Tanks>::recorded(RoomConfig::<skirmish_tanks::Tanks>::default());
    let mut out = Outbox::new();
    let config = |name: &str, seed| SessionConfig {
        name: name.to_string(),
        encoding,
        seed,
        resends: 2,
        ..SessionConfig::default()
    };
    let mut sessions = [
        ClientSession::recorded(config("rec", 7), usize::MAX),
        ClientSession::new(config("other", 9)),
    ];
    let noisy = LinkConditions {
        latency_ms: 20.0,
        jitter_ms: 15.0,
        loss: 0.05,
        duplicate: 0.02,
    };
    sessions[0].set_conditions(noisy, noisy);
    let ids = [PlayerId(1), PlayerId(2)];
    let mut down: [Wire; 2] = Default::default();
    let mut up: [VecDeque<(Duration, ClientMessage<WireInput>)>; 2] = Default::default();
    let mut now = Duration::ZERO;
    let mut next_tick = TICK;
    let mut last_tick = Duration::ZERO;
    for (i, s) in sessions.iter().enumerate() {
        // As over WebTransport: a compact client gets its own echoes.
        let seating = Seating {
            encoding,
            protocol: PROTOCOL_VERSION,
            datagrams: true,
            binary_control: false,
        };
        let _ = s.hello();
        room.join(ids[i], &format!("p{i}"), seating, &mut out)
            .expect("join");
    }
    let (mut spiked, mut reconnected) = (false, false);
    let end = Duration::from_secs(seconds);
    while now < end {
        now += FRAME;
        while next_tick <= now {
            // Inputs that arrived before this tick go in first.
            for (i, queue) in up.iter_mut().enumerate() {
                while queue.front().is_some_and(|(t, _)| *t <= next_tick) {
                    let (t, message) = queue.pop_front().expect("front");
                    let since = t.saturating_sub(last_tick);
                    let _ = room.receive_at(ids[i], &message, since, &mut out);
                }
            }
            room.tick(&mut out);
            last_tick = next_tick;
            next_tick += TICK;
        }
        // Own echoes go half a tick after the rest.
        let later: Vec<(PlayerId, usize)> = out.later().to_vec();
        let (frames, deliveries) = out.take();
        for (to, i) in deliveries {
            let k = usize::from(to == ids[1]);
            down[k].push_back((now + one_way, frames[i].clone()));
        }
        for (to, i) in later {
            let k = usize::from(to == ids[1]);
            let at = now + one_way + TICK / 2;
            let pos = down[k].partition_point(|(t, _)| *t <= at);
            down[k].insert(pos, (at, frames[i].clone()));
        }
        for (k, s) in sessions.iter_mut().enumerate() {
            drive(s, k, &mut down[k], &mut up[k], now, one_way);
        }
        if now >= Duration::from_secs(5) && !spiked {
            // A sudden spike of the uplink's latency: inputs arrive late
            // and the server repeats old ones, so predictions get corrected.
            spiked = true;
            let spike = LinkConditions {
                latency_ms: 250.0,
                ..noisy
            };
            sessions[0].set_conditions(spike, noisy);
        }
        if now >= Duration::from_secs(3) && !reconnected {
            reconnected = true;
            sessions[0].disconnected("test: a reconnection");
            room.leave(ids[0]);
            let seating = Seating {
                encoding,
                protocol: PROTOCOL_VERSION,
                datagrams: true,
                binary_control: false,
            };
            room.join(ids[0], "rec", seating, &mut out).expect("rejoin");
        }
    }
    let mut room_bytes = Vec::new();
    room.recorder().expect("recorded").take(&mut room_bytes);
    let client = sessions[0].recording().expect("recorded").bytes().to_vec();
    (client, room_bytes)
}

/// One frame of one session: what arrived, controls, advance, what it sent.
fn drive(
    s: &mut ClientSession<Tanks>,
    k: usize,
    down: &mut Wire,
    up: &mut VecDeque<(Duration, ClientMessage<WireInput>)>,
    now: Duration,
    one_way: Duration,
) {
    while down.front().is_some_and(|(t, _)| *t <= now) {
        let (at, frame) = down.pop_front().expect("front");
        match &frame {
            Frame::Text(text) => s.receive(Incoming::Text(text), at),
            Frame::Binary(bytes) => s.receive(Incoming::Binary(bytes), at),
        }
    }
    let t = now.as_secs_f32() + k as f32;
    s.set_controls(Controls {
        turn: (t * 0.7).sin(),
        throttle: 1.0,
        fire: (now.as_millis() / 400) % 3 == 0,
    });
    for message in s.advance(now) {
        let (text, bytes) = match s.encode(&message) {
            Frame::Text(t) => (true, t.into_bytes()),
            Frame::Binary(b) => (false, b),
        };
        s.sent(bytes.len());
        let message = decode_client_frame(text, &bytes).expect("own message decodes");
        up.push_back((now + one_way, message));
    }
    let _ = s.events().count();
}

fn recorded() -> &'static (Vec<u8>, Vec<u8>) {
    use std::sync::OnceLock;
    static BYTES: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
    BYTES.get_or_init(|| play(8, Encoding::Compact, Duration::from_millis(40)))
}

fn compact() -> &'static [u8] {
    &recorded().0
}

fn room() -> &'static [u8] {
    &recorded().1
}

#[test]
fn a_recorded_session_replays_bit_for_bit() {
    for bytes in [
        compact(),
        &play(3, Encoding::Json, Duration::from_millis(70)).0[..],
    ] {
        let replay = replay_client(bytes, ReplayOptions::default()).expect("replays");
        let s = &replay.summary;
        assert!(s.frames > 150, "{s:?}");
        assert!(s.received > 40, "{s:?}");
        assert!(s.rtt.is_some(), "{s:?}");
        assert!(!replay.samples.is_empty());
    }
    let s = replay_client(compact(), ReplayOptions::default())
        .expect("replays")
        .summary;
    assert!(
        s.corrections + s.snaps > 0,
        "loss and jitter correct: {s:?}"
    );
    assert_eq!(s.disconnections, 1, "{s:?}");
}

#[test]
fn until_keeps_the_whole_state_at_that_frame() {
    let replay = replay_client(
        compact(),
        ReplayOptions {
            until: Some(100),
            ..ReplayOptions::default()
        },
    )
    .expect("replays");
    assert_eq!(replay.summary.frames, 100);
    let state = replay.state_at_until.expect("state");
    assert!(state.contains("ClientSession"), "{state}");
    assert!(state.contains("authority"), "{state}");
}

/// Offsets of the binary snapshots' payloads in a recording, with their
/// length (not own echoes: one whose snapshot came first is rightly not
/// news, changed or not).
fn binary_frames(bytes: &[u8]) -> Vec<(usize, usize)> {
    let (_, calls) = skirmish_tanks::open_client(bytes).expect("opens");
    calls
        .filter_map(|c| match c.expect("reads") {
            (offset, skirmish_core::Call::Binary(b, _))
                if b.first() != Some(&skirmish_core::compact::OWN) =>
            {
                Some((offset, b.len()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a_changed_byte_of_a_received_frame_is_caught_where_it_matters() {
    let bytes = compact();
    let frames = binary_frames(bytes);
    // A snapshot well into the session; its last byte is a player's state.
    let (offset, _) = frames[frames.len() / 2];
    let mut changed = bytes.to_vec();
    let (_, calls) = skirmish_tanks::open_client(bytes).expect("opens");
    let next = calls
        .map(|c| c.expect("reads").0)
        .find(|&o| o > offset)
        .expect("a call after it");
    // The payload's last byte: refused by its chunk's checksum, then
    // (recomputed) left to the replay.
    changed[next - 1] ^= 0x5a;
    let refused = replay_client(&changed, ReplayOptions::default()).expect_err("damaged");
    assert!(
        refused.to_string().contains("fails its checksum"),
        "{refused}"
    );
    reseal_recording(&mut changed).expect("reseals");
    let original = replay_client(bytes, ReplayOptions::default()).expect("replays");
    match replay_client(&changed, ReplayOptions::default()) {
        Err(ReplayError::Diverged(d)) => {
            assert!(d.frame <= original.summary.frames);
            let named = d
                .calls
                .iter()
                .any(|c| c.starts_with(&format!("byte {offset}:")));
            assert!(named, "the changed frame is named: {:#?}", d.calls);
            assert_ne!(d.recorded.0, d.replayed.0);
            assert!(d.state.contains("ClientSession"));
        }
        other => panic!("expected a divergence, got {other:?}"),
    }
}

#[test]
fn damaged_foreign_and_other_version_files_are_refused_with_a_reason() {
    let bytes = compact();
    let cut = &bytes[..bytes.len() - 3];
    let err = replay_client(cut, ReplayOptions::default()).expect_err("cut short");
    assert!(err.to_string().contains("damaged at byte"), "{err}");
    let err = replay_client(b"GIF89a", ReplayOptions::default()).expect_err("foreign");
    assert!(
        err.to_string().contains("not a Skirmish recording"),
        "{err}"
    );
    let mut newer = bytes.to_vec();
    newer[6] = 9;
    let err = replay_client(&newer, ReplayOptions::default()).expect_err("newer");
    assert!(err.to_string().contains("format 9"), "{err}");
}

/// Cases per property: `default`, or `PROPTEST_CASES` when set (for a
/// million: `PROPTEST_CASES=1000000 cargo test --release -p skirmish-core
/// --test recording -- never_panic`).
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The first `calls` calls of a recording, cut at a record's end: a short
/// valid recording to mutate.
fn first_calls(bytes: &[u8], calls: usize, room: bool) -> Vec<u8> {
    let end = if room {
        let (_, c) = open_room(bytes).expect("opens");
        c.map(|c| c.expect("reads").0).nth(calls)
    } else {
        let (_, c) = skirmish_tanks::open_client(bytes).expect("opens");
        c.map(|c| c.expect("reads").0).nth(calls)
    };
    bytes[..end.unwrap_or(bytes.len())].to_vec()
}

fn short_client() -> &'static [u8] {
    use std::sync::OnceLock;
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| first_calls(compact(), 400, false))
}

fn short_room() -> &'static [u8] {
    use std::sync::OnceLock;
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| first_calls(room(), 300, true))
}

/// Replays `bytes` as both kinds; neither may panic.
fn replay_both(bytes: &[u8]) {
    let _ = replay_client(bytes, ReplayOptions::default());
    let _ = replay_room(bytes);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn arbitrary_bytes_never_panic(tail in proptest::collection::vec(any::<u8>(), 0..512)) {
        // After a valid header, so the records are what is fuzzed; and alone.
        for base in [short_client(), short_room()] {
            let mut bytes = base[..header_len(base)].to_vec();
            bytes.extend_from_slice(&tail);
            replay_both(&bytes);
        }
        replay_both(&tail);
    }

    #[test]
    fn mutated_recordings_never_panic(
        changes in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<prop::sample::Index>(),
        room in any::<bool>(),
    ) {
        let mut bytes = if room { short_room() } else { short_client() }.to_vec();
        for (at, byte) in &changes {
            let i = at.index(bytes.len());
            bytes[i] = *byte;
        }
        replay_both(&bytes);
        bytes.truncate(cut.index(bytes.len()));
        replay_both(&bytes);
    }
}

fn header_len(bytes: &[u8]) -> usize {
    let first = if bytes.get(5).copied() == Some(b'R') {
        let (_, calls) = open_room(bytes).expect("opens");
        calls.map(|c| c.expect("reads").0).next()
    } else {
        let (_, calls) = skirmish_tanks::open_client(bytes).expect("opens");
        calls.map(|c| c.expect("reads").0).next()
    };
    first.unwrap_or(bytes.len())
}

#[test]
fn a_recorded_room_replays_bit_for_bit() {
    let json = play(3, Encoding::Json, Duration::from_millis(70)).1;
    for bytes in [room(), &json[..]] {
        let s = replay_room(bytes).expect("replays");
        assert!(s.ticks >= 59, "{s:?}");
        assert_eq!(s.joins, 3, "{s:?}");
        assert_eq!(s.leaves, 1, "{s:?}");
        assert!(s.messages > 100, "{s:?}");
        assert!(s.bytes_sent > 10_000, "{s:?}");
    }
}

#[test]
fn a_changed_input_is_caught_and_damage_is_refused() {
    let bytes = room();
    let (_, calls) = open_room(bytes).expect("opens");
    let calls: Vec<(usize, RoomCall<WireInput>)> = calls.map(|c| c.expect("reads")).collect();
    let ticks_before = |k: usize| {
        calls[..k]
            .iter()
            .filter(|(_, c)| matches!(c, RoomCall::Tick(_)))
            .count() as u64
    };
    // An input in the middle, where it first arrived (in time for its
    // tick, so that it counts), turned the other way.
    let mut seen = std::collections::BTreeSet::new();
    let (k, turn) = calls
        .iter()
        .enumerate()
        .filter_map(|(k, (_, c))| match c {
            RoomCall::Message(id, ClientMessage::Input { inputs, .. }, _) => {
                let last = inputs.last()?;
                let first_time = seen.insert((*id, last.tick));
                let in_time = u64::from(last.tick.0) > ticks_before(k);
                (first_time && in_time && last.turn.abs() > 0.2).then_some((k, last.turn))
            }
            _ => None,
        })
        .nth(150)
        .expect("enough inputs");
    let (offset, next) = (calls[k].0, calls[k + 1].0);
    let at = (offset..next - 3)
        .rev()
        .find(|&i| bytes[i..i + 4] == turn.to_le_bytes())
        .expect("the turn's bytes");
    let mut changed = bytes.to_vec();
    changed[at + 3] ^= 0x80;
    let refused = replay_room(&changed).expect_err("damaged");
    assert!(
        refused.to_string().contains("fails its checksum"),
        "{refused}"
    );
    reseal_recording(&mut changed).expect("reseals");
    match replay_room(&changed) {
        Err(RoomReplayError::Diverged(d)) => {
            assert!(d.tick > ticks_before(k), "{d:?}");
            assert_ne!(d.recorded, d.replayed);
        }
        other => panic!("expected a divergence, got {other:?}"),
    }
    // Cut short inside its last chunk (a crash, a kill): replayed up to
    // the last whole tick, saying where it stops (where the chunk of the
    // last tick's calls starts, the length and check before its first).
    let (last, last_call) = calls.last().expect("records");
    let whole = ticks_before(calls.len()) - u64::from(matches!(last_call, RoomCall::Tick(_)));
    let tick_calls = calls[..calls.len() - 1]
        .iter()
        .rposition(|(_, c)| matches!(c, RoomCall::Tick(_)))
        .map_or(0, |k| k + 1);
    let cut = replay_room(&bytes[..bytes.len() - 4]).expect("a file cut short replays");
    assert_eq!(
        (cut.cut_at, cut.ticks),
        (Some(calls[tick_calls].0 - 8), whole),
        "{cut:?}"
    );
    // Wrong bytes are still damage: an unknown tag where the last record starts.
    let mut wrong = bytes.to_vec();
    wrong[*last] = 0xee;
    let err = replay_room(&wrong).expect_err("an unknown tag");
    assert!(err.to_string().contains("damaged at byte"), "{err}");
    let err = replay_room(compact()).expect_err("a client recording");
    assert_eq!(
        err.to_string(),
        "this is a client recording, not a room recording"
    );
}

/// LEB128, for hand-made records.
fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// `bytes` (a whole recording) with `record` after it, in a chunk of its
/// own whose checksums hold.
fn with_record(bytes: &[u8], record: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    out.extend_from_slice(&(record.len() as u32).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(record);
    out.extend_from_slice(&[0; 4]);
    reseal_recording(&mut out).expect("reseals");
    out
}

#[test]
fn hostile_records_are_refused_or_bounded() {
    // The whole recording: playing, after a welcome.
    let base = compact();
    // `sent` of more than a frame could be is damage, not an overflow.
    let mut sent = vec![9];
    varint(u64::MAX, &mut sent);
    let sent = with_record(base, &sent);
    let err = replay_client(&sent, ReplayOptions::default()).expect_err("refused");
    assert!(err.to_string().contains("bytes sent at once"), "{err}");
    // A frame 500 years after the last one: the session skips at most an
    // hour of steps, so this returns (with a difference: the hash is made
    // up) rather than stepping for hours.
    let mut jump = vec![8];
    let years = 500 * 365 * 24 * 3600 * 1_000_000_000u64;
    varint(years << 1, &mut jump);
    jump.extend_from_slice(&[0; 8]);
    jump.push(0);
    let jump = with_record(base, &jump);
    let result = replay_client(&jump, ReplayOptions::default());
    assert!(
        matches!(result, Err(ReplayError::Diverged(_))),
        "{result:?}"
    );
}

#[test]
fn frames_are_recorded_as_they_arrived_not_enlarged() {
    use skirmish_core::{encode_client, Tick};
    use skirmish_tanks::WireInput;
    let seating = Seating {
        encoding: Encoding::Compact,
        protocol: PROTOCOL_VERSION,
        datagrams: false,
        binary_control: false,
    };
    let (mut by_frame, mut by_message) = (
        Room::recorded(RoomConfig::default()),
        Room::recorded(RoomConfig::default()),
    );
    let mut out = Outbox::new();
    let (mut framed, mut decoded, mut wire) = (Vec::new(), Vec::new(), 0);
    for room in [&mut by_frame, &mut by_message] {
        room.join(PlayerId(1), "p", seating, &mut out)
            .expect("joins");
        room.tick(&mut out);
    }
    let take = |room: &mut Room<Tanks>, into: &mut Vec<u8>| {
        if let Some(r) = room.recorder() {
            r.take(into);
        }
    };
    take(&mut by_frame, &mut framed);
    take(&mut by_message, &mut decoded);
    let (framed_before, decoded_before) = (framed.len(), decoded.len());
    for t in 0..100u32 {
        // Sixteen inputs a message, as a client under loss resends them,
        // each with a view tick (a shooter's).
        let inputs: Vec<WireInput> = (0..16)
            .map(|k| WireInput {
                tick: Tick(t + k + 1),
                turn: if k % 3 == 0 { 1.0 } else { 0.0 },
                throttle: 1.0,
                fire: k % 5 == 0,
                view_tick: Some(f64::from(t + k) - 2.5),
            })
            .collect();
        let message = ClientMessage::Input {
            inputs,
            snapshot_ack: Some(Tick(t)),
            seq: None,
        };
        let Frame::Binary(bytes) = encode_client(&message, Encoding::Compact) else {
            panic!("compact inputs travel binary");
        };
        let back = decode_client_frame(false, &bytes).expect("decodes");
        wire += bytes.len();
        let since = Duration::from_millis(20);
        let _ = by_frame.receive_frame_at(PlayerId(1), &back, (false, &bytes), since, &mut out);
        let _ = by_message.receive_at(PlayerId(1), &back, since, &mut out);
        by_frame.tick(&mut out);
        by_message.tick(&mut out);
        out.clear();
    }
    take(&mut by_frame, &mut framed);
    take(&mut by_message, &mut decoded);
    // A tick record each, and its chunk's length, check and checksum.
    let ticks = 100 * (9 + 12);
    let framed_bytes = framed.len() - framed_before - ticks;
    let decoded_bytes = decoded.len() - decoded_before - ticks;
    // The frame's bytes and a few of the record's own (tag, player, arrival,
    // kind, length): never more than what arrived plus those.
    assert!(
        framed_bytes <= wire + 100 * 12,
        "{framed_bytes} recorded for {wire} received"
    );
    assert!(
        decoded_bytes > 2 * wire,
        "the decoded form would be {decoded_bytes} for {wire}"
    );
    // Both replay, the frames decoded again.
    let s = replay_room(&framed).expect("replays");
    assert_eq!((s.messages, s.ticks), (100, 101), "{s:?}");
    let s = replay_room(&decoded).expect("replays");
    assert_eq!((s.messages, s.ticks), (100, 101), "{s:?}");
}
