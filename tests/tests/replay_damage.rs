//! Damage as a person meets it: the native replayer (`cargo xtask replay`,
//! `replay-room`) refuses a page's or a room's recording with a changed
//! byte, naming the byte and what it belonged to (exit 2), while a room
//! cut short still replays up to the cut (exit 0). The library's own
//! tests (`core/tests/recording_damage.rs`) change every byte.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{ensure, Result};
use skirmish_core::FORMAT_VERSION;
use skirmish_core::{
    decode_client_frame, ClientMessage, ClientSession, Encoding, Frame, Incoming, Outbox, PlayerId,
    Room, RoomConfig, Seating, SessionConfig, PROTOCOL_VERSION,
};
use skirmish_tanks::{Controls, Tanks, WireInput};

const TICK: Duration = Duration::from_millis(50);

/// `seconds` of a recorded binary session in a recorded room, a frame a
/// tick: the page's recording and the room's.
fn play(seconds: u32) -> (Vec<u8>, Vec<u8>) {
    let mut room = Room::<Tanks>::recorded(RoomConfig::<Tanks>::default());
    let mut out = Outbox::new();
    let me = PlayerId(1);
    let seating = Seating {
        encoding: Encoding::Compact,
        protocol: PROTOCOL_VERSION,
        datagrams: false,
        binary_control: true,
    };
    let config = SessionConfig {
        name: "rec".to_string(),
        encoding: Encoding::Compact,
        ..SessionConfig::default()
    };
    let mut session: ClientSession<Tanks> = ClientSession::recorded(config, usize::MAX);
    let _ = session.hello();
    room.join(me, "rec", seating, &mut out).expect("join");
    let mut inbox: Vec<ClientMessage<WireInput>> = Vec::new();
    for k in 1..=seconds * 20 {
        let now = TICK * k;
        for message in inbox.drain(..) {
            let _ = room.receive_at(me, &message, TICK / 2, &mut out);
        }
        room.tick(&mut out);
        let (frames, deliveries) = out.take();
        for (_, i) in deliveries {
            match &frames[i] {
                Frame::Text(text) => session.receive(Incoming::Text(text), now),
                Frame::Binary(bytes) => session.receive(Incoming::Binary(bytes), now),
            }
        }
        session.set_controls(Controls {
            turn: 0.3,
            throttle: 1.0,
            fire: k % 10 == 0,
        });
        for message in session.advance(now) {
            let (text, bytes) = match session.encode(&message) {
                Frame::Text(t) => (true, t.into_bytes()),
                Frame::Binary(b) => (false, b),
            };
            session.sent(bytes.len());
            inbox.push(decode_client_frame(text, &bytes).expect("own message decodes"));
        }
        let _ = session.events().count();
    }
    let mut room_bytes = Vec::new();
    room.recorder().expect("recorded").take(&mut room_bytes);
    let page = session.recording().expect("recorded").bytes().to_vec();
    (page, room_bytes)
}

/// Runs the replayer on `file` (`--room` for a room): exit code, stdout
/// and stderr.
fn replay(file: &Path, room: bool) -> Result<(Option<i32>, String, String)> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_replay"));
    command
        .arg(file)
        .arg("--svg")
        .arg(file.with_extension("svg"));
    if room {
        command.arg("--room");
    }
    let out = command.output()?;
    Ok((
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

#[test]
fn the_replayer_names_damage_and_a_room_cut_short_still_replays() -> Result<()> {
    let dir = std::env::temp_dir().join(format!("skirmish-formats-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let (page, room) = play(3);
    assert_eq!(u16::from_le_bytes([page[6], page[7]]), FORMAT_VERSION);
    for (name, bytes, is_room, says) in [
        ("page", &page, false, "frames match"),
        ("room", &room, true, "ticks match"),
    ] {
        let whole = dir.join(format!("{name}.skrec"));
        std::fs::write(&whole, bytes)?;
        let (code, stdout, stderr) = replay(&whole, is_room)?;
        ensure!(
            code == Some(0) && stdout.contains(says),
            "{name}: {stdout}{stderr}"
        );
        // A byte in the middle changed: refused, named, exit 2.
        let mut changed = bytes.clone();
        changed[bytes.len() / 2] ^= 0x01;
        let damaged = dir.join(format!("{name}-damaged.skrec"));
        std::fs::write(&damaged, &changed)?;
        let (code, stdout, stderr) = replay(&damaged, is_room)?;
        ensure!(
            code == Some(2)
                && stderr.contains("damaged at byte")
                && stderr.contains("fails its checksum"),
            "{name}: {code:?} {stdout}{stderr}"
        );
        println!("{name}: {}", stderr.trim());
    }
    // Cut inside its last chunk, the room replays up to its last whole tick.
    let cut = dir.join("room-cut.skrec");
    std::fs::write(&cut, &room[..room.len() - 3])?;
    let (code, stdout, stderr) = replay(&cut, true)?;
    ensure!(
        code == Some(0) && stdout.contains("cut short"),
        "{code:?} {stdout}{stderr}"
    );
    println!("{}", stdout.trim());
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
