//! `--record DIR`: each room's recording (core's `RoomRecorder` decides the
//! bytes) written to files under budgets for the room and for the server.
//!
//! A room's recording is `DIR/<number>-<room>-<unix ms>.skrec`, continued
//! in `….skrec.1`, `….skrec.2` once a part holds `--record-part-bytes`;
//! `cargo xtask replay-room` reads the parts in order. A part is never
//! deleted (a later part cannot be replayed without the ones before it), so
//! the budgets refuse rather than rotate: past `--record-max-bytes` a room
//! stops recording; past `--record-total-bytes` written by all rooms, below
//! `--record-min-free-bytes` free on the disk, or with `--record-writers`
//! rooms recording already, no room records (each refusal counted in
//! `skirmish_recordings_refused_total`). What was written stays readable: a
//! tick's bytes are whole records, and a write that fails half-way (a full
//! disk) is cut back to the tick before it.
//!
//! Files are created new (`O_CREAT | O_EXCL`): an existing file, or a
//! symbolic link planted under the file's name, is never written through.
//!
//! The room hands each tick's bytes to a writer thread of its own through a
//! bounded channel ([`RecordSink`]), so a slow disk never holds the room's
//! lock or its tick: if the disk falls [`BACKLOG`] ticks behind, the room
//! stops recording (counted), as it does at a budget or on a write error.
//! When the room ends it sends its end record and lets go of the channel;
//! the writer then syncs the file to disk, and shutdown waits for it.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::config::RecordSettings;
use crate::metrics::{Metrics, RecordingRefusal};

/// Ticks of recording that may wait for the disk (about 3 s).
pub(super) const BACKLOG: usize = 64;

/// Bytes written between two looks at the disk's free space.
const FREE_SPACE_EVERY: u64 = 256 * 1024;

/// What every room's recording shares: the settings, the bytes written so
/// far by all of them and the writer threads running.
#[derive(Debug)]
pub struct Recorders {
    settings: RecordSettings,
    dir: PathBuf,
    metrics: Arc<Metrics>,
    written: AtomicU64,
    /// Set the first time the total refused a room's bytes: from then on
    /// no room records, rather than rooms filling what is left by turns.
    spent: AtomicBool,
    writers: AtomicUsize,
}

/// A room's side of its recording: each tick's bytes go to the writer
/// thread; why it stopped, once it did.
#[derive(Debug)]
pub(super) struct RecordSink {
    tx: SyncSender<Vec<u8>>,
    /// Set by the writer thread when it stops.
    stopped: Arc<Mutex<Option<String>>>,
    thread: JoinHandle<()>,
    /// The bytes of the next tick, taken from the room.
    pub(super) next: Vec<u8>,
}

/// Counts a writer thread until it ends, however it ends.
struct WriterSlot(Arc<Recorders>);

impl Drop for WriterSlot {
    fn drop(&mut self) {
        self.0.writers.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Recorders {
    /// The shared budgets of recordings written under `dir`.
    pub(super) fn new(settings: RecordSettings, dir: PathBuf, metrics: Arc<Metrics>) -> Arc<Self> {
        Arc::new(Recorders {
            settings,
            dir,
            metrics,
            written: AtomicU64::new(0),
            spent: AtomicBool::new(false),
            writers: AtomicUsize::new(0),
        })
    }

    /// Bytes written by every room so far.
    #[cfg(test)]
    pub(super) fn written(&self) -> u64 {
        self.written.load(Ordering::Acquire)
    }

    /// Starts the writer thread of room `number` called `room`; the files
    /// are made there, not under the caller's locks.
    ///
    /// # Errors
    /// A budget refuses (counted), or the thread cannot be started.
    pub(super) fn start(self: &Arc<Self>, number: u64, room: &str) -> Result<RecordSink, String> {
        let max = self.settings.writers;
        if self
            .writers
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .is_err()
        {
            self.metrics.recording_refused(RecordingRefusal::Writers);
            return Err(format!(
                "{max} rooms are recording already (--record-writers)"
            ));
        }
        let slot = WriterSlot(self.clone());
        let total = self.settings.total_bytes;
        let refused = if self.spent.load(Ordering::Acquire) {
            Err((
                RecordingRefusal::TotalBytes,
                format!("all recordings together reached --record-total-bytes ({total} bytes)"),
            ))
        } else {
            self.check_free_space()
        };
        if let Err((why, reason)) = refused {
            self.metrics.recording_refused(why);
            return Err(reason);
        }
        let (tx, rx) = sync_channel(BACKLOG);
        let stopped = Arc::new(Mutex::new(None));
        let why = stopped.clone();
        let room_name = room.to_string();
        let thread = std::thread::Builder::new()
            .name(format!("record-{number}"))
            .spawn(move || {
                let recorders = slot.0.clone();
                let reason = recorders.write_all(number, &room_name, &rx);
                *why.lock().unwrap_or_else(PoisonError::into_inner) = Some(reason);
                drop(slot);
            })
            .map_err(|e| format!("cannot start a writer thread: {e}"))?;
        Ok(RecordSink {
            tx,
            stopped,
            thread,
            next: Vec::new(),
        })
    }

    /// Whether `len` more bytes fit the server's budgets, taking them if
    /// so; the free space is looked at when `look` says so.
    fn take(&self, len: u64, look: bool) -> Result<(), (RecordingRefusal, String)> {
        let total = self.settings.total_bytes;
        if self
            .written
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                w.checked_add(len).filter(|&n| n <= total)
            })
            .is_err()
        {
            self.spent.store(true, Ordering::Release);
            return Err((
                RecordingRefusal::TotalBytes,
                format!("all recordings together reached --record-total-bytes ({total} bytes)"),
            ));
        }
        if look {
            if let Err(refused) = self.check_free_space() {
                self.give_back(len);
                return Err(refused);
            }
        }
        Ok(())
    }

    /// Gives back bytes taken but not written.
    fn give_back(&self, len: u64) {
        self.written.fetch_sub(len, Ordering::AcqRel);
    }

    /// Whether the disk keeps its free-space floor.
    fn check_free_space(&self) -> Result<(), (RecordingRefusal, String)> {
        let floor = self.settings.min_free_bytes;
        if floor == 0 {
            return Ok(());
        }
        match free_bytes(&self.dir) {
            Some(free) if free < floor => Err((
                RecordingRefusal::FreeSpace,
                format!(
                    "{} has {free} bytes free, under --record-min-free-bytes ({floor})",
                    self.dir.display()
                ),
            )),
            _ => Ok(()),
        }
    }

    /// The writer thread: files made, chunks written until the room is
    /// gone (the channel closes) or something stops it; why it ended.
    fn write_all(&self, number: u64, room: &str, rx: &Receiver<Vec<u8>>) -> String {
        let mut file = match RecordFile::create(&self.settings, &self.dir, number, room) {
            Ok(file) => file,
            Err(e) => return format!("cannot create a file in {}: {e}", self.dir.display()),
        };
        tracing::info!(room, file = %file.path().display(), "recording");
        let mut since_look = FREE_SPACE_EVERY;
        while let Ok(chunk) = rx.recv() {
            let len = chunk.len() as u64;
            let look = since_look >= FREE_SPACE_EVERY;
            if let Err((why, reason)) = self.take(len, look) {
                self.metrics.recording_refused(why);
                file.close();
                return reason;
            }
            since_look = if look { len } else { since_look + len };
            if let Err(why) = file.write(&chunk) {
                self.give_back(len);
                file.close();
                return why;
            }
            self.metrics.recorded(chunk.len());
        }
        file.close();
        "the room closed".to_string()
    }
}

/// Free bytes for an unprivileged writer on the disk holding `dir`, if it
/// can be told.
/// (The folder may not exist yet: the disk of its nearest existing parent.)
fn free_bytes(dir: &Path) -> Option<u64> {
    let stat = dir.ancestors().find_map(|d| {
        rustix::fs::statvfs(if d.as_os_str().is_empty() {
            Path::new(".")
        } else {
            d
        })
        .ok()
    })?;
    Some(stat.f_bavail.saturating_mul(stat.f_frsize))
}

impl RecordSink {
    /// Hands over the bytes in [`RecordSink::next`].
    ///
    /// # Errors
    /// Recording stopped: a budget, a write error, or the disk behind.
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

    /// Lets the writer finish what was sent, sync it and end; the thread,
    /// to wait for.
    pub(super) fn finish(self) -> JoinHandle<()> {
        drop(self.tx);
        self.thread
    }
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

/// A new file at `path`: never an existing one, never through a link.
fn create_new(path: &Path) -> std::io::Result<File> {
    OpenOptions::new().write(true).create_new(true).open(path)
}

impl RecordFile {
    /// Starts the files of room `number` called `room`.
    ///
    /// # Errors
    /// The directory or the first file cannot be made (a file or link by
    /// that name exists already included).
    pub(super) fn create(
        settings: &RecordSettings,
        dir: &Path,
        number: u64,
        room: &str,
    ) -> std::io::Result<RecordFile> {
        std::fs::create_dir_all(dir)?;
        let first = dir.join(format!("{}.skrec", file_stem(number, room)));
        let file = create_new(&first)?;
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

    /// Writes one tick's bytes, in a new part if this one is full; a write
    /// that fails leaves the part as it was before it.
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
            let mut next = self.first.clone().into_os_string();
            next.push(format!(".{}", self.part + 1));
            self.file =
                create_new(Path::new(&next)).map_err(|e| format!("cannot start a part: {e}"))?;
            self.part += 1;
            self.in_part = 0;
        }
        if let Err(e) = self.file.write_all(chunk) {
            // Half a record would make the rest unreadable: cut it off.
            let _ = self.file.set_len(self.in_part);
            return Err(format!("cannot write: {e}"));
        }
        self.in_part += len;
        self.total += len;
        Ok(())
    }

    /// Puts what was written on the disk, as far as the disk says; a
    /// recording that never got its header is removed (it would not read).
    fn close(&mut self) {
        if self.total == 0 {
            let _ = std::fs::remove_file(&self.first);
        } else if let Err(e) = self.file.sync_all() {
            tracing::warn!(file = %self.first.display(), "cannot sync the recording: {e}");
        }
    }
}

#[cfg(test)]
mod tests;
