//! The Grafana dashboard (`deploy/grafana/skirmish.json`) asks only for
//! series a real server exports: every `skirmish_*` metric name in every
//! query is a sample name in `GET /metrics`, and every exact label matcher
//! (`reason="slow_consumer"`) names a label value found there. Its model is
//! what the README promises: uid `skirmish`, a 10 s refresh, and every query
//! on the Prometheus data source chosen in `${datasource}`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::Value;
use skirmish_tests::{http_get, server, test_config, Client};

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
