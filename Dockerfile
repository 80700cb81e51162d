# syntax=docker/dockerfile:1
#
# The Skirmish server as an Agones game server: the release server built with
# the `agones` feature, and the release web client it serves, on a slim
# Debian as a non-root user. Build from the project root:
#
#   docker build -t skirmish-server .
#
# See docs/DEPLOY.md for the Fleet that runs it and what was checked here.

ARG RUST_VERSION=1.95
ARG DEBIAN=bookworm

# ---- build: the server (with Agones) and the wasm client ------------------
FROM rust:${RUST_VERSION}-${DEBIAN} AS build
# protoc and the well-known types: the Agones SDK compiles its protos.
RUN apt-get update \
 && apt-get install -y --no-install-recommends protobuf-compiler libprotobuf-dev \
 && rm -rf /var/lib/apt/lists/*
RUN rustup target add wasm32-unknown-unknown
WORKDIR /src
# wasm-bindgen-cli must match the wasm-bindgen version Cargo.lock pins.
COPY Cargo.lock ./
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    version="$(grep -A1 '^name = "wasm-bindgen"$' Cargo.lock | sed -n 's/^version = "\(.*\)"$/\1/p')" \
 && cargo install wasm-bindgen-cli --version "$version" --locked
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p skirmish-server --features agones \
 && cargo build --profile wasm-release --locked -p skirmish-tanks-page --target wasm32-unknown-unknown \
 && mkdir -p /out/web/pkg \
 && cp target/release/skirmish-server /out/ \
 && cp web/index.html /out/web/ \
 && wasm-bindgen --target web --no-typescript --out-dir /out/web/pkg --out-name skirmish_client \
      target/wasm32-unknown-unknown/wasm-release/skirmish_tanks_page.wasm

# ---- run: the binary and the page, nothing else ---------------------------
FROM debian:${DEBIAN}-slim
RUN groupadd --system --gid 10001 skirmish \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin skirmish
COPY --from=build /out/ /app/
USER 10001:10001
# WebSocket and HTTP on TCP, WebTransport on UDP: the same port number.
EXPOSE 7777/tcp 7777/udp
ENTRYPOINT ["/app/skirmish-server", "--addr", "0.0.0.0:7777", "--web-dir", "/app/web", "--agones"]
