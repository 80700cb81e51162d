//! Reading recordings from disk: a client recording is one file; a room's
//! may be split in parts (`FILE`, `FILE.1`, `FILE.2`, …, see the server's
//! `--record`), read here in order as one.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

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
