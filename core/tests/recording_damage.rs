//! Recordings name their damage (format 6, `docs/RECORDING.md`): every
//! single changed byte of a page's recording and of a room's is refused
//! as damage by the reader and by the replay, never replayed as another
//! session, and named by the header or the chunk it is in. A file cut
//! short is still told as cut short, and a room replays up to the cut.
//! Format 5 (the same records, unchecked and unchunked) reads as before.

mod dots;

use std::ops::Range;
use std::sync::OnceLock;
use std::time::Duration;

use skirmish_core::ClientSession;
use skirmish_core::{
    open_client_of, open_room_of, replay_client_of, replay_room_of, reseal_recording, Call,
    Encoding, FormatError, Kind, Reader, ReplayError, ReplayOptions, RoomReplayError,
    SessionConfig, CLIENT_CHUNK, FORMAT_VERSION,
};

use dots::*;

/// The values each byte is changed by (xor): its lowest bit, its highest.
const FLIPS: [u8; 2] = [0x01, 0x80];

/// A page's recording and its room's: both dots in a recorded room, the
/// binary one standing, then moving, for four seconds.
fn recorded() -> &'static (Vec<u8>, Vec<u8>) {
    static BYTES: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
    BYTES.get_or_init(|| {
        let mut line = recorded_line();
        let mut room = Vec::new();
        run(&mut line, Duration::from_secs(1), &mut room);
        line.binary.set_controls(Stick { by: 1, tap: false });
        run(&mut line, Duration::from_secs(3), &mut room);
        let page = line.binary.recording().expect("recorded").bytes().to_vec();
        (page, room)
    })
}

/// Runs the pages for `span`, taking the room's bytes into `room` after
/// every tick, as the server does (a chunk a tick, taken or not).
fn run(line: &mut Pages, span: Duration, room: &mut Vec<u8>) {
    let end = line.now + span;
    while line.now < end {
        line.frame();
        if line.last_tick == line.now {
            line.room.recorder().expect("recorded").take(room);
        }
    }
}

/// Both dot pages welcomed into a room that records itself (the binary
/// page records itself too).
fn recorded_line() -> Pages {
    let (room, out) = dot_room_with(true, None);
    let config = |encoding| SessionConfig {
        encoding,
        ..SessionConfig::default()
    };
    let mut line = Pages {
        room,
        out,
        text: ClientSession::new(config(Encoding::Json)),
        binary: ClientSession::recorded(config(Encoding::Compact), usize::MAX),
        now: Duration::ZERO,
        last_tick: Duration::ZERO,
    };
    line.deliver();
    line
}

/// Where a recording's header (with its checksum) and each chunk lie.
fn layout(bytes: &[u8], kind: Kind) -> (Range<usize>, Vec<Range<usize>>) {
    let game = skirmish_core::GameId::of::<Dots>();
    let (header, _) = Reader::open(bytes, kind, &game).expect("opens");
    assert_eq!(header.format, FORMAT_VERSION);
    let mut at = header.config_at + header.config.len() + 4;
    let first = 0..at;
    let mut chunks = Vec::new();
    while at < bytes.len() {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes"));
        let end = at + 8 + len as usize + 4;
        chunks.push(at..end);
        at = end;
    }
    assert_eq!(at, bytes.len(), "the chunks end where the file does");
    (first, chunks)
}

/// Reads every call of a page's recording: how many, or the first error.
fn read_page(bytes: &[u8]) -> Result<usize, FormatError> {
    let (_, calls) = open_client_of::<Dots>(bytes)?;
    calls
        .map(|c| c.map(|_| ()))
        .collect::<Result<Vec<()>, _>>()
        .map(|c| c.len())
}

/// Reads every call of a room's recording: how many, or the first error.
fn read_room(bytes: &[u8]) -> Result<usize, FormatError> {
    let (_, calls) = open_room_of::<Dots>(bytes)?;
    calls
        .map(|c| c.map(|_| ()))
        .collect::<Result<Vec<()>, _>>()
        .map(|c| c.len())
}

/// Whether `i` is a byte the replay is tried at, besides the reader: the
/// header, the length, check and checksum of the first, a middle and the
/// last chunk, and every 29th byte. (The replay reads through the same
/// reader, and replaying a copy for every byte would take minutes
/// unoptimised.)
fn replayed_at(i: usize, header: &Range<usize>, chunks: &[Range<usize>]) -> bool {
    let framing =
        |c: &Range<usize>| (c.start..c.start + 8).contains(&i) || (c.end - 4..c.end).contains(&i);
    let tried = [0, chunks.len() / 2, chunks.len() - 1];
    header.contains(&i) || i % 29 == 0 || tried.iter().any(|&k| framing(&chunks[k]))
}

/// `what` of a damage found at `offset` for a change at byte `i`: named
/// by the header or by the chunk that holds the byte.
fn named(i: usize, offset: usize, what: &str, header: &Range<usize>, chunks: &[Range<usize>]) {
    if header.contains(&i) {
        assert!(
            offset <= 6 && what.contains("header"),
            "byte {i}: {offset}: {what}"
        );
    } else {
        let chunk = chunks.iter().find(|c| c.contains(&i)).expect("in a chunk");
        assert_eq!(offset, chunk.start, "byte {i}: {what}");
        assert!(what.contains("checksum"), "byte {i}: {what}");
    }
}

#[test]
fn every_changed_byte_of_a_page_recording_is_refused_as_damage() {
    let (page, _) = recorded();
    let (header, chunks) = layout(page, Kind::Client);
    assert!(chunks.len() >= 3, "{} chunks", chunks.len());
    let calls = read_page(page).expect("whole");
    assert!(calls > 300, "{calls} calls");
    let mut replays = 0;
    for i in 0..page.len() {
        for flip in FLIPS {
            let mut changed = page.clone();
            changed[i] ^= flip;
            match read_page(&changed) {
                Err(FormatError::Damaged { offset, what }) => {
                    named(i, offset, &what, &header, &chunks);
                }
                other => panic!("byte {i} ^ {flip:#04x} was read: {other:?}"),
            }
            if replayed_at(i, &header, &chunks) {
                replays += 1;
                match replay_client_of::<Dots>(&changed, ReplayOptions::default()) {
                    Err(ReplayError::Format(FormatError::Damaged { .. })) => {}
                    Err(other) => panic!("byte {i} ^ {flip:#04x} replayed: {other}"),
                    Ok(r) => panic!("byte {i} ^ {flip:#04x} replayed: {:?}", r.summary),
                }
            }
        }
    }
    assert!(replays > 2 * page.len() / 29, "{replays} replays");
}

#[test]
fn every_changed_byte_of_a_room_recording_is_refused_as_damage() {
    let (_, room) = recorded();
    let (header, chunks) = layout(room, Kind::Room);
    let whole = replay_room_of::<Dots>(room, |_, _| {}).expect("replays");
    assert_eq!(whole.ticks, 80, "{whole:?}");
    assert_eq!(chunks.len(), 80, "a chunk a tick");
    let calls = read_room(room).expect("whole");
    for i in 0..room.len() {
        for flip in FLIPS {
            let mut changed = room.clone();
            changed[i] ^= flip;
            match read_room(&changed) {
                Err(FormatError::Damaged { offset, what }) => {
                    named(i, offset, &what, &header, &chunks);
                }
                other => panic!("byte {i} ^ {flip:#04x} was read: {other:?} of {calls}"),
            }
            if replayed_at(i, &header, &chunks) {
                match replay_room_of::<Dots>(&changed, |_, _| {}) {
                    Err(RoomReplayError::Format(FormatError::Damaged { .. })) => {}
                    Err(other) => panic!("byte {i} ^ {flip:#04x} replayed: {other}"),
                    // Not even as a file cut short: a changed length is
                    // told from a cut by its own check.
                    Ok(s) => panic!("byte {i} ^ {flip:#04x} replayed: {s:?}"),
                }
            }
        }
    }
}

#[test]
fn damage_says_where_and_what_it_belonged_to() {
    let (page, room) = recorded();
    let (_, chunks) = layout(room, Kind::Room);
    // A byte of the 11th chunk's records: the calls after tick 10.
    let mut changed = room.clone();
    changed[chunks[10].start + 9] ^= 0x01;
    let err = read_room(&changed).expect_err("damaged");
    let start = chunks[10].start;
    assert_eq!(
        err.to_string(),
        format!(
            "damaged at byte {start}: the chunk of the calls after tick 10 ({} bytes of records from byte {}) fails its checksum",
            chunks[10].len() - 12,
            start + 8
        )
    );
    // Its length, whose own check tells it from a cut.
    let mut changed = room.clone();
    changed[start + 1] ^= 0x80;
    let err = read_room(&changed).expect_err("damaged");
    assert_eq!(
        err.to_string(),
        format!("damaged at byte {start}: the length of the chunk of the calls after tick 10 fails its checksum")
    );
    assert!(!err.is_cut_short());
    // A page's chunk names the frame it follows; its header, itself.
    let (_, chunks) = layout(page, Kind::Client);
    let mut changed = page.clone();
    changed[chunks[1].end - 1] ^= 0x01;
    let err = read_page(&changed).expect_err("damaged").to_string();
    assert!(err.contains("the chunk of the calls after frame "), "{err}");
    let mut changed = page.clone();
    changed[20] ^= 0x01;
    let err = read_page(&changed).expect_err("damaged").to_string();
    assert_eq!(err, "damaged at byte 0: the header fails its checksum");
}

#[test]
fn a_page_recording_cut_anywhere_is_told_as_cut_short() {
    let (page, _) = recorded();
    let (header, chunks) = layout(page, Kind::Client);
    for end in header.end..page.len() {
        match read_page(&page[..end]) {
            Ok(_) => assert!(
                chunks.iter().any(|c| c.end == end) || end == header.end,
                "cut at {end}, inside a chunk, read whole"
            ),
            Err(e) => {
                assert!(e.is_cut_short(), "cut at {end}: {e}");
                let FormatError::Damaged { offset, .. } = e else {
                    unreachable!()
                };
                let chunk = chunks.iter().find(|c| c.contains(&end)).expect("a chunk");
                assert_eq!(offset, chunk.start, "cut at {end}");
            }
        }
    }
}

#[test]
fn a_room_cut_anywhere_replays_up_to_its_last_whole_tick() {
    let (_, room) = recorded();
    let (header, chunks) = layout(room, Kind::Room);
    for (k, chunk) in chunks.iter().enumerate().skip(chunks.len() - 4) {
        for end in chunk.start + 1..chunk.end {
            let s = replay_room_of::<Dots>(&room[..end], |_, _| {})
                .unwrap_or_else(|e| panic!("cut at {end}: {e}"));
            assert_eq!(s.cut_at, Some(chunk.start), "cut at {end}");
            assert!(s.ended.is_none(), "cut at {end}");
            assert_eq!(s.ticks as usize, k, "a tick per chunk before the cut");
        }
    }
    // Inside the header: not a room at all.
    for end in 0..header.end {
        assert!(replay_room_of::<Dots>(&room[..end], |_, _| {}).is_err());
    }
}

#[test]
fn a_page_recording_is_whole_after_every_call_in_chunks_of_about_4_kib() {
    let mut line = recorded_line();
    line.binary.set_controls(Stick { by: 1, tap: false });
    let mut before = 0;
    for _ in 0..300 {
        line.frame();
        let bytes = line.binary.recording().expect("recorded").bytes();
        let calls = read_page(bytes).expect("whole after a frame");
        assert!(calls >= before);
        before = calls;
    }
    let bytes = line.binary.recording().expect("recorded").bytes();
    let (_, chunks) = layout(bytes, Kind::Client);
    for chunk in &chunks[..chunks.len() - 1] {
        // Sealed at the frame that fills it: a frame's calls past 4 KiB.
        assert!((CLIENT_CHUNK..CLIENT_CHUNK + 512).contains(&(chunk.len() - 12)));
    }
}

#[test]
fn a_resealed_change_is_read_and_left_to_the_replay() {
    let (page, room) = recorded();
    // The last frame's recorded hash, its highest byte changed.
    let (_, calls) = open_client_of::<Dots>(page).expect("opens");
    let hash = calls
        .filter_map(|c| match c.expect("reads").1 {
            Call::Advance { hash, .. } => Some(hash),
            _ => None,
        })
        .last()
        .expect("frames");
    let at = (0..page.len() - 8)
        .rev()
        .find(|&i| page[i..i + 8] == hash.to_le_bytes())
        .expect("the hash's bytes");
    let mut changed = page.clone();
    changed[at + 7] ^= 0x01;
    assert!(read_page(&changed).is_err());
    reseal_recording(&mut changed).expect("reseals");
    assert_eq!(read_page(&changed), read_page(page));
    // Its last record is the last frame's `advance`, whose hash changed.
    match replay_client_of::<Dots>(&changed, ReplayOptions::default()) {
        Err(ReplayError::Diverged(d)) => assert_eq!(d.recorded.0 ^ (1 << 56), d.replayed.0),
        other => panic!("{:?}", other.map(|r| r.summary)),
    }
    let mut room = room.clone();
    reseal_recording(&mut room).expect("reseals");
    assert_eq!(
        &room,
        &recorded().1,
        "an unchanged recording reseals as it was"
    );
    assert_eq!(
        reseal_recording(&mut page[..page.len() - 1].to_vec()).map_err(|e| e.is_cut_short()),
        Err(true)
    );
}

/// A recording of this build as format 5 wrote it: the same records,
/// with no wire shape, no header checksum and no chunks.
fn as_format_5(bytes: &[u8], kind: Kind) -> Vec<u8> {
    let (header, chunks) = layout(bytes, kind);
    let mut out = bytes[..header.end - 4].to_vec();
    out[6] = 5;
    // The shape follows the protocol, the build, the game and its version.
    let mut r = skirmish_core::Reader::at(&out, 8);
    let shape_at = r
        .varint()
        .and_then(|_| r.text().map(|_| ()))
        .and_then(|()| r.text().map(|_| ()))
        .and_then(|()| r.varint())
        .map(|_| r.offset())
        .expect("a header");
    out.drain(shape_at..shape_at + 4);
    for chunk in chunks {
        out.extend_from_slice(&bytes[chunk.start + 8..chunk.end - 4]);
    }
    out
}

#[test]
fn format_5_still_reads_and_replays_unchecked() {
    let (page, room) = recorded();
    let game = skirmish_core::GameId::of::<Dots>();
    let (old_page, old_room) = (
        as_format_5(page, Kind::Client),
        as_format_5(room, Kind::Room),
    );
    let (header, _) = Reader::open(&old_page, Kind::Client, &game).expect("opens");
    assert_eq!(header.format, 5);
    assert_eq!(read_page(&old_page), read_page(page));
    assert_eq!(read_room(&old_room), read_room(room));
    let replayed = |bytes: &[u8]| {
        replay_client_of::<Dots>(bytes, ReplayOptions::default())
            .expect("replays")
            .summary
    };
    assert_eq!(replayed(&old_page), replayed(page));
    let old = replay_room_of::<Dots>(&old_room, |_, _| {}).expect("replays");
    assert_eq!(
        old,
        replay_room_of::<Dots>(room, |_, _| {}).expect("replays")
    );
    // Nothing to check a byte against, as before: the last tick's hash
    // changed is read, and the replay tells at that tick.
    let mut changed = old_room.clone();
    *changed.last_mut().expect("bytes") ^= 0x01;
    assert_eq!(read_room(&changed), read_room(room));
    match replay_room_of::<Dots>(&changed, |_, _| {}) {
        Err(RoomReplayError::Diverged(d)) => assert_eq!(d.tick, old.ticks),
        other => panic!("{other:?}"),
    }
}
