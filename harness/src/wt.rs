//! A WebTransport client for tests and bots, speaking what a page speaks:
//! `GET /transport` for the URL and the certificate hashes to pin, one
//! bidirectional stream for `hello` and the reliable messages, datagrams for
//! inputs, pings, snapshots and pongs.

use std::net::{IpAddr, SocketAddr};

use anyhow::{anyhow, bail, Context, Result};
use skirmish_core::framing::{write_message, StreamMessage, StreamReader};
use skirmish_core::{
    decode_server, encode, ClientMessage, Encoding, GameId, Networked, ServerMessage,
    PROTOCOL_VERSION,
};
use wtransport::tls::Sha256Digest;
use wtransport::{ClientConfig, Connection, Endpoint, RecvStream, SendStream};

use crate::net::DEADLINE;

/// The largest message the stream may carry to us.
const STREAM_LIMIT: usize = 1 << 20;

/// One message from the server and how it came.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Received {
    /// What it carried.
    pub message: StreamMessage,
    /// Whether it came as a datagram (unreliable) rather than on the stream.
    pub datagram: bool,
}

/// Where a page would connect: the URL and the hashes to pin.
#[derive(Clone, Debug)]
pub struct Offer {
    /// `https://host:port/wt`.
    pub url: String,
    /// SHA-256 certificate hashes, hex.
    pub hashes: Vec<String>,
}

impl Offer {
    /// The QUIC endpoint the URL names, on `host` (the address the offer
    /// was asked of): what an impairment relay forwards to.
    ///
    /// # Errors
    /// The URL has no port.
    pub fn endpoint(&self, host: IpAddr) -> Result<SocketAddr> {
        let port: u16 = self
            .url
            .rsplit_once(':')
            .and_then(|(_, rest)| rest.split('/').next()?.parse().ok())
            .ok_or_else(|| anyhow!("no port in {}", self.url))?;
        Ok(SocketAddr::new(host, port))
    }
}

/// Asks the server at `addr` where WebTransport is.
///
/// # Errors
/// The request fails, or the server offers no WebTransport.
pub async fn offer(addr: SocketAddr) -> Result<Offer> {
    offer_for(addr, "").await
}

/// Asks the server at `addr` where the game in `folder` (`""` for the
/// first game) is over WebTransport.
///
/// # Errors
/// The request fails, or the server offers no WebTransport.
pub async fn offer_for(addr: SocketAddr, folder: &str) -> Result<Offer> {
    let path = match folder {
        "" => "/transport".to_string(),
        folder => format!("/{folder}/transport"),
    };
    let body = crate::net::http_get(addr, &path).await?;
    let json: serde_json::Value = serde_json::from_str(&body).context("/transport is not JSON")?;
    let wt = json
        .get("webtransport")
        .filter(|w| !w.is_null())
        .ok_or_else(|| anyhow!("the server offers no WebTransport: {body}"))?;
    let url = wt["url"]
        .as_str()
        .ok_or_else(|| anyhow!("no url in {body}"))?
        .to_string();
    let hashes = wt["certificate_hashes"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|h| h.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    Ok(Offer { url, hashes })
}

fn digest(hex: &str) -> Result<Sha256Digest> {
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| {
            hex.get(i..i + 2)
                .and_then(|b| u8::from_str_radix(b, 16).ok())
                .ok_or_else(|| anyhow!("`{hex}` is not a hex SHA-256"))
        })
        .collect::<Result<_>>()?;
    let array: [u8; 32] = bytes
        .try_into()
        .map_err(|_| anyhow!("`{hex}` is not 32 bytes"))?;
    Ok(Sha256Digest::new(array))
}

/// A WebTransport session to `offer` (its URL, pinning its hashes) from
/// `source` when given, with no stream opened yet.
///
/// # Errors
/// The hashes are not hex or the handshake fails (a wrong path included).
pub async fn bare_session(offer: &Offer, source: Option<IpAddr>) -> Result<Connection> {
    let hashes = offer
        .hashes
        .iter()
        .map(|h| digest(h))
        .collect::<Result<Vec<_>>>()?;
    let bind = SocketAddr::new(source.unwrap_or(IpAddr::from([127, 0, 0, 1])), 0);
    let config = ClientConfig::builder()
        .with_bind_address(bind)
        .with_server_certificate_hashes(hashes)
        .build();
    Endpoint::client(config)?
        .connect(&offer.url)
        .await
        .with_context(|| format!("connecting to {}", offer.url))
}

/// A WebTransport session with the server.
pub struct WtClient {
    connection: Connection,
    send: SendStream,
    recv: RecvStream,
    reader: StreamReader,
    buffer: Vec<u8>,
}

impl WtClient {
    /// Connects to `url` pinning `hashes`, from `source` (any port) when
    /// given, and opens the stream.
    ///
    /// # Errors
    /// The handshake or the stream fails.
    pub async fn connect(offer: &Offer, source: Option<IpAddr>) -> Result<WtClient> {
        WtClient::open(bare_session(offer, source).await?).await
    }

    /// Opens the stream of a session made by [`bare_session`].
    ///
    /// # Errors
    /// The stream cannot be opened.
    pub async fn open(connection: Connection) -> Result<WtClient> {
        let (send, recv) = connection.open_bi().await?.await?;
        Ok(WtClient {
            connection,
            send,
            recv,
            reader: StreamReader::new(STREAM_LIMIT),
            buffer: vec![0; 16 * 1024],
        })
    }

    /// Asks the server at `addr` for its offer and connects.
    ///
    /// # Errors
    /// As [`offer`] and [`WtClient::connect`].
    pub async fn to_server(addr: SocketAddr, source: Option<IpAddr>) -> Result<WtClient> {
        WtClient::connect(&offer(addr).await?, source).await
    }

    /// Sends a text message on the stream.
    ///
    /// # Errors
    /// The stream is gone.
    pub async fn send_reliable(&mut self, text: &str) -> Result<()> {
        self.send_reliable_frame(true, text.as_bytes()).await
    }

    /// Sends one message, text or binary, on the reliable stream.
    ///
    /// # Errors
    /// The stream is closed.
    pub async fn send_reliable_frame(&mut self, text: bool, payload: &[u8]) -> Result<()> {
        let mut framed = Vec::new();
        write_message(text, payload, &mut framed);
        self.send.write_all(&framed).await?;
        Ok(())
    }

    /// Sends a datagram.
    ///
    /// # Errors
    /// The connection is gone or the datagram is too large.
    pub fn send_datagram(&self, bytes: &[u8]) -> Result<()> {
        self.connection.send_datagram(bytes)?;
        Ok(())
    }

    /// The next message, from the stream or a datagram; `None` once the
    /// server closed.
    ///
    /// # Errors
    /// The stream broke its framing.
    pub async fn next(&mut self) -> Result<Option<Received>> {
        loop {
            if let Some(message) = self.reader.next_message()? {
                return Ok(Some(Received {
                    message,
                    datagram: false,
                }));
            }
            tokio::select! {
                datagram = self.connection.receive_datagram() => {
                    let Ok(datagram) = datagram else {
                        return Ok(None);
                    };
                    let bytes = datagram.payload().to_vec();
                    let message = if bytes.first() == Some(&b'{') {
                        StreamMessage::Text(String::from_utf8(bytes)?)
                    } else {
                        StreamMessage::Binary(bytes)
                    };
                    return Ok(Some(Received { message, datagram: true }));
                }
                chunk = self.recv.read(&mut self.buffer) => match chunk {
                    Ok(Some(n)) => {
                        let bytes = self.buffer.get(..n).unwrap_or_default().to_vec();
                        self.reader.push(&bytes);
                    }
                    Ok(None) | Err(_) => {
                        // The stream ended: what is buffered is all there is.
                        return match self.reader.next_message()? {
                            Some(message) => Ok(Some(Received { message, datagram: false })),
                            None => Ok(None),
                        };
                    }
                },
            }
        }
    }

    /// The reason the server closed with, once it has.
    pub async fn closed(&self) -> String {
        self.connection.closed().await.to_string()
    }

    /// The next text message (skipping binary ones).
    ///
    /// # Errors
    /// The connection ended first.
    pub async fn next_text(&mut self) -> Result<(String, bool)> {
        loop {
            match self.next().await? {
                Some(Received {
                    message: StreamMessage::Text(text),
                    datagram,
                }) => return Ok((text, datagram)),
                Some(_) => {}
                None => bail!("the connection ended"),
            }
        }
    }
}

impl WtClient {
    /// Connects to `offer` from `source`, says `hello` as `name` (JSON
    /// snapshots) into `room` as a player of game `G`, and waits for
    /// `welcome`.
    ///
    /// # Errors
    /// The handshake fails, or the connection ends (or `DEADLINE` passes)
    /// before `welcome`.
    pub async fn join<G: Networked>(
        offer: &Offer,
        source: IpAddr,
        name: &str,
        room: &str,
    ) -> Result<WtClient> {
        let mut client = WtClient::connect(offer, Some(source)).await?;
        let hello = encode(&ClientMessage::<G::Wire>::Hello {
            name: name.into(),
            protocol: PROTOCOL_VERSION,
            room: Some(room.into()),
            encoding: Encoding::Json,
            game: Some(GameId::of::<G>()),
        });
        client.send_reliable(&hello).await?;
        loop {
            let (text, _) = tokio::time::timeout(DEADLINE, client.next_text()).await??;
            if let ServerMessage::Welcome { .. } = decode_server::<G>(&text)? {
                return Ok(client);
            }
        }
    }

    /// Snapshots of game `G` (as datagrams or on the stream) received
    /// within `span`.
    ///
    /// # Errors
    /// The connection ends meanwhile.
    pub async fn snapshots_within<G: Networked>(
        &mut self,
        span: std::time::Duration,
    ) -> Result<u32> {
        let end = tokio::time::Instant::now() + span;
        let mut count = 0;
        while let Ok(next) = tokio::time::timeout_at(end, self.next()).await {
            let Some(received) = next? else {
                bail!("the connection ended");
            };
            if let StreamMessage::Text(text) = received.message {
                if let Ok(ServerMessage::Snapshot { .. }) = decode_server::<G>(&text) {
                    count += 1;
                }
            }
        }
        Ok(count)
    }
}
