//! What one client may add to its room's recording: its messages as they
//! decode (padding and unknown fields never reach the disk), and at most
//! `RECORD_BYTES_PER_TICK` a tick past a burst; past that its messages are
//! refused unhandled and unrecorded, so the recording still replays bit
//! for bit and the other players' messages are recorded as before.

use std::time::Duration;

use skirmish_core::{protocol::decode_client_frame, protocol::encode};
use skirmish_core::{
    ClientMessage, Encoding, ErrorCode, Outbox, PlayerId, Room, RoomConfig, Seating, Tick,
    RECORD_BURST,
};
use skirmish_tanks::{replay_room, Tanks, WireInput};

const HOSTILE: PlayerId = PlayerId(1);
const HONEST: PlayerId = PlayerId(2);

fn input_text(tick: u32, pad: usize) -> String {
    let message = ClientMessage::Input {
        inputs: vec![WireInput {
            tick: Tick(tick),
            turn: 0.5,
            throttle: 1.0,
            fire: false,
            view_tick: None,
        }],
        snapshot_ack: None,
        seq: Some(tick as u16),
    };
    let text = encode(&message);
    if pad == 0 {
        return text;
    }
    // A field the server ignores, as long as the frame allows.
    let body = text.strip_suffix('}').expect("a JSON object");
    format!("{body},\"padding\":\"{}\"}}", "x".repeat(pad))
}

/// `text` from `id` as it arrived, to the room; the recording's new bytes
/// are appended to `recording`.
fn send(
    room: &mut Room<Tanks>,
    out: &mut Outbox,
    recording: &mut Vec<u8>,
    id: PlayerId,
    text: &str,
) -> Result<(), ErrorCode> {
    let message = decode_client_frame::<WireInput>(true, text.as_bytes()).expect("decodes");
    let handled = room
        .receive_frame_at(id, &message, (true, text.as_bytes()), Duration::ZERO, out)
        .map(|_| ())
        .map_err(|e| e.code);
    if let Some(r) = room.recorder() {
        r.take(recording);
    }
    handled
}

#[test]
fn a_padded_client_fills_only_its_own_allowance() {
    let mut room = Room::<Tanks>::recorded(RoomConfig::<Tanks>::default());
    let mut out = Outbox::new();
    let mut recording = Vec::new();
    let json = Seating {
        encoding: Encoding::Json,
        protocol: 2,
        datagrams: false,
        binary_control: false,
    };
    room.join(HOSTILE, "hostile", json, &mut out)
        .expect("joins");
    room.join(HONEST, "honest", json, &mut out).expect("joins");
    room.tick(&mut out);
    if let Some(r) = room.recorder() {
        r.take(&mut recording);
    }

    // One padded input: recorded as it decodes, not as it came.
    let padded = input_text(2, 7_900);
    assert!(padded.len() > 7_900);
    let before = recording.len();
    send(&mut room, &mut out, &mut recording, HOSTILE, &padded).expect("handled");
    let one = recording.len() - before;
    assert!(one < 64, "a padded input took {one} bytes of the recording");

    // A flood within one tick: past the burst, refused and counted; the
    // honest player's input still goes in.
    let before = recording.len();
    let mut refused = 0u64;
    for n in 0..2_000u32 {
        let text = input_text(3 + n, 7_900);
        if let Err(code) = send(&mut room, &mut out, &mut recording, HOSTILE, &text) {
            assert_eq!(code, ErrorCode::RateLimited);
            refused += 1;
        }
    }
    let flood = recording.len() - before;
    assert!(refused > 1_500, "{refused} refused");
    assert!(
        flood <= RECORD_BURST as usize + 64,
        "the flood added {flood} bytes"
    );
    assert_eq!(room.stats().record_refused, refused);
    let before = recording.len();
    send(
        &mut room,
        &mut out,
        &mut recording,
        HONEST,
        &input_text(2, 0),
    )
    .expect("the honest player is not limited");
    assert!(recording.len() > before, "recorded");

    // A second later the allowance is back, at its rate (20 ticks of
    // RECORD_BYTES_PER_TICK).
    for _ in 0..20 {
        room.tick(&mut out);
    }
    send(
        &mut room,
        &mut out,
        &mut recording,
        HOSTILE,
        &input_text(5_000, 7_900),
    )
    .expect("the allowance came back");

    // What was recorded replays bit for bit.
    let mut whole = recording;
    room.tick(&mut out);
    if let Some(r) = room.recorder() {
        r.take(&mut whole);
    }
    let summary = replay_room(&whole).expect("replays");
    assert!(summary.ticks >= 22, "{summary:?}");
}
