//! Reading recordings from disk: a client recording is one file; a room's
//! may be split in parts (`FILE`, `FILE.1`, `FILE.2`, …, see the server's
//! `--record`), read here in order as one.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use skirmish_core::Call;

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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SideBySide {
    /// The client's name, which its joins in the room carry.
    pub name: String,
    /// Frames the client received.
    pub received: usize,
    /// Frames the room sent to it.
    pub sent: usize,
    /// Of those received, how many the room sent, in order.
    pub matched: usize,
    /// The first received frame the room never sent (in order): its byte
    /// offset in the client's recording and its first bytes.
    pub first_unmatched: Option<(usize, String)>,
}

/// Checks that every frame a client's recording received was sent to it,
/// in order, by the room in the server's recording (frames the transport
/// lost may be missing; none may differ). Both recordings are replayed.
///
/// # Errors
/// Either recording does not replay, or names no such client.
pub fn side_by_side(client: &[u8], room: &[u8]) -> Result<SideBySide> {
    let (config, calls) = skirmish_core::open_client(client)?;
    let mut received = Vec::new();
    for call in calls {
        if let (at, Call::Text(bytes, _) | Call::Binary(bytes, _)) = call? {
            received.push((at, bytes));
        }
    }
    let (_, sent) = skirmish_core::replay_room_for(room, &config.name)
        .map_err(|e| anyhow::anyhow!("the room's recording: {e}"))?;
    anyhow::ensure!(
        !sent.is_empty(),
        "nobody called {:?} joined the room",
        config.name
    );
    let mut next = sent.iter();
    let mut matched = 0;
    let mut first_unmatched = None;
    for (at, bytes) in &received {
        let found = next.any(|f| match f {
            skirmish_core::Frame::Text(t) => t.as_bytes() == *bytes,
            skirmish_core::Frame::Binary(b) => b.as_slice() == *bytes,
        });
        if !found {
            let head: String = String::from_utf8_lossy(&bytes[..bytes.len().min(60)]).into();
            first_unmatched = Some((*at, head));
            break;
        }
        matched += 1;
    }
    Ok(SideBySide {
        name: config.name,
        received: received.len(),
        sent: sent.len(),
        matched,
        first_unmatched,
    })
}
