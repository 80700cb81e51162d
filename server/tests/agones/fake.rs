//! A fake Agones SDK sidecar: the SDK's gRPC services (our own proto of the
//! documented interface, `sdk.proto` and `beta.proto` beside this file),
//! served with tonic on 127.0.0.1, recording every call with the moment it
//! arrived. It answers like the real sidecar where the server cares: the
//! Counters it declares (`rooms`, `players`) can be set, any other is
//! `NOT_FOUND`; the watch gives the current `GameServer`, then each change.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::Stream;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::time::Instant;
use tonic::{Request, Response, Status, Streaming};

#[allow(missing_docs, clippy::pedantic)]
pub mod sdk {
    tonic::include_proto!("agones.dev.sdk");
}

#[allow(missing_docs, clippy::pedantic)]
pub mod beta {
    tonic::include_proto!("agones.dev.sdk.beta");
}

use sdk::game_server::status::CounterStatus;
use sdk::game_server::{ObjectMeta, Status as GameServerStatus};
use sdk::{Empty, GameServer, KeyValue};

/// One call the server made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Call {
    /// `GetGameServer` (the SDK's connection check).
    GetGameServer,
    /// `WatchGameServer`.
    Watch,
    /// `Ready`; what the server's listener did at that moment.
    Ready { listener: Listener },
    /// One message on the `Health` stream.
    Health,
    /// `SetLabel`.
    Label(String, String),
    /// `UpdateCounter`.
    Counter {
        name: String,
        count: Option<i64>,
        capacity: Option<i64>,
        diff: i64,
    },
    /// `Shutdown`; what the server's listener did at that moment.
    Shutdown { listener: Listener },
    /// Anything else.
    Other(&'static str),
}

/// A call and when it arrived.
#[derive(Clone, Debug)]
pub struct Record {
    pub at: Instant,
    pub call: Call,
}

#[derive(Debug)]
struct Inner {
    calls: Mutex<Vec<Record>>,
    /// Bumped with every call.
    seen: watch::Sender<usize>,
    /// The server's HTTP address, for `Ready` and `Shutdown` to probe.
    server: watch::Sender<Option<SocketAddr>>,
    gameserver: watch::Sender<GameServer>,
    counters: Mutex<BTreeMap<String, (i64, i64)>>,
    /// Counter updates take this long to be answered (a sidecar in trouble).
    counter_delay: Mutex<Duration>,
}

/// The fake sidecar; clones share it.
#[derive(Clone, Debug)]
pub struct Fake {
    inner: Arc<Inner>,
    /// The port it serves on.
    pub port: u16,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Fake {
    /// Serves on a free port of 127.0.0.1 with the Counters `rooms` and
    /// `players` declared, the `GameServer` `Scheduled`.
    pub async fn start() -> anyhow::Result<Fake> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let counters = [("rooms", (0, 0)), ("players", (0, 0))]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let fake = Fake {
            inner: Arc::new(Inner {
                calls: Mutex::new(Vec::new()),
                seen: watch::Sender::new(0),
                server: watch::Sender::new(None),
                gameserver: watch::Sender::new(GameServer {
                    object_meta: Some(ObjectMeta {
                        name: "skirmish-test".into(),
                        namespace: "default".into(),
                        ..ObjectMeta::default()
                    }),
                    status: Some(GameServerStatus {
                        state: "Scheduled".into(),
                        counters: HashMap::new(),
                    }),
                }),
                counters: Mutex::new(counters),
                counter_delay: Mutex::new(Duration::ZERO),
            }),
            port,
        };
        let incoming = futures_util::stream::unfold(listener, |listener| async move {
            let accepted = listener.accept().await.map(|(tcp, _)| tcp);
            Some((accepted, listener))
        });
        let router = tonic::transport::Server::builder()
            .add_service(sdk::sdk_server::SdkServer::new(fake.clone()))
            .add_service(beta::sdk_server::SdkServer::new(fake.clone()));
        tokio::spawn(router.serve_with_incoming(incoming));
        Ok(fake)
    }

    /// Where the server listens, for `Ready` and `Shutdown` to probe.
    pub fn server_is_at(&self, addr: SocketAddr) {
        self.inner.server.send_replace(Some(addr));
    }

    /// Makes every Counter update take `delay` to be answered.
    pub fn slow_counters(&self, delay: Duration) {
        *lock(&self.inner.counter_delay) = delay;
    }

    /// Every call so far.
    pub fn calls(&self) -> Vec<Record> {
        lock(&self.inner.calls).clone()
    }

    /// A Counter's (count, capacity).
    pub fn counter(&self, name: &str) -> Option<(i64, i64)> {
        lock(&self.inner.counters).get(name).copied()
    }

    /// Waits until `done` holds for the calls so far, or gives up after
    /// `within` with what was seen.
    pub async fn wait_until(
        &self,
        within: Duration,
        what: &str,
        done: impl Fn(&Fake, &[Record]) -> bool,
    ) -> anyhow::Result<Vec<Record>> {
        let mut seen = self.inner.seen.subscribe();
        let deadline = Instant::now() + within;
        loop {
            let calls = self.calls();
            if done(self, &calls) {
                return Ok(calls);
            }
            if tokio::time::timeout_at(deadline, seen.changed())
                .await
                .is_err()
            {
                anyhow::bail!("fake sidecar: no {what} within {within:?}; calls: {calls:#?}");
            }
        }
    }

    /// Allocates the `GameServer` as a `GameServerAllocation` with
    /// `metadata.annotations` and a `rooms` Counter action of `Increment 1`
    /// would: state `Allocated`, the annotations added, `rooms` counted one
    /// up.
    pub fn allocate(&self, annotations: &[(&str, &str)]) {
        if let Some(rooms) = lock(&self.inner.counters).get_mut("rooms") {
            rooms.0 += 1;
        }
        self.sync_counters();
        self.inner.gameserver.send_modify(|gs| {
            if let Some(status) = gs.status.as_mut() {
                status.state = "Allocated".into();
            }
            if let Some(meta) = gs.object_meta.as_mut() {
                for (k, v) in annotations {
                    meta.annotations.insert((*k).to_string(), (*v).to_string());
                }
            }
        });
    }

    fn record(&self, call: Call) {
        lock(&self.inner.calls).push(Record {
            at: Instant::now(),
            call,
        });
        self.inner.seen.send_modify(|n| *n += 1);
    }

    /// What the server's listener does now: answers `GET /healthz`,
    /// refuses the connection (closed), or neither (waiting at most a few
    /// seconds to learn its address, and two for the answer).
    async fn probe(&self) -> Listener {
        let mut server = self.inner.server.subscribe();
        let Ok(Ok(addr)) =
            tokio::time::timeout(Duration::from_secs(5), server.wait_for(Option::is_some))
                .await
                .map(|r| r.map(|a| *a))
        else {
            return Listener::Unknown;
        };
        let Some(addr) = addr else {
            return Listener::Unknown;
        };
        let probe = async {
            let mut tcp = match TcpStream::connect(addr).await {
                Ok(tcp) => tcp,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    return Listener::Closed
                }
                Err(_) => return Listener::Unknown,
            };
            let request = b"GET /healthz HTTP/1.1\r\nhost: fake\r\nconnection: close\r\n\r\n";
            let mut answer = Vec::new();
            if tcp.write_all(request).await.is_err() || tcp.read_to_end(&mut answer).await.is_err()
            {
                return Listener::Unknown;
            }
            if answer.starts_with(b"HTTP/1.1 200") {
                Listener::Serving
            } else {
                Listener::Unknown
            }
        };
        tokio::time::timeout(Duration::from_secs(2), probe)
            .await
            .unwrap_or(Listener::Unknown)
    }

    /// Copies the Counters into the `GameServer`'s status, as Agones does
    /// (a watch event follows).
    fn sync_counters(&self) {
        let counters: HashMap<String, CounterStatus> = lock(&self.inner.counters)
            .iter()
            .map(|(name, &(count, capacity))| (name.clone(), CounterStatus { count, capacity }))
            .collect();
        self.inner.gameserver.send_modify(|gs| {
            if let Some(status) = gs.status.as_mut() {
                status.counters = counters;
            }
        });
    }
}

/// What a probe of the server's listener found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listener {
    /// It answered `GET /healthz` with 200.
    Serving,
    /// The connection was refused: nothing listens.
    Closed,
    /// Anything else (no address known, a timeout, a broken answer).
    Unknown,
}

type Answer<T> = Result<Response<T>, Status>;

#[tonic::async_trait]
impl sdk::sdk_server::Sdk for Fake {
    async fn ready(&self, _: Request<Empty>) -> Answer<Empty> {
        let listener = self.probe().await;
        self.record(Call::Ready { listener });
        self.inner.gameserver.send_modify(|gs| {
            if let Some(status) = gs.status.as_mut() {
                status.state = "Ready".into();
            }
        });
        Ok(Response::new(Empty {}))
    }

    async fn allocate(&self, _: Request<Empty>) -> Answer<Empty> {
        self.record(Call::Other("Allocate"));
        Ok(Response::new(Empty {}))
    }

    async fn shutdown(&self, _: Request<Empty>) -> Answer<Empty> {
        let listener = self.probe().await;
        self.record(Call::Shutdown { listener });
        Ok(Response::new(Empty {}))
    }

    async fn health(&self, request: Request<Streaming<Empty>>) -> Answer<Empty> {
        let mut stream = request.into_inner();
        while let Ok(Some(_)) = stream.message().await {
            self.record(Call::Health);
        }
        Ok(Response::new(Empty {}))
    }

    async fn get_game_server(&self, _: Request<Empty>) -> Answer<GameServer> {
        self.record(Call::GetGameServer);
        Ok(Response::new(self.inner.gameserver.borrow().clone()))
    }

    type WatchGameServerStream =
        Pin<Box<dyn Stream<Item = Result<GameServer, Status>> + Send + 'static>>;

    async fn watch_game_server(&self, _: Request<Empty>) -> Answer<Self::WatchGameServerStream> {
        self.record(Call::Watch);
        let mut changes = self.inner.gameserver.subscribe();
        changes.mark_changed();
        let stream = futures_util::stream::unfold(changes, |mut changes| async move {
            changes.changed().await.ok()?;
            let gameserver = changes.borrow_and_update().clone();
            Some((Ok(gameserver), changes))
        });
        Ok(Response::new(Box::pin(stream)))
    }

    async fn set_label(&self, request: Request<KeyValue>) -> Answer<Empty> {
        let kv = request.into_inner();
        self.record(Call::Label(kv.key, kv.value));
        Ok(Response::new(Empty {}))
    }

    async fn set_annotation(&self, _: Request<KeyValue>) -> Answer<Empty> {
        self.record(Call::Other("SetAnnotation"));
        Ok(Response::new(Empty {}))
    }

    async fn reserve(&self, _: Request<sdk::Duration>) -> Answer<Empty> {
        self.record(Call::Other("Reserve"));
        Ok(Response::new(Empty {}))
    }
}

#[tonic::async_trait]
impl beta::sdk_server::Sdk for Fake {
    async fn get_counter(
        &self,
        request: Request<beta::GetCounterRequest>,
    ) -> Answer<beta::Counter> {
        let name = request.into_inner().name;
        self.record(Call::Other("GetCounter"));
        let (count, capacity) = self
            .counter(&name)
            .ok_or_else(|| Status::not_found(format!("counter not found: {name}")))?;
        Ok(Response::new(beta::Counter {
            name,
            count,
            capacity,
        }))
    }

    async fn update_counter(
        &self,
        request: Request<beta::UpdateCounterRequest>,
    ) -> Answer<beta::Counter> {
        let update = request
            .into_inner()
            .counter_update_request
            .ok_or_else(|| Status::invalid_argument("no counterUpdateRequest"))?;
        let delay = *lock(&self.inner.counter_delay);
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        let count = update.count.map(|c| c.value);
        let capacity = update.capacity.map(|c| c.value);
        let mut counters = lock(&self.inner.counters);
        let counter = counters
            .get_mut(&update.name)
            .ok_or_else(|| Status::not_found(format!("counter not found: {}", update.name)))?;
        if let Some(capacity) = capacity {
            counter.1 = capacity;
        }
        if let Some(count) = count {
            counter.0 = count;
        }
        counter.0 += update.count_diff;
        let now = *counter;
        drop(counters);
        self.sync_counters();
        self.record(Call::Counter {
            name: update.name.clone(),
            count,
            capacity,
            diff: update.count_diff,
        });
        Ok(Response::new(beta::Counter {
            name: update.name,
            count: now.0,
            capacity: now.1,
        }))
    }
}
