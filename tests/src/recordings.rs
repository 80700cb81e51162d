//! Reading recordings from disk: a client recording is one file; a room's
//! may be split in parts (`FILE`, `FILE.1`, `FILE.2`, …, see the server's
//! `--record`), read here in order as one.

use std::path::{Path, PathBuf};

use std::collections::VecDeque;

use anyhow::{Context, Result};
use skirmish_core::{Call, Frame, ServerMessage};

/// The bytes of `path` and of the parts that continue it.
///
/// # Errors
/// `path` cannot be read (a missing later part only ends the chain).
pub fn read_parts(path: &Path) -> Result<Vec<u8>> {
    let mut bytes =
        std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    for part in 1.. {
        let mut next = path.as_os_str().to_owned();
        next.push(format!(".{part}"));
        let next = PathBuf::from(next);
        match std::fs::read(&next) {
            Ok(more) => bytes.extend_from_slice(&more),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", next.display())),
        }
    }
    Ok(bytes)
}

/// The recordings in `dir` whose name ends in `.skrec` (first parts only),
/// sorted by name.
///
/// # Errors
/// `dir` cannot be listed.
pub fn first_parts(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "skrec"))
        .collect();
    found.sort();
    Ok(found)
}

/// A client's recording beside the server's recording of its room.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SideBySide {
    /// The client's name, which its joins in the room carry.
    pub name: String,
    /// The client's connections whose player (from its `welcome`) joined
    /// this room, checked; and the others (another room, or no welcome).
    pub connections: usize,
    /// Connections not in this room.
    pub elsewhere: usize,
    /// Frames the client received on the checked connections.
    pub received: usize,
    /// Frames the room sent to those players.
    pub sent: usize,
    /// Of those received, how many the room sent.
    pub matched: usize,
    /// `error` frames, which a session sends itself (refusals, the
    /// farewell), not the room: not compared.
    pub errors: usize,
    /// The client received frames after the room's recording ended (it
    /// stopped at its bound, or the recordings were saved at different
    /// moments): not compared.
    pub past_the_end: usize,
    /// The first received frame the room never sent: its byte offset in
    /// the client's recording and its first bytes.
    pub first_unmatched: Option<(usize, String)>,
}

/// Sent frames a received one is looked for among: datagrams may overtake
/// each other (WebTransport sends snapshots as datagrams and the rest on a
/// stream), or be lost.
const WINDOW: usize = 64;

/// One connection's received frames: (byte offset, text?, bytes).
type Received<'a> = Vec<(usize, bool, &'a [u8])>;

/// Checks that every frame a client's recording received was sent to it by
/// the room in the server's recording: each connection is matched with the
/// player its `welcome` names; frames a datagram transport lost may be
/// missing and datagrams may come up to 64 frames out of order, but no
/// frame may differ.
///
/// # Errors
/// The recordings do not read, the room's does not replay, or no
/// connection of the client joined that room.
pub fn side_by_side(client: &[u8], room: &[u8]) -> Result<SideBySide> {
    let (config, calls) = skirmish_core::open_client(client)?;
    let mut connections: Vec<Received<'_>> = vec![Vec::new()];
    for call in calls {
        match call? {
            (at, Call::Text(bytes, _)) => connections
                .last_mut()
                .into_iter()
                .for_each(|c| c.push((at, true, bytes))),
            (at, Call::Binary(bytes, _)) => connections
                .last_mut()
                .into_iter()
                .for_each(|c| c.push((at, false, bytes))),
            (_, Call::Disconnected(_)) => connections.push(Vec::new()),
            _ => {}
        }
    }
    let (_, mut sent) = skirmish_core::replay_room_for(room, &config.name)
        .map_err(|e| anyhow::anyhow!("the room's recording: {e}"))?;
    let mut out = SideBySide {
        name: config.name,
        ..SideBySide::default()
    };
    for received in connections.iter().filter(|c| !c.is_empty()) {
        let player = received.iter().find_map(|(_, text, bytes)| {
            let text = std::str::from_utf8(bytes).ok().filter(|_| *text)?;
            match skirmish_core::decode_server(text) {
                Ok(ServerMessage::Welcome { player_id, .. }) => Some(player_id),
                _ => None,
            }
        });
        let Some(frames) = player.and_then(|p| sent.remove(&p)) else {
            out.elsewhere += 1;
            continue;
        };
        out.connections += 1;
        out.sent += frames.len();
        compare(received, &frames, &mut out);
        if out.first_unmatched.is_some() {
            break;
        }
    }
    anyhow::ensure!(
        out.connections > 0,
        "no connection of {:?} joined this room ({} elsewhere)",
        out.name,
        out.elsewhere
    );
    Ok(out)
}

/// Matches one connection's received frames against what the room sent.
fn compare(received: &Received<'_>, frames: &[Frame], out: &mut SideBySide) {
    let mut next = frames.iter();
    let mut pool: VecDeque<&Frame> = VecDeque::new();
    for &(at, text, bytes) in received {
        let is_error = text
            && std::str::from_utf8(bytes)
                .ok()
                .and_then(|t| skirmish_core::decode_server(t).ok())
                .is_some_and(|m| matches!(m, ServerMessage::Error { .. }));
        if is_error {
            out.errors += 1;
            continue;
        }
        out.received += 1;
        pool.extend(next.by_ref().take(WINDOW.saturating_sub(pool.len())));
        if pool.is_empty() {
            out.past_the_end += 1;
            continue;
        }
        let same = |f: &&Frame| match f {
            Frame::Text(t) => text && t.as_bytes() == bytes,
            Frame::Binary(b) => !text && b.as_slice() == bytes,
        };
        if let Some(i) = pool.iter().position(same) {
            pool.remove(i);
            // What was sent well before the match is lost, not late.
            pool.drain(..i.saturating_sub(WINDOW / 4));
            out.matched += 1;
        } else {
            let head = String::from_utf8_lossy(&bytes[..bytes.len().min(60)]).into_owned();
            out.first_unmatched = Some((at, head));
            return;
        }
    }
}
