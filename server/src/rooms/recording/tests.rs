//! The recording files and the server-wide budgets.

use super::*;

fn settings(dir: &Path) -> RecordSettings {
    RecordSettings {
        dir: Some(dir.to_path_buf()),
        part_bytes: 10,
        max_bytes: 25,
        total_bytes: 1 << 30,
        min_free_bytes: 0,
        writers: 4,
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("skirmish-rec-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn parts_rotate_and_the_bound_stops_recording() {
    let dir = temp_dir("parts");
    let mut file = RecordFile::create(&settings(&dir), &dir, 3, "a/b c").expect("create");
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

#[test]
fn a_file_is_never_written_through_an_existing_name_or_link() {
    let dir = temp_dir("link");
    std::fs::create_dir_all(&dir).expect("dir");
    let target = dir.join("target");
    std::fs::write(&target, b"keep").expect("target");
    let planted = dir.join("planted.skrec");
    std::os::unix::fs::symlink(&target, &planted).expect("link");
    let err = create_new(&planted).expect_err("a link is not followed");
    assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
    assert_eq!(std::fs::read(&target).expect("target"), b"keep");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_total_budget_is_shared_by_every_room_and_refusals_are_counted() {
    let dir = temp_dir("total");
    let metrics = Arc::new(Metrics::default());
    let recorders = Recorders::new(
        RecordSettings {
            total_bytes: 100,
            max_bytes: 1 << 20,
            part_bytes: 1 << 20,
            ..settings(&dir)
        },
        dir.clone(),
        metrics.clone(),
    );
    let mut a = recorders.start(1, "a").expect("a records");
    let mut b = recorders.start(2, "b").expect("b records");
    for _ in 0..3 {
        a.next = vec![1; 30];
        a.send().expect("a's 90 bytes fit");
    }
    a.finish().join().expect("a's writer");
    // b's first chunk fits in what is left; its second does not.
    b.next = vec![2; 10];
    b.send().expect("b's 10 bytes fit");
    b.next = vec![2; 10];
    b.send().expect("handed over");
    b.finish().join().expect("b's writer");
    assert_eq!(recorders.written(), 100);
    assert!(metrics
        .render()
        .contains("skirmish_recordings_refused_total{reason=\"total_bytes\"} 1\n"));
    // With the total spent, a new room is refused at once.
    assert!(recorders.start(3, "c").is_err());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn writers_are_bounded_and_a_finished_writer_frees_its_slot() {
    let dir = temp_dir("writers");
    let metrics = Arc::new(Metrics::default());
    let recorders = Recorders::new(
        RecordSettings {
            writers: 2,
            ..settings(&dir)
        },
        dir.clone(),
        metrics.clone(),
    );
    let first = recorders.start(1, "a").expect("first");
    let _second = recorders.start(2, "b").expect("second");
    let refused = recorders.start(3, "c").expect_err("a third writer");
    assert!(refused.contains("--record-writers"), "{refused}");
    first.finish().join().expect("joined");
    recorders.start(4, "d").expect("the slot was given back");
    assert!(metrics
        .render()
        .contains("skirmish_recordings_refused_total{reason=\"writers\"} 1\n"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_disk_under_its_free_space_floor_records_nothing() {
    let dir = temp_dir("floor");
    std::fs::create_dir_all(&dir).expect("dir");
    let metrics = Arc::new(Metrics::default());
    let recorders = Recorders::new(
        RecordSettings {
            min_free_bytes: u64::MAX,
            ..settings(&dir)
        },
        dir.clone(),
        metrics.clone(),
    );
    let refused = recorders.start(1, "a").expect_err("no disk is that free");
    assert!(refused.contains("--record-min-free-bytes"), "{refused}");
    assert!(metrics
        .render()
        .contains("skirmish_recordings_refused_total{reason=\"free_space\"} 1\n"));
    let _ = std::fs::remove_dir_all(dir);
}
