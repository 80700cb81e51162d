//! Server counters, rendered in the Prometheus text format at `GET /metrics`.
//!
//! Everything is a relaxed atomic: the tick loop and the connection tasks
//! only ever add, and a scrape reads whatever is there.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use skirmish_core::ErrorCode;

mod timing;

pub use timing::{Reported, TimingMetrics};

/// Declares a fieldless enum whose variants carry their metric label, with
/// the list of every variant and the label of each derived from one place:
/// a variant cannot be missing from `/metrics`.
macro_rules! labelled {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[$vmeta:meta])* $variant:ident = $label:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $name { $($(#[$vmeta])* $variant,)+ }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The label in `/metrics`.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $label,)+ }
            }

            fn index(self) -> usize {
                self as usize
            }
        }
    };
}

labelled! {
    /// Why a connection ended.
    pub enum DisconnectReason {
        /// The client closed the connection or it dropped.
        Closed = "closed",
        /// The client did not read its messages in time.
        SlowConsumer = "slow_consumer",
        /// The client kept sending bad messages.
        TooManyErrors = "too_many_errors",
        /// No `hello` in time.
        HelloTimeout = "hello_timeout",
        /// The hello was refused (bad protocol, bad name, server full, address limit).
        Refused = "refused",
        /// A transport protocol error (e.g. a frame over the transport limit).
        ProtocolError = "protocol_error",
        /// The server shut down.
        Shutdown = "shutdown",
        /// The client's room failed and was closed.
        RoomFailed = "room_failed",
    }
}

labelled! {
    /// Why a connection was turned away before any session or room work.
    pub enum Refusal {
        /// The server holds its maximum of open connections (HTTP 503 on
        /// TCP; a refused QUIC handshake on WebTransport).
        TooManyConnections = "too_many_connections",
        /// The source address holds its maximum of open connections (HTTP 429
        /// on TCP; a refused QUIC handshake on WebTransport).
        TooManyFromAddress = "too_many_from_address",
        /// No complete HTTP request within the upgrade deadline.
        UpgradeTimeout = "upgrade_timeout",
        /// A plain HTTP connection outlived its deadline (e.g. a client that
        /// never reads the response).
        HttpTimeout = "http_timeout",
        /// A WebTransport session asked for a path other than `/wt`.
        WrongPath = "wrong_path",
        /// A validated WebTransport client's QUIC or HTTP/3 handshake failed
        /// (or it went away during it).
        HandshakeFailed = "handshake_failed",
    }
}

labelled! {
    /// Why a room's recording was refused or cut short (`--record`).
    pub enum RecordingRefusal {
        /// All recordings together reached `--record-total-bytes`.
        TotalBytes = "total_bytes",
        /// The disk's free space fell to `--record-min-free-bytes`.
        FreeSpace = "free_space",
        /// `--record-writers` rooms were already recording.
        Writers = "writers",
    }
}

/// Upper bounds of the tick duration histograms, in seconds. They reach
/// well past the 50 ms tick budget, so an overrun shows at its size rather
/// than only in `+Inf` (where every quantile reads as the top bound), and
/// they are fine within it (a big room's tick against 12 or 25 ms).
const TICK_BUCKETS: [f64; 21] = [
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.007_5, 0.01, 0.012, 0.015, 0.02,
    0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0,
];

/// How many counters and gauges have no labels.
const SIMPLE: usize = 12;

/// All server counters.
#[derive(Debug, Default)]
pub struct Metrics {
    /// The input clock's counters, summed over rooms.
    pub timing: TimingMetrics,
    players: AtomicU64,
    rooms: AtomicU64,
    /// Bumped whenever `players` or `rooms` changes, for whoever publishes
    /// the server's occupancy (the Agones counters).
    occupancy: tokio::sync::watch::Sender<()>,
    connections: AtomicU64,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    messages_in: AtomicU64,
    messages_out: AtomicU64,
    dropped_inputs: AtomicU64,
    recorded_bytes: AtomicU64,
    recordings_stopped: AtomicU64,
    ticks: AtomicU64,
    tick_micros_sum: AtomicU64,
    tick_buckets: [AtomicU64; TICK_BUCKETS.len()],
    sends: AtomicU64,
    send_micros_sum: AtomicU64,
    send_buckets: [AtomicU64; TICK_BUCKETS.len()],
    rejected: [AtomicU64; ErrorCode::ALL.len()],
    disconnects: [AtomicU64; DisconnectReason::ALL.len()],
    refused: [AtomicU64; Refusal::ALL.len()],
    webtransport_retries: AtomicU64,
    room_failures: AtomicU64,
    recordings_refused: [AtomicU64; RecordingRefusal::ALL.len()],
}

fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

fn get(counter: &AtomicU64) -> u64 {
    counter.load(Ordering::Relaxed)
}

impl Metrics {
    /// `--record`: a room wrote `bytes` of its recording.
    pub fn recorded(&self, bytes: usize) {
        add(&self.recorded_bytes, bytes as u64);
    }

    /// `--record`: a room stopped recording (its bound, or a write failed).
    pub fn recording_stopped(&self) {
        add(&self.recordings_stopped, 1);
    }

    /// A WebTransport client was asked to prove its address (QUIC Retry).
    pub fn webtransport_retry(&self) {
        add(&self.webtransport_retries, 1);
    }

    /// A room's tick panicked: the room was closed and its players told.
    pub fn room_failed(&self) {
        add(&self.room_failures, 1);
    }

    /// A room's recording was refused or cut short for `why`.
    pub fn recording_refused(&self, why: RecordingRefusal) {
        add(&self.recordings_refused[why.index()], 1);
    }

    /// A player joined (`+1`) or left (`-1`).
    pub fn players_changed(&self, joined: bool) {
        if joined {
            add(&self.players, 1);
        } else {
            self.players.fetch_sub(1, Ordering::Relaxed);
        }
        self.occupancy.send_replace(());
    }

    /// A room opened (`true`) or closed.
    pub fn rooms_changed(&self, opened: bool) {
        if opened {
            add(&self.rooms, 1);
        } else {
            self.rooms.fetch_sub(1, Ordering::Relaxed);
        }
        self.occupancy.send_replace(());
    }

    /// Wakes whenever the number of players or rooms changes.
    pub fn watch_occupancy(&self) -> tokio::sync::watch::Receiver<()> {
        self.occupancy.subscribe()
    }

    /// A WebSocket connection opened (`true`) or closed.
    pub fn connections_changed(&self, opened: bool) {
        if opened {
            add(&self.connections, 1);
        } else {
            self.connections.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// A message of `bytes` arrived.
    pub fn received(&self, bytes: usize) {
        add(&self.messages_in, 1);
        add(&self.bytes_in, bytes as u64);
    }

    /// A message of `bytes` was sent.
    pub fn sent(&self, bytes: usize) {
        add(&self.messages_out, 1);
        add(&self.bytes_out, bytes as u64);
    }

    /// `count` messages of `bytes` in all were sent.
    pub fn sent_many(&self, count: usize, bytes: usize) {
        add(&self.messages_out, count as u64);
        add(&self.bytes_out, bytes as u64);
    }

    /// A message was refused with `code`.
    pub fn rejected(&self, code: ErrorCode) {
        // `ALL` lists the codes in declaration order.
        add(&self.rejected[code as usize], 1);
    }

    /// Inputs were dropped because a player's input queue was full.
    pub fn dropped_inputs(&self, n: u64) {
        add(&self.dropped_inputs, n);
    }

    /// A connection ended for `reason`.
    pub fn disconnected(&self, reason: DisconnectReason) {
        add(&self.disconnects[reason.index()], 1);
    }

    /// A connection was turned away for `reason`.
    pub fn refused(&self, reason: Refusal) {
        add(&self.refused[reason.index()], 1);
    }

    /// How many connections were turned away for `reason`.
    pub fn refused_count(&self, reason: Refusal) -> u64 {
        get(&self.refused[reason.index()])
    }

    /// One room tick (the room's decision: step, encode) took `took`.
    pub fn tick(&self, took: Duration) {
        observe(&self.ticks, &self.tick_micros_sum, &self.tick_buckets, took);
    }

    /// Writing one tick's frames to the room's clients took `took`.
    pub fn tick_sent(&self, took: Duration) {
        observe(&self.sends, &self.send_micros_sum, &self.send_buckets, took);
    }

    /// Players in all rooms.
    pub fn players(&self) -> u64 {
        get(&self.players)
    }

    /// Open rooms.
    pub fn rooms(&self) -> u64 {
        get(&self.rooms)
    }

    /// How many messages were refused with `code`.
    pub fn rejected_count(&self, code: ErrorCode) -> u64 {
        get(&self.rejected[code as usize])
    }

    /// How many connections ended for `reason`.
    pub fn disconnect_count(&self, reason: DisconnectReason) -> u64 {
        get(&self.disconnects[reason.index()])
    }

    /// The counters and gauges without labels: name, help, type, value.
    fn simple(&self) -> [(&'static str, &'static str, &'static str, u64); SIMPLE] {
        [
            (
                "skirmish_players",
                "Players in all rooms.",
                "gauge",
                self.players(),
            ),
            ("skirmish_rooms", "Open rooms.", "gauge", get(&self.rooms)),
            (
                "skirmish_connections",
                "Open sessions, WebSocket and WebTransport.",
                "gauge",
                get(&self.connections),
            ),
            (
                "skirmish_received_bytes_total",
                "Bytes received in messages.",
                "counter",
                get(&self.bytes_in),
            ),
            (
                "skirmish_sent_bytes_total",
                "Bytes sent in messages.",
                "counter",
                get(&self.bytes_out),
            ),
            (
                "skirmish_received_messages_total",
                "Messages received.",
                "counter",
                get(&self.messages_in),
            ),
            (
                "skirmish_sent_messages_total",
                "Messages sent.",
                "counter",
                get(&self.messages_out),
            ),
            (
                "skirmish_dropped_inputs_total",
                "Inputs dropped because a queue was full.",
                "counter",
                get(&self.dropped_inputs),
            ),
            (
                "skirmish_recorded_bytes_total",
                "Bytes of room recordings written (--record).",
                "counter",
                get(&self.recorded_bytes),
            ),
            (
                "skirmish_recordings_stopped_total",
                "Rooms that stopped recording: their bound was reached or a write failed.",
                "counter",
                get(&self.recordings_stopped),
            ),
            (
                "skirmish_webtransport_retries_total",
                "QUIC Retries sent: WebTransport handshakes from addresses not yet validated.",
                "counter",
                get(&self.webtransport_retries),
            ),
            (
                "skirmish_room_failures_total",
                "Rooms whose tick panicked; each was closed and its players told.",
                "counter",
                get(&self.room_failures),
            ),
        ]
    }

    /// The Prometheus text exposition of every counter.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(4096);
        let mut gauge = |name: &str, help: &str, kind: &str, value: u64| {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
            );
        };
        let simple = self.simple();
        for (name, help, kind, value) in simple {
            gauge(name, help, kind, value);
        }

        labelled_family(
            &mut out,
            "skirmish_rejected_messages_total",
            "Messages refused, by error code.",
            "code",
            ErrorCode::ALL
                .iter()
                .map(|c| c.as_str())
                .zip(&self.rejected),
        );
        labelled_family(
            &mut out,
            "skirmish_disconnects_total",
            "Connections ended, by reason.",
            "reason",
            DisconnectReason::ALL
                .iter()
                .map(|r| r.as_str())
                .zip(&self.disconnects),
        );
        labelled_family(
            &mut out,
            "skirmish_refused_connections_total",
            "Connections turned away before any WebSocket work, by reason.",
            "reason",
            Refusal::ALL.iter().map(|r| r.as_str()).zip(&self.refused),
        );
        histogram(
            &mut out,
            "skirmish_tick_duration_seconds",
            "Time one room tick took: stepping the world and encoding its frames.",
            (&self.ticks, &self.tick_micros_sum, &self.tick_buckets),
        );
        histogram(
            &mut out,
            "skirmish_tick_send_seconds",
            "Time writing one tick's frames to the room's sockets took.",
            (&self.sends, &self.send_micros_sum, &self.send_buckets),
        );
        labelled_family(
            &mut out,
            "skirmish_recordings_refused_total",
            "Room recordings refused or cut short by a server-wide recording budget, by reason.",
            "reason",
            RecordingRefusal::ALL
                .iter()
                .map(|r| r.as_str())
                .zip(&self.recordings_refused),
        );
        self.timing.render(&mut out);
        out
    }
}

/// Counts one duration into a histogram.
fn observe(count: &AtomicU64, sum: &AtomicU64, buckets: &[AtomicU64], took: Duration) {
    add(count, 1);
    add(sum, took.as_micros() as u64);
    let secs = took.as_secs_f64();
    for (bound, counter) in TICK_BUCKETS.iter().zip(buckets) {
        if secs <= *bound {
            add(counter, 1);
        }
    }
}

/// One histogram of durations in the Prometheus text format.
fn histogram(
    out: &mut String,
    name: &str,
    help: &str,
    (count, sum, buckets): (&AtomicU64, &AtomicU64, &[AtomicU64]),
) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
    for (bound, counter) in TICK_BUCKETS.iter().zip(buckets) {
        let _ = writeln!(out, "{name}_bucket{{le=\"{bound}\"}} {}", get(counter));
    }
    let n = get(count);
    let _ = writeln!(
        out,
        "{name}_bucket{{le=\"+Inf\"}} {n}\n{name}_sum {}\n{name}_count {n}",
        get(sum) as f64 / 1e6
    );
}

/// One counter family with a label, every value of the label listed.
fn labelled_family<'a>(
    out: &mut String,
    name: &str,
    help: &str,
    label: &str,
    values: impl Iterator<Item = (&'a str, &'a AtomicU64)>,
) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
    for (value, counter) in values {
        let _ = writeln!(out, "{name}{{{label}=\"{value}\"}} {}", get(counter));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_prometheus_text() {
        let m = Metrics::default();
        m.players_changed(true);
        m.rejected(ErrorCode::TooLarge);
        m.tick(Duration::from_micros(300));
        m.disconnected(DisconnectReason::SlowConsumer);
        m.refused(Refusal::UpgradeTimeout);
        let text = m.render();
        assert!(text.contains("skirmish_refused_connections_total{reason=\"upgrade_timeout\"} 1\n"));
        assert!(text.contains("skirmish_players 1\n"));
        assert!(text.contains("skirmish_rejected_messages_total{code=\"too_large\"} 1\n"));
        assert!(text.contains("skirmish_disconnects_total{reason=\"slow_consumer\"} 1\n"));
        assert!(text.contains("skirmish_tick_duration_seconds_bucket{le=\"0.0005\"} 1\n"));
        assert!(text.contains("skirmish_tick_duration_seconds_bucket{le=\"0.00025\"} 0\n"));
        assert!(text.contains("skirmish_tick_duration_seconds_count 1\n"));
    }

    #[test]
    fn an_overrun_tick_shows_at_its_size_not_only_in_inf() {
        // A 20 Hz game's budget (the tank game's, the shipped cadence).
        let budget = 0.05;
        assert!(
            TICK_BUCKETS.iter().filter(|b| **b > budget).count() >= 4,
            "buckets past the {budget} s budget: {TICK_BUCKETS:?}"
        );
        assert!(TICK_BUCKETS.windows(2).all(|w| w[0] < w[1]));
        let m = Metrics::default();
        m.tick(Duration::from_millis(80));
        m.tick(Duration::from_secs(2));
        m.tick_sent(Duration::from_millis(300));
        let text = m.render();
        for (line, n) in [
            ("skirmish_tick_duration_seconds_bucket{le=\"0.05\"}", 0),
            ("skirmish_tick_duration_seconds_bucket{le=\"0.075\"}", 0),
            ("skirmish_tick_duration_seconds_bucket{le=\"0.1\"}", 1),
            ("skirmish_tick_duration_seconds_bucket{le=\"1\"}", 1),
            ("skirmish_tick_duration_seconds_bucket{le=\"+Inf\"}", 2),
            ("skirmish_tick_duration_seconds_sum", 2),
            ("skirmish_tick_send_seconds_bucket{le=\"0.25\"}", 0),
            ("skirmish_tick_send_seconds_bucket{le=\"0.5\"}", 1),
        ] {
            let want = if line.ends_with("_sum") {
                format!("{line} 2.08\n")
            } else {
                format!("{line} {n}\n")
            };
            assert!(text.contains(&want), "{want}in\n{text}");
        }
    }

    #[test]
    fn traffic_counters_are_named_received_and_sent() {
        let m = Metrics::default();
        m.received(10);
        m.sent(7);
        m.sent_many(2, 5);
        let text = m.render();
        for line in [
            "skirmish_received_bytes_total 10\n",
            "skirmish_received_messages_total 1\n",
            "skirmish_sent_bytes_total 12\n",
            "skirmish_sent_messages_total 3\n",
        ] {
            assert!(text.contains(line), "{line}in\n{text}");
        }
        for old in ["_in_total", "_out_total"] {
            assert!(!text.contains(old), "{old} in\n{text}");
        }
    }

    /// Prometheus' conventions, checked over the whole exposition after a
    /// late input (the value a histogram of signed slack made negative):
    /// counters end in `_total`, histograms in a base unit have ascending
    /// non-negative bounds ending in `+Inf` equal to `_count`, and no
    /// sample of a counter or histogram is negative.
    #[test]
    fn every_family_follows_prometheus_conventions() {
        let m = Metrics::default();
        let mut stats = skirmish_core::WorldStats {
            late_inputs: 1,
            ..skirmish_core::WorldStats::default()
        };
        stats.slack.record(35);
        stats.lateness.record(60);
        m.timing.add(&stats, &mut Reported::default());
        m.tick(Duration::from_millis(3));
        let text = m.render();
        let mut kinds = Vec::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').expect("# TYPE name kind");
                kinds.push((name.to_string(), kind.to_string()));
            }
        }
        assert!(kinds.len() >= 20, "{kinds:?}");
        let samples = |name: &str| -> Vec<(String, f64)> {
            text.lines()
                .filter(|l| !l.starts_with('#'))
                .filter_map(|l| l.split_once(' '))
                .filter(|(series, _)| {
                    series.strip_prefix(name).is_some_and(|rest| {
                        rest.is_empty()
                            || rest.starts_with('{')
                            || ["_bucket", "_sum", "_count"]
                                .iter()
                                .any(|s| rest.starts_with(s))
                    })
                })
                .map(|(series, value)| (series.to_string(), value.parse().expect("a number")))
                .collect()
        };
        for (name, kind) in &kinds {
            let found = samples(name);
            assert!(!found.is_empty(), "{name} has no samples");
            match kind.as_str() {
                "gauge" => {}
                "counter" => assert!(name.ends_with("_total"), "counter {name}"),
                "histogram" => {
                    assert!(
                        name.ends_with("_seconds") || name.ends_with("_bytes"),
                        "histogram {name} in a base unit"
                    );
                    let bounds: Vec<(f64, f64)> = found
                        .iter()
                        .filter_map(|(series, v)| {
                            let le = series.split_once("le=\"")?.1.split_once('"')?.0;
                            Some((le.parse().expect("a bound"), *v))
                        })
                        .collect();
                    assert!(bounds.windows(2).all(|w| w[0].0 < w[1].0), "{name}");
                    assert!(bounds.windows(2).all(|w| w[0].1 <= w[1].1), "{name}");
                    assert!(bounds.first().is_some_and(|b| b.0 >= 0.0), "{name}");
                    let (inf, total) = (
                        bounds.last().expect("+Inf"),
                        samples(&format!("{name}_count")),
                    );
                    assert!(inf.0.is_infinite() && inf.1 == total[0].1, "{name}");
                }
                other => panic!("{name}: unexpected type {other}"),
            }
            if kind != "gauge" {
                assert!(found.iter().all(|(_, v)| *v >= 0.0), "{name}: {found:?}");
            }
        }
        assert!(text.contains("skirmish_input_lateness_seconds_count 1\n"));
        assert!(text.contains("skirmish_input_slack_seconds_sum 0.035\n"));
    }

    #[test]
    fn error_codes_index_their_counters_in_order() {
        for (i, code) in ErrorCode::ALL.iter().enumerate() {
            assert_eq!(*code as usize, i, "{code}");
        }
    }

    #[test]
    fn every_label_is_rendered() {
        let text = Metrics::default().render();
        for code in ErrorCode::ALL {
            assert!(text.contains(&format!("{{code=\"{code}\"}} 0\n")), "{code}");
        }
        for reason in DisconnectReason::ALL {
            assert!(text.contains(&format!("{{reason=\"{}\"}} 0\n", reason.as_str())));
        }
        for reason in Refusal::ALL {
            assert!(text.contains(&format!("{{reason=\"{}\"}} 0\n", reason.as_str())));
        }
    }
}
