//! A real Prometheus for tests: Debian's `/usr/bin/prometheus` (2.42, which
//! `cargo xtask setup` installs) started on its own free port of 127.0.0.1,
//! with its own configuration and storage in a fresh temporary directory,
//! scraping one server. Any service the package runs is left alone.
//!
//! [`Prometheus`] is a guard: dropping it kills the process and removes the
//! directory. Its HTTP API is read over plain HTTP/1.0 and every wait polls
//! with a deadline.

use std::fmt::Write as _;
use std::fs;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Where Debian's package puts the binary.
pub const BINARY: &str = "/usr/bin/prometheus";

/// The scrape job's name (the `job` label of every series).
pub const JOB: &str = "skirmish";

/// The longest any one wait on Prometheus may take: it applies its first
/// scrape targets about 5 s after it starts.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// A running Prometheus; killed, and its directory removed, on drop.
pub struct Prometheus {
    /// Its HTTP API.
    pub addr: SocketAddr,
    child: Child,
    dir: PathBuf,
}

/// What an instant query answered.
#[derive(Debug)]
pub enum Answer {
    /// The samples: each series' labels and its value as Prometheus wrote
    /// it (`"0.25"`, `"NaN"`, `"+Inf"`).
    Samples(Vec<(serde_json::Map<String, Value>, String)>),
    /// Prometheus refused the query (a parse error, a type error).
    Error(String),
}

impl Prometheus {
    /// Starts Prometheus scraping `GET /metrics` of `target` every
    /// `interval`, and waits until its API is ready.
    ///
    /// # Errors
    /// The binary is missing (with what installs it), it cannot start, or
    /// it is not ready in time.
    pub async fn start(target: SocketAddr, interval: Duration) -> Result<Prometheus> {
        if !Path::new(BINARY).is_file() {
            bail!(
                "{BINARY} is missing: this test runs a real Prometheus. `cargo xtask setup` \
                 installs it (or: apt-get install --no-install-recommends prometheus, Debian's 2.42)"
            );
        }
        // A free port can be taken between choosing and binding it: retry.
        let mut last = None;
        for _ in 0..3 {
            let mut prometheus = Prometheus::spawn(target, interval)?;
            match prometheus.ready().await {
                Ok(()) => return Ok(prometheus),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| anyhow!("Prometheus did not start")))
    }

    fn spawn(target: SocketAddr, interval: Duration) -> Result<Prometheus> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "skirmish-prometheus-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).with_context(|| dir.display().to_string())?;
        let addr = free_port()?;
        let ms = interval.as_millis();
        let config = dir.join("prometheus.yml");
        fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: {ms}ms\n  scrape_timeout: {ms}ms\n\
                 scrape_configs:\n  - job_name: {JOB}\n    metrics_path: /metrics\n    \
                 static_configs:\n      - targets: ['{target}']\n"
            ),
        )?;
        let log = fs::File::create(dir.join("prometheus.log"))?;
        let child = Command::new(BINARY)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {BINARY}"))?;
        Ok(Prometheus { addr, child, dir })
    }

    /// Waits for `GET /-/ready`, failing early if the process ends.
    async fn ready(&mut self) -> Result<()> {
        let until = Instant::now() + DEADLINE;
        loop {
            if let Some(status) = self.child.try_wait()? {
                bail!("Prometheus exited ({status}):\n{}", self.log());
            }
            if let Ok((200, _)) = get(self.addr, "/-/ready").await {
                return Ok(());
            }
            if Instant::now() > until {
                bail!("Prometheus not ready within {DEADLINE:?}:\n{}", self.log());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The end of its log, for failure messages.
    pub fn log(&self) -> String {
        let text = fs::read_to_string(self.dir.join("prometheus.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// Evaluates `promql` now (`GET /api/v1/query`).
    ///
    /// # Errors
    /// The API cannot be reached or answers something else than its JSON.
    pub async fn query(&self, promql: &str) -> Result<Answer> {
        let (status, body) = get(
            self.addr,
            &format!("/api/v1/query?query={}", encode(promql)),
        )
        .await
        .context("querying Prometheus")?;
        let json: Value =
            serde_json::from_str(&body).with_context(|| format!("HTTP {status}: {body}"))?;
        if json["status"] != "success" {
            return Ok(Answer::Error(format!(
                "{}: {}",
                json["errorType"].as_str().unwrap_or("error"),
                json["error"].as_str().unwrap_or(&body)
            )));
        }
        let data = &json["data"];
        let samples = match data["resultType"].as_str() {
            Some("vector") => data["result"]
                .as_array()
                .context("a vector's result")?
                .iter()
                .map(|s| {
                    let labels = s["metric"].as_object().cloned().unwrap_or_default();
                    (
                        labels,
                        s["value"][1].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect(),
            Some("scalar") => vec![(
                serde_json::Map::new(),
                data["result"][1].as_str().unwrap_or_default().to_string(),
            )],
            other => bail!("unexpected result type {other:?} for `{promql}`"),
        };
        Ok(Answer::Samples(samples))
    }

    /// The values of `label` on the series `matcher` selects, as Grafana's
    /// `label_values(matcher, label)` asks for them.
    ///
    /// # Errors
    /// The API cannot be reached or refuses the matcher.
    pub async fn label_values(&self, matcher: &str, label: &str) -> Result<Vec<String>> {
        let path = format!("/api/v1/label/{label}/values?match[]={}", encode(matcher));
        let (status, body) = get(self.addr, &path).await?;
        let json: Value =
            serde_json::from_str(&body).with_context(|| format!("HTTP {status}: {body}"))?;
        if json["status"] != "success" {
            bail!("label_values({matcher}, {label}): {body}");
        }
        Ok(json["data"]
            .as_array()
            .context("a list of values")?
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect())
    }

    /// Polls `promql` until it returns at least one sample.
    ///
    /// # Errors
    /// It is still empty (or refused) at the deadline.
    pub async fn wait_for(&self, promql: &str) -> Result<()> {
        let until = Instant::now() + DEADLINE;
        loop {
            let answer = self.query(promql).await?;
            match &answer {
                Answer::Samples(s) if !s.is_empty() => return Ok(()),
                Answer::Error(e) => bail!("`{promql}` refused: {e}"),
                Answer::Samples(_) => {}
            }
            if Instant::now() > until {
                bail!(
                    "`{promql}` still empty after {DEADLINE:?}; Prometheus' log:\n{}",
                    self.log()
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// A port of 127.0.0.1 free a moment ago.
fn free_port() -> Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?)
}

/// `text` percent-encoded for a query string (every byte but the
/// unreserved ones).
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// `GET path` over HTTP/1.0: the status and the body, whatever the status.
async fn get(addr: SocketAddr, path: &str) -> Result<(u16, String)> {
    let exchange = async {
        let mut stream = TcpStream::connect(addr).await?;
        stream
            .write_all(format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
            .await?;
        let mut response = String::new();
        stream.read_to_string(&mut response).await?;
        anyhow::Ok(response)
    };
    let response = tokio::time::timeout(Duration::from_secs(10), exchange)
        .await
        .map_err(|_| anyhow!("GET {path}: no answer in 10 s"))??;
    let (head, body) = response
        .split_once("\r\n\r\n")
        .ok_or_else(|| anyhow!("no HTTP body in {response}"))?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| anyhow!("no HTTP status in {head}"))?;
    Ok((status, body.to_string()))
}

#[test]
fn queries_are_percent_encoded() {
    assert_eq!(
        encode(r#"rate(x{a=~"$b"}[1m]) / 2"#),
        "rate%28x%7Ba%3D~%22%24b%22%7D%5B1m%5D%29%20%2F%202"
    );
}
