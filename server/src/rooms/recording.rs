//! `--record DIR`: each room's recording (core's `RoomRecorder` decides the
//! bytes) written to files under a size bound.
//!
//! A room's recording is `DIR/<number>-<room>-<unix ms>.skrec`, continued
//! in `….skrec.1`, `….skrec.2` once a part holds `--record-part-bytes`;
//! `cargo xtask replay-room` reads the parts in order. A part is never
//! deleted (a later part cannot be replayed without the ones before it), so
//! the bound is per room: past `--record-max-bytes` the room stops
//! recording, says so in the log, and is counted.
//!
//! The room hands each tick's bytes to a writer thread of its own through a
//! bounded channel ([`RecordSink`]), so a slow disk never holds the room's
//! lock or its tick: if the disk falls [`BACKLOG`] ticks behind, the room
//! stops recording (counted), as it does at its bound or on a write error.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::config::RecordSettings;
use crate::metrics::Metrics;

/// Ticks of recording that may wait for the disk (about 3 s).
pub(super) const BACKLOG: usize = 64;

/// A room's side of its recording: each tick's bytes go to the writer
/// thread; why it stopped, once it did.
#[derive(Debug)]
pub(super) struct RecordSink {
    tx: SyncSender<Vec<u8>>,
    /// Set by the writer thread when it stops.
    stopped: Arc<Mutex<Option<String>>>,
    /// The bytes of the next tick, taken from the room.
    pub(super) next: Vec<u8>,
}

impl RecordSink {
    /// Starts the writer thread of room `number` called `room`; the files
    /// are made there, not under the caller's locks.
    ///
    /// # Errors
    /// The thread cannot be started.
    pub(super) fn start(
        settings: &RecordSettings,
        dir: &Path,
        number: u64,
        room: &str,
        metrics: Arc<Metrics>,
    ) -> std::io::Result<RecordSink> {
        let (tx, rx) = sync_channel(BACKLOG);
        let stopped = Arc::new(Mutex::new(None));
        let (settings, dir, room_name) = (settings.clone(), dir.to_path_buf(), room.to_string());
        let why = stopped.clone();
        std::thread::Builder::new()
            .name(format!("record-{number}"))
            .spawn(move || {
                let reason = write_all(&settings, &dir, number, &room_name, &rx, &metrics);
                *why.lock().unwrap_or_else(PoisonError::into_inner) = Some(reason);
            })?;
        Ok(RecordSink {
            tx,
            stopped,
            next: Vec::new(),
        })
    }

    /// Hands over the bytes in [`RecordSink::next`].
    ///
    /// # Errors
    /// Recording stopped: the bound, a write error, or the disk behind.
    pub(super) fn send(&mut self) -> Result<(), String> {
        if let Some(why) = self
            .stopped
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        {
            return Err(why);
        }
        if self.next.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::take(&mut self.next);
        match self.tx.try_send(chunk) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => {
                Err(format!("the disk is {BACKLOG} ticks behind the room"))
            }
            Err(TrySendError::Disconnected(_)) => Err("the writer stopped".to_string()),
        }
    }
}

/// The writer thread: files made, chunks written until the room is gone
/// (the channel closes) or something stops it; why it ended.
fn write_all(
    settings: &RecordSettings,
    dir: &Path,
    number: u64,
    room: &str,
    rx: &Receiver<Vec<u8>>,
    metrics: &Metrics,
) -> String {
    let mut file = match RecordFile::create(settings, dir, number, room) {
        Ok(file) => file,
        Err(e) => return format!("cannot create a file in {}: {e}", dir.display()),
    };
    tracing::info!(room, file = %file.path().display(), "recording");
    while let Ok(chunk) = rx.recv() {
        if let Err(why) = file.write(&chunk) {
            return why;
        }
        metrics.recorded(chunk.len());
    }
    "the room closed".to_string()
}

/// One room's recording files.
#[derive(Debug)]
pub(super) struct RecordFile {
    first: PathBuf,
    part: u32,
    file: File,
    /// Bytes in the current part and in all parts.
    in_part: u64,
    total: u64,
    part_limit: u64,
    total_limit: u64,
}

/// A file name from a room's name: letters, digits, `-` and `_` kept, the
/// rest `_`, at most 48 characters.
fn file_stem(number: u64, room: &str) -> String {
    let clean: String = room
        .chars()
        .take(48)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("{number}-{clean}-{ms}")
}

impl RecordFile {
    /// Starts the files of room `number` called `room`.
    ///
    /// # Errors
    /// The directory or the first file cannot be made.
    pub(super) fn create(
        settings: &RecordSettings,
        dir: &Path,
        number: u64,
        room: &str,
    ) -> std::io::Result<RecordFile> {
        std::fs::create_dir_all(dir)?;
        let first = dir.join(format!("{}.skrec", file_stem(number, room)));
        let file = File::create(&first)?;
        Ok(RecordFile {
            first,
            part: 0,
            file,
            in_part: 0,
            total: 0,
            part_limit: settings.part_bytes.max(1),
            total_limit: settings.max_bytes,
        })
    }

    /// The first part's path.
    pub(super) fn path(&self) -> &Path {
        &self.first
    }

    /// Writes one tick's bytes, in a new part if this one is full.
    ///
    /// # Errors
    /// A write failed, or the room's bound is reached: recording stops.
    pub(super) fn write(&mut self, chunk: &[u8]) -> Result<(), String> {
        if chunk.is_empty() {
            return Ok(());
        }
        let len = chunk.len() as u64;
        if self.total + len > self.total_limit {
            return Err(format!(
                "the room's recording reached --record-max-bytes ({} bytes)",
                self.total_limit
            ));
        }
        if self.in_part > 0 && self.in_part + len > self.part_limit {
            self.part += 1;
            let mut next = self.first.clone().into_os_string();
            next.push(format!(".{}", self.part));
            self.file = File::create(&next).map_err(|e| format!("cannot start a part: {e}"))?;
            self.in_part = 0;
        }
        self.file
            .write_all(chunk)
            .map_err(|e| format!("cannot write: {e}"))?;
        self.in_part += len;
        self.total += len;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_rotate_and_the_bound_stops_recording() {
        let dir = std::env::temp_dir().join(format!("skirmish-rec-{}", std::process::id()));
        let settings = RecordSettings {
            dir: Some(dir.clone()),
            part_bytes: 10,
            max_bytes: 25,
        };
        let mut file = RecordFile::create(&settings, &dir, 3, "a/b c").expect("create");
        let name = file
            .path()
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        assert!(name.starts_with("3-a_b_c-"), "{name}");
        for chunk in [&b"0123456"[..], b"789", b"abcdefgh"] {
            file.write(chunk).expect("written");
        }
        assert!(file.write(b"too much").is_err());
        let first = std::fs::read(file.path()).expect("part 0");
        let mut second = file.path().as_os_str().to_owned();
        second.push(".1");
        let second = std::fs::read(second).expect("part 1");
        assert_eq!(first, b"0123456789");
        assert_eq!(second, b"abcdefgh");
        let _ = std::fs::remove_dir_all(dir);
    }
}
