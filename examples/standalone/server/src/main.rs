//! Drift's server: every limit, the metrics, the recorder, WebTransport
//! and the Agones mode of the Skirmish server, hosting one game. Its pages
//! are in `--web-dir` (default `web`, beside this workspace's manifest when
//! run from there): only the bundle, `web/pkg`; the server serves the
//! page shell's page.

use clap::Parser as _;
use skirmish_drift::Drift;
use skirmish_server::{Catalog, ServerConfig};

fn main() -> anyhow::Result<()> {
    skirmish_server::log_to_stderr();
    let config = ServerConfig::parse();
    skirmish_server::serve(config, Catalog::new().host::<Drift>("", ()))
}
