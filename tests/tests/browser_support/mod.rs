//! What the browser tests share: chromedriver, a headless Chromium
//! session, the page's URL and its debug state.

// Each test binary uses only some of these.
#![allow(dead_code)]

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::{Client, ClientBuilder};
use serde_json::{json, Value};
use skirmish_server::RunningServer;
use skirmish_tests::{server, TestConfig};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from(".."), PathBuf::from)
}

/// A chromedriver process, killed when dropped.
pub struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    /// Stops chromedriver and every browser it started, even when a test
    /// failed before closing its sessions: they share chromedriver's
    /// process group (an orphaned headless Chromium keeps a core busy and
    /// slows every test after it).
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn start_driver() -> Result<Driver> {
    let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let child = Command::new("/usr/bin/chromedriver")
        .process_group(0)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot start /usr/bin/chromedriver (cargo xtask setup installs it)")?;
    Ok(Driver {
        child,
        url: format!("http://127.0.0.1:{port}"),
    })
}

/// A browser session; chromedriver may need a moment to listen, so
/// connecting is retried until a deadline.
pub async fn browser(driver: &Driver) -> Result<Client> {
    let caps = json!({
        "goog:chromeOptions": {
            "binary": "/usr/bin/chromium",
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-background-networking", "--disable-component-update",
                     "--disable-sync", "--no-first-run", "--window-size=1280,720"]
        }
    });
    let Value::Object(caps) = caps else {
        bail!("capabilities are an object");
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let mut builder =
            ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new());
        match builder
            .capabilities(caps.clone())
            .connect(&driver.url)
            .await
        {
            Ok(client) => return Ok(client),
            Err(e) if Instant::now() > deadline => bail!("chromedriver never answered: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

pub fn page_url(srv: &RunningServer, query: &str) -> Result<String> {
    if !root().join("web/pkg/skirmish_client.js").is_file() {
        bail!("web/pkg is not built: run `cargo xtask test`, which builds the client first");
    }
    Ok(format!("http://{}/?{query}", srv.addr))
}

pub fn web_server(mut config: TestConfig) -> Result<RunningServer> {
    config.web_dir = root().join("web");
    server(config)
}

/// The page's debug state (`window.skirmish.debug()`).
pub async fn state(client: &Client) -> Result<Value> {
    Ok(client
        .execute(
            "return window.skirmish ? window.skirmish.debug() : null;",
            vec![],
        )
        .await?)
}

/// Polls the page until `cond` holds; fails after `within`.
pub async fn wait_for(
    client: &Client,
    what: &str,
    within: Duration,
    cond: impl Fn(&Value) -> bool,
) -> Result<Value> {
    let deadline = Instant::now() + within;
    loop {
        let s = state(client).await?;
        if cond(&s) {
            return Ok(s);
        }
        if Instant::now() > deadline {
            bail!("{what}: not within {within:?}; last state {s}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub fn pose(s: &Value, key: &str) -> Option<(f64, f64, f64)> {
    let p = s.get(key)?.as_array()?;
    Some((
        p.first()?.as_f64()?,
        p.get(1)?.as_f64()?,
        p.get(2)?.as_f64()?,
    ))
}

pub fn num(s: &Value, key: &str) -> f64 {
    s.get(key).and_then(Value::as_f64).unwrap_or(f64::NAN)
}

pub async fn joined(client: &Client) -> Result<Value> {
    wait_for(client, "joined and placed", Duration::from_secs(20), |s| {
        !s.is_null() && s["player_id"].is_u64() && pose(s, "visible").is_some()
    })
    .await
}

pub async fn key(client: &Client, action: KeyAction) -> Result<()> {
    client
        .perform_actions(KeyActions::new("keyboard".into()).then(action))
        .await?;
    Ok(())
}

pub async fn screenshot(client: &Client, name: &str) -> Result<()> {
    let dir = root().join("artifacts");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join(format!("{name}.png")), client.screenshot().await?)?;
    Ok(())
}

/// The page's flight recording (`window.skirmish.recording()`), as bytes.
pub async fn recording(client: &Client) -> Result<Vec<u8>> {
    client
        .execute("return Array.from(window.skirmish.recording());", vec![])
        .await?
        .as_array()
        .context("the recording is not an array")?
        .iter()
        .map(|v| v.as_u64().and_then(|b| u8::try_from(b).ok()))
        .collect::<Option<_>>()
        .context("the recording holds something other than bytes")
}

/// The page's determinism trace (`skirmish.determinism(seed, steps)`), as
/// numbers.
pub async fn page_trace(client: &Client, seed: u32, steps: u32) -> Result<Vec<u64>> {
    let hex: Vec<String> = serde_json::from_value(
        client
            .execute(
                "return window.skirmish.determinism(arguments[0], arguments[1]);",
                vec![json!(seed), json!(steps)],
            )
            .await?,
    )?;
    Ok(hex
        .iter()
        .map(|h| u64::from_str_radix(h, 16))
        .collect::<Result<Vec<u64>, _>>()?)
}
