//! `side_by_side` (the replay's `--with-room`) streams: checking a client's
//! recording against its room's holds a window of the frames the room
//! sent, not all of them, so a long recording needs no more memory than a
//! short one.
//!
//! Memory is the process's peak resident size (`VmHWM`, reset through
//! `/proc/self/clear_refs`), measured in a child process of this test
//! binary that only reads the two recordings from files and compares them:
//! nothing allocated and freed beforehand can hide a growth.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use skirmish_core::{
    decode_client_frame, ClientMessage, ClientSession, Encoding, Frame, Incoming, Outbox, PlayerId,
    Room, RoomConfig, Seating, SessionConfig, PROTOCOL_VERSION,
};
use skirmish_tanks::{Controls, Tanks, WireInput};
use skirmish_tests::recordings::side_by_side;

/// Set in the child: the folder the recordings are in.
const CHILD: &str = "SKIRMISH_SIDE_BY_SIDE_DIR";

const TICK: Duration = Duration::from_millis(50);

/// Seats in the room besides the recorded client: they make every
/// snapshot the client gets about 2 KB of JSON.
const OTHERS: u32 = 24;

/// `seconds` of a recorded JSON session (`rec`) in a recorded room with
/// [`OTHERS`] idle players, one frame per tick; both recordings, and the
/// bytes the room sent `rec`.
fn play(seconds: u64) -> (Vec<u8>, Vec<u8>, usize) {
    let mut room =
        Room::<skirmish_tanks::Tanks>::recorded(RoomConfig::<skirmish_tanks::Tanks>::default());
    let mut out = Outbox::new();
    let json = Seating {
        encoding: Encoding::Json,
        protocol: PROTOCOL_VERSION,
        datagrams: false,
        binary_control: false,
    };
    let me = PlayerId(1);
    let config = SessionConfig {
        name: "rec".to_string(),
        ..SessionConfig::default()
    };
    let mut session: ClientSession<Tanks> = ClientSession::recorded(config, usize::MAX);
    let _ = session.hello();
    room.join(me, "rec", json, &mut out).expect("join");
    for k in 0..OTHERS {
        room.join(PlayerId(10 + k), "idle", json, &mut out)
            .expect("join");
    }
    let mut inbox: Vec<ClientMessage<WireInput>> = Vec::new();
    let mut sent = 0;
    for k in 1..=seconds * 20 {
        let now = TICK * k as u32;
        for message in inbox.drain(..) {
            let _ = room.receive_at(me, &message, TICK / 2, &mut out);
        }
        room.tick(&mut out);
        let (frames, deliveries) = out.take();
        for (_, i) in deliveries.into_iter().filter(|(to, _)| *to == me) {
            match &frames[i] {
                Frame::Text(text) => {
                    sent += text.len();
                    session.receive(Incoming::Text(text), now);
                }
                Frame::Binary(bytes) => {
                    sent += bytes.len();
                    session.receive(Incoming::Binary(bytes), now);
                }
            }
        }
        // Turn one way then the other every ten seconds.
        session.set_controls(Controls {
            turn: if (k / 200) % 2 == 0 { 0.3 } else { -0.3 },
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
    let client = session.recording().expect("recorded").bytes().to_vec();
    (client, room_bytes, sent)
}

/// A line of `/proc/self/status`, in KiB.
fn status_kib(field: &str) -> Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .with_context(|| format!("no {field} in /proc/self/status"))
}

/// The child: reads the recordings, resets the peak and compares them;
/// prints the peak's growth and what was compared.
fn measure(dir: &Path) -> Result<()> {
    let client = std::fs::read(dir.join("client.skrec"))?;
    let room = std::fs::read(dir.join("room.skrec"))?;
    // "5" resets the peak resident size to the current one.
    std::fs::write("/proc/self/clear_refs", "5")?;
    let before = status_kib("VmHWM:")?;
    let s = side_by_side(&client, &room)?;
    let after = status_kib("VmHWM:")?;
    anyhow::ensure!(s.first_unmatched.is_none(), "{s:?}");
    anyhow::ensure!(s.matched == s.received, "{s:?}");
    println!("GREW {} KIB, MATCHED {}", after - before, s.matched);
    Ok(())
}

/// Runs the child on `seconds` of play: the peak's growth in KiB, the
/// frames matched and the bytes the room sent the client.
fn peak_growth(seconds: u64) -> Result<(u64, u64, usize)> {
    let dir = std::env::temp_dir().join(format!(
        "skirmish-side-by-side-{}-{seconds}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir)?;
    let (client, room, sent) = play(seconds);
    std::fs::write(dir.join("client.skrec"), client)?;
    std::fs::write(dir.join("room.skrec"), room)?;
    let output = Command::new(std::env::current_exe()?)
        .args([
            "--exact",
            "a_long_recording_needs_no_more_memory_than_a_short_one",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, &dir)
        .output()?;
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let Some(line) = stdout
        .lines()
        .find_map(|l| l.split_once("GREW ").map(|(_, l)| l))
    else {
        bail!(
            "the child said nothing ({}):\n{stdout}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    };
    let numbers: Vec<u64> = line
        .split_whitespace()
        .filter_map(|w| w.trim_end_matches(',').parse().ok())
        .collect();
    match numbers[..] {
        [grew, matched] => Ok((grew, matched, sent)),
        _ => bail!("cannot read {line:?}"),
    }
}

#[test]
fn a_long_recording_needs_no_more_memory_than_a_short_one() -> Result<()> {
    if let Some(dir) = std::env::var_os(CHILD) {
        return measure(&PathBuf::from(dir));
    }
    let (short, short_frames, _) = peak_growth(30)?;
    let (long, long_frames, sent) = peak_growth(480)?;
    println!(
        "30 s: the peak grew {short} KiB ({short_frames} frames); \
         480 s: {long} KiB ({long_frames} frames, {} KiB sent)",
        sent / 1024
    );
    assert!(long_frames >= 15 * short_frames, "{long_frames} frames");
    assert!(sent > 16 << 20, "the room sent only {sent} bytes");
    // Keeping what was sent would grow the peak by about as much.
    assert!(
        long <= short + 2048,
        "the long recording's peak grew {long} KiB, the short one's {short} KiB"
    );
    Ok(())
}
