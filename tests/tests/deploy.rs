//! The container image and the Agones manifests, checked as far as this
//! machine allows (no Docker, no cluster): the YAML parses, every key is
//! one Agones documents for where it stands, the pieces agree with each
//! other (Fleet name, Counter names, port, capacities), the server accepts
//! the command line the image and the Fleet give it, the Fleet's pods ask
//! Prometheus to scrape `/metrics` at the server's port, and the image runs
//! as a non-root user with the `agones` feature.

use std::fs;
use std::path::{Path, PathBuf};

use clap::Parser;
use skirmish_core::check_room_name;
use skirmish_server::agones::{PLAYERS_COUNTER, ROOMS_COUNTER, ROOM_ANNOTATION};
use skirmish_tests::TestConfig as ServerConfig;
use yaml_rust2::{Yaml, YamlLoader};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace root")
        .to_path_buf()
}

fn manifest(name: &str) -> Yaml {
    let path = root().join("deploy/agones").join(name);
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut docs =
        YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{name} does not parse: {e}"));
    assert_eq!(docs.len(), 1, "{name} holds one document");
    docs.remove(0)
}

/// Fails unless every key of the mapping at `path` is one of `known`.
fn keys_are(doc: &Yaml, path: &[&str], known: &[&str]) {
    let mut node = doc;
    for step in path {
        node = &node[*step];
    }
    let map = node
        .as_hash()
        .unwrap_or_else(|| panic!("{} is not a mapping", path.join(".")));
    for key in map.keys() {
        let key = key.as_str().expect("keys are strings");
        assert!(
            known.contains(&key),
            "`{}.{key}` is not a field Agones documents there ({known:?})",
            path.join(".")
        );
    }
}

fn text<'a>(node: &'a Yaml, what: &str) -> &'a str {
    node.as_str()
        .unwrap_or_else(|| panic!("{what} is not a string"))
}

fn int(node: &Yaml, what: &str) -> i64 {
    node.as_i64()
        .unwrap_or_else(|| panic!("{what} is not an integer"))
}

/// The server's command line in the image's ENTRYPOINT.
fn entrypoint() -> Vec<String> {
    let dockerfile = fs::read_to_string(root().join("Dockerfile")).expect("a Dockerfile");
    let line = dockerfile
        .lines()
        .find(|l| l.starts_with("ENTRYPOINT"))
        .expect("an ENTRYPOINT");
    let json = line.trim_start_matches("ENTRYPOINT").trim();
    let args: Vec<String> = serde_json::from_str(json).expect("ENTRYPOINT in exec form");
    args
}

fn fleet_container(fleet: &Yaml) -> &Yaml {
    &fleet["spec"]["template"]["spec"]["template"]["spec"]["containers"][0]
}

/// The configuration the server would run with in the Fleet.
fn fleet_config(fleet: &Yaml) -> ServerConfig {
    let mut args = entrypoint();
    let container = fleet_container(fleet);
    for arg in container["args"].as_vec().expect("container args") {
        args.push(text(arg, "an arg").to_string());
    }
    ServerConfig::try_parse_from(&args)
        .unwrap_or_else(|e| panic!("the server refuses `{}`: {e}", args.join(" ")))
}

#[test]
fn the_fleet_names_documented_fields_and_agrees_with_the_image() {
    let fleet = manifest("fleet.yaml");
    assert_eq!(text(&fleet["apiVersion"], "apiVersion"), "agones.dev/v1");
    assert_eq!(text(&fleet["kind"], "kind"), "Fleet");
    keys_are(
        &fleet,
        &["spec"],
        &[
            "replicas",
            "scheduling",
            "strategy",
            "template",
            "allocationOverflow",
            "priorities",
        ],
    );
    let gs = ["spec", "template", "spec"];
    keys_are(
        &fleet,
        &gs,
        &[
            "container",
            "ports",
            "health",
            "scheduling",
            "sdkServer",
            "template",
            "players",
            "counters",
            "lists",
            "eviction",
            "immutableReplicas",
        ],
    );
    keys_are(
        &fleet,
        &["spec", "template", "spec", "health"],
        &[
            "disabled",
            "initialDelaySeconds",
            "periodSeconds",
            "failureThreshold",
        ],
    );
    let spec = &fleet["spec"]["template"]["spec"];
    let port = &spec["ports"][0];
    keys_are(
        port,
        &[],
        &[
            "name",
            "portPolicy",
            "container",
            "containerPort",
            "hostPort",
            "protocol",
            "range",
        ],
    );
    assert_eq!(
        text(&port["protocol"], "protocol"),
        "TCPUDP",
        "WebSocket (TCP) and WebTransport (UDP) on one port number"
    );

    let config = fleet_config(&fleet);
    assert!(config.agones.enabled, "the image runs with --agones");
    assert_eq!(
        i64::from(config.addr.port()),
        int(&port["containerPort"], "containerPort"),
        "the server listens on the container port"
    );
    assert!(!config.webtransport.disabled);
    assert!(
        config.webtransport.port_from_host,
        "behind TCPUDP the page must be told the mapped port"
    );
    assert!(config.agones.shutdown_when_empty.is_some());

    // Health: pings every 2 s must fit several times into what Agones waits.
    let health = &spec["health"];
    assert!(!health["disabled"].as_bool().unwrap_or(false));
    let patience = int(&health["periodSeconds"], "periodSeconds")
        * int(&health["failureThreshold"], "failureThreshold");
    let every = config.agones.health_every.as_secs() as i64;
    assert!(
        int(&health["periodSeconds"], "periodSeconds") >= 2 * every,
        "a period of at least two pings"
    );
    assert!(patience >= 4 * every, "Agones gives up after {patience} s");

    // The Counters the server publishes, with the capacities it sets.
    keys_are(
        &fleet,
        &["spec", "template", "spec", "counters"],
        &[ROOMS_COUNTER, PLAYERS_COUNTER],
    );
    let capacity = |name: &str| int(&spec["counters"][name]["capacity"], name);
    let rooms = config.rooms.max_rooms as i64;
    assert_eq!(capacity(ROOMS_COUNTER), rooms);
    assert_eq!(
        capacity(PLAYERS_COUNTER),
        rooms * config.rooms.capacity as i64
    );
}

/// Prometheus' `kubernetes-pods` job scrapes pods that carry these
/// annotations; `/metrics` is on the server's HTTP port, the container port.
#[test]
fn the_fleet_pods_ask_prometheus_to_scrape_metrics() {
    let fleet = manifest("fleet.yaml");
    let pod = ["spec", "template", "spec", "template", "metadata"];
    keys_are(&fleet, &pod, &["labels", "annotations"]);
    let annotations = &fleet["spec"]["template"]["spec"]["template"]["metadata"]["annotations"];
    // Kubernetes takes only strings here: an unquoted `true` or `7777` is
    // not a string and the Fleet would be refused.
    let annotation = |key: &str| text(&annotations[key], key);
    assert_eq!(annotation("prometheus.io/scrape"), "true");
    assert_eq!(annotation("prometheus.io/path"), "/metrics");
    let port = &fleet["spec"]["template"]["spec"]["ports"][0];
    let container_port = int(&port["containerPort"], "containerPort");
    assert_eq!(
        annotation("prometheus.io/port"),
        container_port.to_string(),
        "Prometheus scrapes the pod at the container port"
    );
    assert_eq!(
        i64::from(fleet_config(&fleet).addr.port()),
        container_port,
        "the server serves /metrics on the container port"
    );
}

#[test]
fn the_autoscaler_keeps_free_rooms_of_the_fleet() {
    let fleet = manifest("fleet.yaml");
    let scaler = manifest("fleetautoscaler.yaml");
    assert_eq!(
        text(&scaler["apiVersion"], "apiVersion"),
        "autoscaling.agones.dev/v1"
    );
    assert_eq!(text(&scaler["kind"], "kind"), "FleetAutoscaler");
    keys_are(&scaler, &["spec"], &["fleetName", "policy", "sync"]);
    keys_are(
        &scaler,
        &["spec", "policy"],
        &[
            "type", "buffer", "webhook", "counter", "list", "schedule", "chain", "wasm",
        ],
    );
    keys_are(
        &scaler,
        &["spec", "policy", "counter"],
        &["key", "bufferSize", "minCapacity", "maxCapacity"],
    );
    keys_are(&scaler, &["spec", "sync"], &["type", "fixedInterval"]);
    keys_are(&scaler, &["spec", "sync", "fixedInterval"], &["seconds"]);
    assert_eq!(
        text(&scaler["spec"]["fleetName"], "fleetName"),
        text(&fleet["metadata"]["name"], "the Fleet's name")
    );
    let policy = &scaler["spec"]["policy"];
    assert_eq!(text(&policy["type"], "type"), "Counter");
    let counter = &policy["counter"];
    assert_eq!(text(&counter["key"], "key"), ROOMS_COUNTER);
    let buffer = int(&counter["bufferSize"], "bufferSize");
    let (min, max) = (
        int(&counter["minCapacity"], "minCapacity"),
        int(&counter["maxCapacity"], "maxCapacity"),
    );
    let per_server = fleet_config(&fleet).rooms.max_rooms as i64;
    assert!(buffer > 0 && buffer <= min && min < max);
    assert_eq!(min % per_server, 0, "whole GameServers");
    assert_eq!(max % per_server, 0, "whole GameServers");
}

#[test]
fn the_allocation_asks_for_a_free_room_and_names_it() {
    let fleet = manifest("fleet.yaml");
    let allocation = manifest("gameserverallocation.yaml");
    assert_eq!(
        text(&allocation["apiVersion"], "apiVersion"),
        "allocation.agones.dev/v1"
    );
    assert_eq!(text(&allocation["kind"], "kind"), "GameServerAllocation");
    keys_are(
        &allocation,
        &["spec"],
        &[
            "multiClusterSetting",
            "required",
            "preferred",
            "priorities",
            "selectors",
            "scheduling",
            "metadata",
            "counters",
            "lists",
        ],
    );
    let fleet_name = text(&fleet["metadata"]["name"], "the Fleet's name");
    let selectors = allocation["spec"]["selectors"].as_vec().expect("selectors");
    assert!(!selectors.is_empty());
    for selector in selectors {
        keys_are(
            selector,
            &[],
            &[
                "matchLabels",
                "matchExpressions",
                "gameServerState",
                "players",
                "counters",
                "lists",
            ],
        );
        assert_eq!(
            text(
                &selector["matchLabels"]["agones.dev/fleet"],
                "the fleet label"
            ),
            fleet_name
        );
        keys_are(
            selector,
            &["counters", ROOMS_COUNTER],
            &["minCount", "maxCount", "minAvailable", "maxAvailable"],
        );
        assert!(
            int(
                &selector["counters"][ROOMS_COUNTER]["minAvailable"],
                "minAvailable"
            ) >= 1
        );
        let state = text(&selector["gameServerState"], "gameServerState");
        assert!(["Ready", "Allocated"].contains(&state));
    }
    keys_are(
        &allocation,
        &["spec", "counters", ROOMS_COUNTER],
        &["action", "amount", "capacity"],
    );
    assert_eq!(
        text(
            &allocation["spec"]["counters"][ROOMS_COUNTER]["action"],
            "action"
        ),
        "Increment"
    );
    let room = text(
        &allocation["spec"]["metadata"]["annotations"][ROOM_ANNOTATION],
        "the room",
    );
    assert!(
        check_room_name(room).is_ok(),
        "`{room}` is a room name hello accepts"
    );
}

#[test]
fn the_image_builds_the_agones_server_and_runs_as_a_non_root_user() {
    let dockerfile = fs::read_to_string(root().join("Dockerfile")).expect("a Dockerfile");
    let stages = dockerfile
        .lines()
        .filter(|l| l.starts_with("FROM "))
        .count();
    assert!(stages >= 2, "multi-stage");
    assert!(dockerfile.contains("--features agones"));
    assert!(dockerfile.contains("protobuf-compiler"));
    let user = dockerfile
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("USER "))
        .expect("a USER");
    let uid = user.split(':').next().unwrap_or(user).trim();
    assert!(uid != "0" && uid != "root", "runs as {user}");
    let last_stage = dockerfile.rsplit("\nFROM ").next().unwrap_or_default();
    assert!(
        last_stage.contains("USER "),
        "the final stage sets the user"
    );
    let args = entrypoint();
    assert!(args.iter().any(|a| a == "--agones"));
    let expose: Vec<&str> = dockerfile
        .lines()
        .filter_map(|l| l.strip_prefix("EXPOSE "))
        .flat_map(str::split_whitespace)
        .collect();
    let config = ServerConfig::try_parse_from(&args).expect("the ENTRYPOINT parses");
    let port = config.addr.port();
    assert!(
        expose.contains(&format!("{port}/tcp").as_str()),
        "{expose:?}"
    );
    assert!(
        expose.contains(&format!("{port}/udp").as_str()),
        "{expose:?}"
    );
}
