//! The Grafana dashboard (`deploy/grafana/skirmish.json`) asks only for
//! series a real server exports: every `skirmish_*` metric name in every
//! query is a sample name in `GET /metrics`, and every exact label matcher
//! (`reason="slow_consumer"`) names a label value found there. Its model is
//! what the README promises: uid `skirmish`, a 10 s refresh, and every query
//! on the Prometheus data source chosen in `${datasource}`.
//!
//! Then the dashboard meets a real Prometheus: while bots play, Debian's
//! Prometheus scrapes the server every second, and every panel's query and
//! the `$instance` variable are evaluated through its HTTP API, with
//! Grafana's variables filled in as a dashboard at its defaults would. Each
//! must parse and return data; [`PANELS`] says for each panel what feeds it.

mod prometheus_support;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use prometheus_support::{Answer, Prometheus, JOB};
use serde_json::Value;
use skirmish_core::{Encoding, MAX_AHEAD_TICKS};
use skirmish_tests::bot::{run_bot, BotOptions, BotTransport};
use skirmish_tests::script::{Script, Wander};
use skirmish_tests::{http_get, input, metric, next_source, server, test_config, Client};

fn dashboard_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace root")
        .join("deploy/grafana/skirmish.json")
}

fn dashboard() -> Result<Value> {
    let path = dashboard_path();
    let text = fs::read_to_string(&path).with_context(|| path.display().to_string())?;
    serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))
}

/// One Prometheus query of the dashboard and where it sits.
struct Query {
    /// The panel's title, or the variable's name.
    place: String,
    promql: String,
}

/// Every query: the panels' `expr`s and the query variables' definitions.
fn queries(dashboard: &Value) -> Vec<Query> {
    fn walk(node: &Value, place: &str, out: &mut Vec<Query>) {
        match node {
            Value::Object(map) => {
                let place = map.get("title").and_then(Value::as_str).unwrap_or(place);
                let variable = map.get("type").and_then(Value::as_str) == Some("query");
                let name = map.get("name").and_then(Value::as_str);
                if let (true, Some(name), Some(definition)) = (
                    variable,
                    name,
                    map.get("definition").and_then(Value::as_str),
                ) {
                    out.push(Query {
                        place: format!("variable ${name}"),
                        promql: definition.to_string(),
                    });
                }
                for (key, value) in map {
                    match (key.as_str(), value) {
                        ("expr", Value::String(promql)) => out.push(Query {
                            place: place.to_string(),
                            promql: promql.clone(),
                        }),
                        _ => walk(value, place, out),
                    }
                }
            }
            Value::Array(items) => {
                for item in items {
                    walk(item, place, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(dashboard, "the dashboard", &mut out);
    out
}

/// A metric a query names, with the exact (`=`) label matchers written
/// beside it; matchers on Grafana variables (`$instance`) are left out.
#[derive(Debug, PartialEq, Eq)]
struct Selector {
    metric: String,
    labels: Vec<(String, String)>,
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == ':'
}

/// The index just past the string literal that opens at `start`.
fn skip_string(chars: &[char], start: usize) -> usize {
    let quote = chars[start];
    let mut i = start + 1;
    while i < chars.len() && chars[i] != quote {
        i += if chars[i] == '\\' { 2 } else { 1 };
    }
    i + 1
}

/// The `label op "value"` pairs of a brace list whose `{` is just before
/// `start`, as (label, op, value), and the index past its `}`. Serves both
/// query matchers and the labels of exposition lines (`{le="0.05"}`).
fn label_list(chars: &[char], start: usize) -> (Vec<(String, String, String)>, usize) {
    let mut found = Vec::new();
    let mut i = start;
    loop {
        while i < chars.len() && (chars[i].is_whitespace() || chars[i] == ',') {
            i += 1;
        }
        if i >= chars.len() || chars[i] == '}' {
            return (found, i + 1);
        }
        let label_start = i;
        while i < chars.len() && is_ident(chars[i]) {
            i += 1;
        }
        let label: String = chars[label_start..i].iter().collect();
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        let op_start = i;
        while i < chars.len() && "=!~".contains(chars[i]) {
            i += 1;
        }
        let op: String = chars[op_start..i].iter().collect();
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        if label.is_empty() || op.is_empty() || !matches!(chars.get(i), Some('"' | '\'')) {
            // Not a label list this reader knows: skip to its end.
            while i < chars.len() && chars[i] != '}' {
                i += 1;
            }
            return (found, i + 1);
        }
        let end = skip_string(chars, i);
        let value_end = (end - 1).min(chars.len()).max(i + 1);
        let value: String = chars[i + 1..value_end].iter().collect();
        found.push((label, op, value.replace("\\\"", "\"")));
        i = end;
    }
}

/// Every `skirmish_*` metric a Prometheus query reads.
fn selectors(promql: &str) -> Vec<Selector> {
    let chars: Vec<char> = promql.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '"' || chars[i] == '\'' || chars[i] == '`' {
            i = skip_string(&chars, i);
            continue;
        }
        if !is_ident(chars[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && is_ident(chars[i]) {
            i += 1;
        }
        let word: String = chars[start..i].iter().collect();
        if !word.starts_with("skirmish_") {
            continue;
        }
        let mut next = i;
        while next < chars.len() && chars[next].is_whitespace() {
            next += 1;
        }
        let mut labels = Vec::new();
        if chars.get(next) == Some(&'{') {
            let (list, end) = label_list(&chars, next + 1);
            labels = list
                .into_iter()
                .filter(|(_, op, value)| op == "=" && !value.contains('$'))
                .map(|(label, _, value)| (label, value))
                .collect();
            i = end;
        }
        found.push(Selector {
            metric: word,
            labels,
        });
    }
    found
}

/// The sample lines of Prometheus text: each metric name with the label
/// sets it is exported with.
fn samples(text: &str) -> BTreeMap<String, Vec<BTreeMap<String, String>>> {
    let mut out: BTreeMap<String, Vec<BTreeMap<String, String>>> = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let chars: Vec<char> = line.chars().collect();
        let end = chars
            .iter()
            .position(|c| !is_ident(*c))
            .unwrap_or(chars.len());
        let name: String = chars[..end].iter().collect();
        let labels = if chars.get(end) == Some(&'{') {
            label_list(&chars, end + 1)
                .0
                .into_iter()
                .map(|(label, _, value)| (label, value))
                .collect()
        } else {
            BTreeMap::new()
        };
        out.entry(name).or_default().push(labels);
    }
    out
}

#[tokio::test]
async fn every_series_the_dashboard_queries_is_exported() -> Result<()> {
    let dashboard = dashboard()?;
    let queries = queries(&dashboard);
    assert!(
        queries.len() >= 20,
        "only {} queries found in {}: has the model's layout changed?",
        queries.len(),
        dashboard_path().display()
    );

    // A seated player: a room exists and ticks, so the tick histograms have
    // samples. (`render` writes every family, empty histograms included,
    // with all their buckets, so nothing else needs to happen first.)
    let srv = server(test_config())?;
    let mut client = Client::join(srv.addr, "ana", None).await?;
    client.snapshot().await?;
    let text = http_get(srv.addr, "/metrics").await?;
    let exported = samples(&text);
    assert!(
        exported.keys().any(|name| name == "skirmish_players"),
        "/metrics did not parse:\n{text}"
    );

    let mut missing = Vec::new();
    let mut used = BTreeSet::new();
    for Query { place, promql } in &queries {
        let read = selectors(promql);
        if read.is_empty() {
            missing.push(format!("{place}: no skirmish_ metric in `{promql}`"));
        }
        for Selector { metric, labels } in read {
            used.insert(metric.clone());
            let Some(series) = exported.get(&metric) else {
                missing.push(format!("{metric} (in {place}: `{promql}`)"));
                continue;
            };
            for (label, value) in labels {
                if !series.iter().any(|s| s.get(&label) == Some(&value)) {
                    missing.push(format!(
                        "{metric}{{{label}=\"{value}\"}} (in {place}: `{promql}`)"
                    ));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "the dashboard queries series GET /metrics does not export:\n{}\n\nexported: {:?}",
        missing.join("\n"),
        exported.keys().collect::<Vec<_>>()
    );
    assert!(used.len() >= 10, "{used:?}");
    srv.shutdown().await
}

/// Collects below `node` every data source other than the `${datasource}`
/// variable (or Grafana's built-in one) into `wrong`, and every panel's id
/// into `ids`. Naming the variable everywhere makes the dashboard work with
/// whatever Prometheus is chosen.
fn check_sources(node: &Value, path: &str, wrong: &mut Vec<String>, ids: &mut Vec<u64>) {
    match node {
        Value::Object(map) => {
            if let Some(source) = map.get("datasource") {
                let builtin = source["uid"] == "-- Grafana --";
                let chosen = source["type"] == "prometheus" && source["uid"] == "${datasource}";
                if !builtin && !chosen {
                    wrong.push(format!("{path}: {source}"));
                }
            }
            if map.contains_key("gridPos") {
                ids.extend(map.get("id").and_then(Value::as_u64));
            }
            for (key, value) in map {
                check_sources(value, &format!("{path}.{key}"), wrong, ids);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                check_sources(item, &format!("{path}[{i}]"), wrong, ids);
            }
        }
        _ => {}
    }
}

#[test]
fn the_dashboard_is_uid_skirmish_refreshing_every_10s_on_a_chosen_prometheus() -> Result<()> {
    let dashboard = dashboard()?;
    assert_eq!(dashboard["uid"], "skirmish");
    assert_eq!(dashboard["refresh"], "10s");
    let variables = dashboard["templating"]["list"]
        .as_array()
        .context("templating.list")?;
    let datasource = variables
        .iter()
        .find(|v| v["name"] == "datasource")
        .context("a `datasource` variable")?;
    assert_eq!(datasource["type"], "datasource");
    assert_eq!(datasource["query"], "prometheus");

    let (mut wrong, mut ids) = (Vec::new(), Vec::new());
    check_sources(&dashboard, "", &mut wrong, &mut ids);
    assert!(
        wrong.is_empty(),
        "data sources other than ${{datasource}}:\n{}",
        wrong.join("\n")
    );
    let unique: BTreeSet<_> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "panel ids repeat: {ids:?}");
    Ok(())
}

/// How often Prometheus scrapes the server in the test.
const SCRAPE: Duration = Duration::from_secs(1);

/// The room the bots play in.
const ROOM: &str = "dash";

/// What a panel's queries must return in
/// [`every_panel_query_evaluates_on_a_real_prometheus`].
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// Samples, finite, at least one above 0 in every query: the bots feed
    /// it all along (the reason says how).
    Positive(&'static str),
    /// Samples, finite, possibly all 0 (the reason says why 0 is right).
    Present(&'static str),
}

impl Expect {
    /// What feeds the panel, or why 0 is right.
    fn reason(self) -> &'static str {
        match self {
            Expect::Positive(why) | Expect::Present(why) => why,
        }
    }
}

/// Every panel of the dashboard by title, with what feeds it in the test.
/// A panel missing here fails the test: decide what it needs first. No
/// panel may be empty: the test makes every rare thing happen once.
const PANELS: &[(&str, Expect)] = &[
    ("Players", Expect::Positive("the bots are seated")),
    ("Rooms", Expect::Positive("the bots' room is open")),
    ("Connections", Expect::Positive("the bots are connected")),
    (
        "Players, rooms and connections",
        Expect::Positive("as the three above"),
    ),
    ("Players by server", Expect::Positive("the bots are seated")),
    (
        "Tick duration (p50, p99)",
        Expect::Positive("the room ticks all along"),
    ),
    (
        "Tick send time (p50, p99)",
        Expect::Positive("each tick is sent to the bots"),
    ),
    (
        "Room ticks per second",
        Expect::Positive("the room ticks all along"),
    ),
    (
        "Bytes per second",
        Expect::Positive("the bots send inputs and get snapshots"),
    ),
    (
        "Bytes per second per player",
        Expect::Positive("as above, with players seated"),
    ),
    (
        "Messages per second",
        Expect::Positive("the bots send inputs and get snapshots"),
    ),
    (
        "Slow consumers (per minute)",
        Expect::Present("every client reads in time: the exported series' rate is 0"),
    ),
    (
        "Disconnects by reason (per minute)",
        Expect::Present("one client closes once; every reason is exported, 0 or more"),
    ),
    (
        "Refused connections by reason (per minute)",
        Expect::Present("nothing is refused here; every reason is exported at 0"),
    ),
    (
        "Rejected messages by code (per minute)",
        Expect::Present("one bad message, whose rate falls back to 0 after $__rate_interval"),
    ),
    (
        "Dropped inputs (per minute)",
        Expect::Present("one input too far ahead, once; its rate falls back to 0"),
    ),
    (
        "Input slack (p1, p50, p99)",
        Expect::Positive("the bots speak protocol 2 and their inputs arrive in time"),
    ),
    (
        "Input lateness (p50, p99)",
        Expect::Positive("one late input, inside the 1-minute window"),
    ),
    (
        "Late, repeated inputs and clamped rewinds (per second)",
        Expect::Present("one late input once; repeats are rare and no rewind is clamped"),
    ),
    (
        "Late inputs (share of protocol-2 inputs)",
        Expect::Present("the bots' inputs are timed all along; the late one is once"),
    ),
    ("Rewind depth (p50, p99)", Expect::Positive("the bots fire")),
];

/// Grafana's `$__rate_interval` for a Prometheus scraping every `scrape`
/// (set on the data source): `max($__interval + scrape, 4 * scrape)`, with
/// `$__interval` at its floor, the scrape interval.
fn rate_interval(scrape: Duration) -> Duration {
    (scrape + scrape).max(scrape * 4)
}

/// A value as Grafana puts a multi-value variable into a regex matcher:
/// regex characters escaped, inside a query's string literal.
fn regex_escape(value: &str) -> String {
    let mut out = String::new();
    for c in value.chars() {
        match c {
            '\\' => out.push_str(r"\\\\"),
            '$' | '^' | '*' | '{' | '}' | '[' | ']' | '\'' | '+' | '?' | '.' | '(' | ')' | '|' => {
                out.push_str(r"\\");
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// `promql` with every `$name` and `${name}` in `values` replaced; other
/// `$`s are left for the caller to find.
fn substitute(promql: &str, values: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = promql;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        // The name and how many bytes after the `$` it takes.
        let (name, len) = if let Some(braced) = after.strip_prefix('{') {
            braced
                .find('}')
                .map_or(("", 0), |end| (&braced[..end], end + 2))
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], end)
        };
        match values.get(name) {
            Some(value) => out.push_str(value),
            None => out.push_str(&rest[at..=at + len]),
        }
        rest = &after[len..];
    }
    out.push_str(rest);
    out
}

/// The `label_values(matcher, label)` of a variable's definition.
fn label_values_call(definition: &str) -> Option<(&str, &str)> {
    let inner = definition
        .trim()
        .strip_prefix("label_values(")?
        .strip_suffix(')')?;
    let (matcher, label) = inner.rsplit_once(',')?;
    Some((matcher.trim(), label.trim()))
}

/// One bot that plays protocol 2 in `room` and fires, for a minute (longer
/// than the test: it is aborted at the end).
fn bot(i: u64, room: &str) -> BotOptions {
    let mut wander = Wander::new(300 + i);
    wander.fire_chance = 0.5;
    BotOptions {
        name: format!("bot{i}"),
        room: Some(room.into()),
        script: Script::Wander(wander),
        folder: String::new(),
        up: skirmish_core::LinkConditions::default(),
        down: skirmish_core::LinkConditions::default(),
        seed: 80 + i,
        duration: Duration::from_secs(60),
        frame: Duration::from_millis(50),
        encoding: if i == 0 {
            Encoding::Json
        } else {
            Encoding::Compact
        },
        source: Some(next_source()),
        transport: BotTransport::Websocket,
        via: None,
        resends: 0,
        record: None,
    }
}

/// Once each, what only a failing or hostile client does: a bad message
/// (rejected), an input for a tick already simulated (late), one too far
/// ahead (dropped); then the client leaves (a disconnect).
async fn rare_events(addr: SocketAddr, room: &str) -> Result<()> {
    let mut c = Client::connect(addr).await?;
    c.hello_speaking("odd", Some(room), Encoding::Json, 2)
        .await?;
    c.welcome().await?;
    // A tick after the one it joined at and already simulated: late (ticks
    // up to the join are never late).
    let (joined, _) = c.snapshot().await?;
    let mut now = joined;
    while now.0 < joined.0 + 2 {
        now = c.snapshot().await?.0;
    }
    c.send_text("{not json").await?;
    c.error().await?;
    c.inputs(vec![input(now.0, 0.0, 0.0, false)]).await?;
    c.inputs(vec![input(now.0 + MAX_AHEAD_TICKS + 10, 0.0, 0.0, false)])
        .await?;
    // The late input is counted at the room's next tick.
    let until = Instant::now() + skirmish_tests::DEADLINE;
    while metric(addr, "skirmish_late_inputs_total").await? == 0 {
        if Instant::now() > until {
            bail!("the late input was never counted");
        }
        c.snapshot().await?;
    }
    c.close().await
}

/// The values Grafana gives the dashboard's variables, two ways: every
/// query variable at "All" (the default), then at its first value alone;
/// its built-in ones (`$__rate_interval`, ...) as for a Prometheus that
/// scrapes every [`SCRAPE`]. A query variable is asked for as Grafana asks
/// (`label_values` reads the label values API); what is wrong with its
/// answer goes to `problems`.
async fn grafana_values(
    prometheus: &Prometheus,
    dashboard: &Value,
    server: SocketAddr,
    problems: &mut Vec<String>,
) -> Result<[BTreeMap<String, String>; 2]> {
    let (mut all, mut first) = (BTreeMap::new(), BTreeMap::new());
    let variables = dashboard["templating"]["list"]
        .as_array()
        .context("templating.list")?;
    for variable in variables.iter().filter(|v| v["type"] == "query") {
        let name = variable["name"].as_str().context("a variable's name")?;
        let definition = variable["definition"].as_str().unwrap_or_default();
        let Some((matcher, label)) = label_values_call(definition) else {
            bail!("variable ${name}: `{definition}` is not label_values(matcher, label)");
        };
        let values = prometheus.label_values(matcher, label).await?;
        let Some(one) = values.first() else {
            problems.push(format!("variable ${name}: `{definition}` has no values"));
            continue;
        };
        if name == "instance" && !values.contains(&server.to_string()) {
            problems.push(format!("variable $instance: {values:?} lacks {server}"));
        }
        let all_value = match variable["allValue"].as_str() {
            Some(v) if variable["includeAll"] == true => v.to_string(),
            _ => format!(
                "({})",
                values
                    .iter()
                    .map(|v| regex_escape(v))
                    .collect::<Vec<_>>()
                    .join("|")
            ),
        };
        all.insert(name.to_string(), all_value);
        first.insert(name.to_string(), regex_escape(one));
    }
    let mut choices = [all, first];
    for values in &mut choices {
        let builtin = [
            (
                "__rate_interval",
                format!("{}s", rate_interval(SCRAPE).as_secs()),
            ),
            ("__interval", format!("{}s", SCRAPE.as_secs())),
            ("__interval_ms", SCRAPE.as_millis().to_string()),
            ("__range", "1m".into()),
            ("__range_s", "60".into()),
        ];
        values.extend(builtin.map(|(k, v)| (k.to_string(), v)));
    }
    Ok(choices)
}

/// What is wrong with `answer`, the samples of `promql` in `place`.
fn judge(place: &str, promql: &str, answer: &Answer, expect: Expect) -> Option<String> {
    let samples = match answer {
        Answer::Error(e) => return Some(format!("{place}: `{promql}` refused: {e}")),
        Answer::Samples(samples) => samples,
    };
    if samples.is_empty() {
        return Some(format!(
            "{place}: `{promql}` is empty ({})",
            expect.reason()
        ));
    }
    let values: Vec<f64> = samples
        .iter()
        .map(|(_, v)| v.parse().unwrap_or(f64::NAN))
        .collect();
    if let Some((labels, v)) = samples
        .iter()
        .zip(&values)
        .find(|(_, v)| !v.is_finite())
        .map(|(s, _)| s)
    {
        return Some(format!(
            "{place}: `{promql}` is {v} for {labels:?}: no data behind it ({})",
            expect.reason()
        ));
    }
    match expect {
        Expect::Positive(why) if !values.iter().any(|v| *v > 0.0) => Some(format!(
            "{place}: `{promql}` is {values:?}, expected above 0 ({why})"
        )),
        Expect::Positive(_) | Expect::Present(_) => None,
    }
}

/// The panels' and variables' queries, evaluated by a real Prometheus
/// scraping a real server that bots play on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_panel_query_evaluates_on_a_real_prometheus() -> Result<()> {
    let started = Instant::now();
    let dashboard = dashboard()?;
    let queries = queries(&dashboard);
    let titles: BTreeSet<&str> = queries
        .iter()
        .map(|q| q.place.as_str())
        .filter(|p| !p.starts_with("variable "))
        .collect();
    let listed: BTreeSet<&str> = PANELS.iter().map(|(title, _)| *title).collect();
    let unlisted: Vec<_> = titles.difference(&listed).collect();
    let stale: Vec<_> = listed.difference(&titles).collect();
    assert!(
        unlisted.is_empty() && stale.is_empty(),
        "PANELS and the dashboard differ: say what feeds {unlisted:?}; no panel is titled {stale:?}"
    );

    let srv = server(test_config())?;
    let prometheus = Prometheus::start(srv.addr, SCRAPE).await?;
    let bots: Vec<_> = (0..2)
        .map(|i| tokio::spawn(run_bot(srv.addr, bot(i, ROOM))))
        .collect();
    prometheus
        .wait_for(&format!("up{{job=\"{JOB}\"}} == 1"))
        .await?;
    // After a first scrape, so that every rate sees its counter rise.
    rare_events(srv.addr, ROOM).await?;
    for ready in [
        "skirmish_input_lateness_seconds_count > 0",
        "skirmish_dropped_inputs_total > 0",
        "sum(skirmish_rejected_messages_total) > 0",
        "skirmish_disconnects_total{reason=\"closed\"} > 0",
        "skirmish_rewind_seconds_count > 0",
        "skirmish_input_slack_seconds_count > 0",
        // A few scrapes in the 1-minute windows of the quantiles.
        &format!("count_over_time(up{{job=\"{JOB}\"}}[1m]) >= 5"),
    ] {
        prometheus.wait_for(ready).await?;
    }

    let mut problems = Vec::new();
    let choices = grafana_values(&prometheus, &dashboard, srv.addr, &mut problems).await?;
    let mut evaluated = 0;
    for Query { place, promql } in queries.iter().filter(|q| !q.place.starts_with("variable ")) {
        let expect = PANELS
            .iter()
            .find(|(title, _)| title == place)
            .map(|(_, e)| *e)
            .context("listed above")?;
        for values in &choices {
            let promql = substitute(promql, values);
            if promql.contains('$') {
                problems.push(format!(
                    "{place}: a variable this test does not know in `{promql}`"
                ));
                continue;
            }
            let answer = prometheus.query(&promql).await?;
            problems.extend(judge(place, &promql, &answer, expect));
            evaluated += 1;
        }
    }

    let mut failed_bots = Vec::new();
    for bot in bots {
        if bot.is_finished() {
            if let Err(e) = bot.await? {
                failed_bots.push(format!("{e:#}"));
            }
        } else {
            bot.abort();
        }
    }
    assert!(failed_bots.is_empty(), "bots failed: {failed_bots:?}");
    assert!(
        problems.is_empty(),
        "the dashboard on Prometheus ({evaluated} evaluations):\n{}",
        problems.join("\n")
    );
    assert!(evaluated >= 2 * 20, "only {evaluated} evaluations");
    eprintln!(
        "{evaluated} panel queries evaluated on Prometheus in {:.1?}",
        started.elapsed()
    );
    drop(prometheus);
    srv.shutdown().await
}

#[test]
fn grafana_variables_are_filled_in() {
    let values: BTreeMap<String, String> = [
        ("instance", regex_escape("127.0.0.1:7777")),
        ("__rate_interval", "4s".into()),
        ("__interval", "1s".into()),
        ("__interval_ms", "1000".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(
        substitute(
            r#"rate(x{instance=~"$instance"}[$__rate_interval]) + y{i="${instance}"}[$__interval] * $__interval_ms / $other"#,
            &values
        ),
        r#"rate(x{instance=~"127\\.0\\.0\\.1:7777"}[4s]) + y{i="127\\.0\\.0\\.1:7777"}[1s] * 1000 / $other"#
    );
    assert_eq!(
        rate_interval(Duration::from_secs(1)),
        Duration::from_secs(4)
    );
    assert_eq!(
        rate_interval(Duration::from_secs(15)),
        Duration::from_secs(60)
    );
    assert_eq!(
        label_values_call("label_values(skirmish_players, instance)"),
        Some(("skirmish_players", "instance"))
    );
}

#[test]
fn metric_names_and_exact_matchers_are_read_from_promql() {
    let read = selectors(
        r#"histogram_quantile(0.99, sum by (le) (rate(skirmish_tick_duration_seconds_bucket{instance=~"$instance"}[1m])))
        / sum(rate(skirmish_disconnects_total { reason = "slow_consumer", instance="$instance" }[5m]))
        + label_replace(up, "x", "skirmish_not_a_metric", "", "")"#,
    );
    assert_eq!(
        read,
        vec![
            Selector {
                metric: "skirmish_tick_duration_seconds_bucket".into(),
                labels: vec![],
            },
            Selector {
                metric: "skirmish_disconnects_total".into(),
                labels: vec![("reason".into(), "slow_consumer".into())],
            },
        ]
    );
    let exported = samples(
        "# TYPE skirmish_x histogram\nskirmish_x_bucket{le=\"+Inf\"} 3\nskirmish_players 1\n",
    );
    assert_eq!(
        exported.keys().collect::<Vec<_>>(),
        ["skirmish_players", "skirmish_x_bucket"]
    );
    assert_eq!(exported["skirmish_x_bucket"][0]["le"], "+Inf");
}
