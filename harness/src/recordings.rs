//! Reading recordings from disk: a client recording is one file; a room's
//! may be split in parts (`FILE`, `FILE.1`, `FILE.2`, …, see the server's
//! `--record`), read here in order as one. And [`side_by_side`]: a
//! client's recording checked against its room's, streaming (memory
//! bounded whatever their length).

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use skirmish_core::{control, decode_server, open_client_of, replay_room_of};
use skirmish_core::{Call, Calls, ClientGame, Frame, Networked, PlayerId, RoomCall};
use skirmish_core::{ServerGame, ServerMessage};

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

/// Checks that every frame a client's recording received was sent to it by
/// the room in the server's recording: each connection is matched with the
/// player its `welcome` names; frames a datagram transport lost may be
/// missing and datagrams may come up to 64 frames out of order, but no
/// frame may differ.
///
/// It streams: a first pass over the client's recording notes where each
/// connection starts and which player it was; then the room is replayed
/// once, and each frame it sends such a player is matched at once against
/// that connection's received frames, read from where they lie. At most
/// `WINDOW` (64) sent frames per player in the room are held at a time, and a
/// few words per connection, however long the recordings.
///
/// # Errors
/// The recordings do not read, the room's does not replay, or no
/// connection of the client joined that room.
pub fn side_by_side<G: ServerGame + ClientGame>(client: &[u8], room: &[u8]) -> Result<SideBySide> {
    let (config, calls) = open_client_of::<G>(client)?;
    let (claims, with_frames) = connections::<G>(calls)?;
    let name = config.name;
    let mut claims = claims;
    let mut watching: BTreeMap<PlayerId, Matcher<'_, G>> = BTreeMap::new();
    let mut done: BTreeMap<usize, Tally> = BTreeMap::new();
    replay_room_of::<G>(room, |call, out| {
        if let RoomCall::Join(id, joiner, _) = call {
            if *joiner == name {
                if let Some((index, start)) = claims.remove(id) {
                    watching.insert(*id, Matcher::new(index, start));
                }
            }
        }
        // Own echoes (half a tick later) were sent too.
        for &(to, i) in out.deliveries().iter().chain(out.later()) {
            if let (Some(m), Some(frame)) = (watching.get_mut(&to), out.frames().get(i)) {
                m.sent(frame);
            }
        }
        // Nothing more is sent to a player who left: its connection is
        // judged now, and its window let go.
        if let RoomCall::Leave(id) = call {
            if let Some(m) = watching.remove(id) {
                done.insert(m.index, m.finish());
            }
        }
    })
    .map_err(|e| anyhow::anyhow!("the room's recording: {e}"))?;
    for m in std::mem::take(&mut watching).into_values() {
        done.insert(m.index, m.finish());
    }
    let mut out = SideBySide {
        name,
        ..SideBySide::default()
    };
    // In the client's order, up to the first connection with a frame the
    // room never sent.
    let mut seen = with_frames;
    for (index, tally) in done {
        out.connections += 1;
        out.received += tally.received;
        out.sent += tally.sent;
        out.matched += tally.matched;
        out.errors += tally.errors;
        out.past_the_end += tally.past_the_end;
        if tally.first_unmatched.is_some() {
            out.first_unmatched = tally.first_unmatched;
            seen = index + 1;
            break;
        }
    }
    out.elsewhere = seen.saturating_sub(out.connections);
    anyhow::ensure!(
        out.connections > 0,
        "no connection of {:?} joined this room ({} elsewhere)",
        out.name,
        out.elsewhere
    );
    Ok(out)
}

/// Where each connection that received frames starts (its index among
/// them and the calls from its start), by the player its `welcome` named
/// (the first connection to name a player has it); and how many received
/// frames.
type Claims<'a, G> = BTreeMap<PlayerId, (usize, Calls<'a, G>)>;

/// The first pass over a client's recording: see [`Claims`].
fn connections<G: ClientGame>(mut calls: Calls<'_, G>) -> Result<(Claims<'_, G>, usize)> {
    let mut claims = Claims::new();
    let mut with_frames = 0;
    loop {
        let start = calls.clone();
        let (mut received, mut player) = (false, None);
        let mut ended = true;
        for call in calls.by_ref() {
            match call? {
                (_, Call::Text(bytes, _)) => {
                    received = true;
                    if player.is_none() {
                        player = welcome(decoded::<G>(true, bytes));
                    }
                }
                (_, Call::Binary(bytes, _)) => {
                    received = true;
                    if player.is_none() {
                        player = welcome(decoded::<G>(false, bytes));
                    }
                }
                (_, Call::Disconnected(_)) => {
                    ended = false;
                    break;
                }
                _ => {}
            }
        }
        if received {
            if let Some(p) = player {
                claims.entry(p).or_insert((with_frames, start));
            }
            with_frames += 1;
        }
        if ended {
            return Ok((claims, with_frames));
        }
    }
}

/// A control message the client received, JSON text or binary (`None`
/// for a snapshot or anything unreadable).
fn decoded<G: Networked>(text: bool, bytes: &[u8]) -> Option<ServerMessage<G>> {
    if text {
        decode_server::<G>(std::str::from_utf8(bytes).ok()?).ok()
    } else if control::is_server_control(bytes) {
        control::decode_server::<G>(bytes).ok()
    } else {
        None
    }
}

/// The player a `welcome` names.
fn welcome<G: Networked>(message: Option<ServerMessage<G>>) -> Option<PlayerId> {
    match message? {
        ServerMessage::Welcome { player_id, .. } => Some(player_id),
        _ => None,
    }
}

/// One connection's counts.
#[derive(Debug, Default)]
struct Tally {
    received: usize,
    sent: usize,
    matched: usize,
    errors: usize,
    past_the_end: usize,
    first_unmatched: Option<(usize, String)>,
}

/// One connection matched against what the room sends its player, as the
/// room sends it: each received frame is looked for among the next
/// [`WINDOW`] frames sent, so one is judged once that many wait (or the
/// room sends no more).
struct Matcher<'a, G: ClientGame> {
    index: usize,
    /// The connection's calls not yet read.
    received: Calls<'a, G>,
    /// Sent and not yet matched, oldest first: at most [`WINDOW`].
    pool: VecDeque<Frame>,
    /// No more received frames are judged: the connection ended, or one
    /// was never sent.
    over: bool,
    tally: Tally,
}

impl<'a, G: ClientGame> Matcher<'a, G> {
    fn new(index: usize, received: Calls<'a, G>) -> Matcher<'a, G> {
        Matcher {
            index,
            received,
            pool: VecDeque::with_capacity(WINDOW),
            over: false,
            tally: Tally::default(),
        }
    }

    /// The room sent the player `frame`.
    fn sent(&mut self, frame: &Frame) {
        self.tally.sent += 1;
        if self.over {
            return;
        }
        self.pool.push_back(frame.clone());
        while self.pool.len() >= WINDOW && !self.over {
            self.judge_next();
        }
    }

    /// The room sends no more: the rest of the connection is judged.
    fn finish(mut self) -> Tally {
        while !self.over {
            self.judge_next();
        }
        self.tally
    }

    /// Judges the connection's next received frame (counting the `error`
    /// frames before it, which a session sends itself).
    fn judge_next(&mut self) {
        let (at, text, bytes) = loop {
            let (at, text, bytes) = match self.received.next() {
                Some(Ok((at, Call::Text(bytes, _)))) => (at, true, bytes),
                Some(Ok((at, Call::Binary(bytes, _)))) => (at, false, bytes),
                Some(Ok((_, Call::Disconnected(_))) | Err(_)) | None => {
                    self.over = true;
                    self.pool.clear();
                    return;
                }
                Some(Ok(_)) => continue,
            };
            if matches!(decoded::<G>(text, bytes), Some(ServerMessage::Error { .. })) {
                self.tally.errors += 1;
            } else {
                break (at, text, bytes);
            }
        };
        self.tally.received += 1;
        if self.pool.is_empty() {
            self.tally.past_the_end += 1;
            return;
        }
        let same = |f: &Frame| match f {
            Frame::Text(t) => text && t.as_bytes() == bytes,
            Frame::Binary(b) => !text && b.as_slice() == bytes,
        };
        if let Some(i) = self.pool.iter().position(same) {
            self.pool.remove(i);
            // What was sent well before the match is lost, not late.
            self.pool.drain(..i.saturating_sub(WINDOW / 4));
            self.tally.matched += 1;
        } else {
            let head = String::from_utf8_lossy(&bytes[..bytes.len().min(60)]).into_owned();
            self.tally.first_unmatched = Some((at, head));
            self.over = true;
            self.pool.clear();
        }
    }
}
