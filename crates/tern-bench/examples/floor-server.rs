//! The floor for a TLS handshake benchmark: the smallest useful TLS server (tokio current-thread
//! with rustls and aws-lc-rs, tern's TLS policy), which answers every connection's first request
//! with a fixed 200 and closes. No HTTP parsing, no timeouts, no limits, no counters: whatever tern
//! spends per handshake beyond this is tern's overhead (see BENCHMARKS.md).
//!
//! `floor-server ADDR CERT.pem` (chain and key in one PEM file).

use std::sync::Arc;

use tern_config::{CertSource, TlsSettings};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok";

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(addr), Some(cert)) = (args.next(), args.next()) else {
        anyhow::bail!("usage: floor-server ADDR CERT.pem");
    };
    let settings = TlsSettings::new(vec![CertSource::Combined(cert.into())]);
    let config = tern_tls::server_config(&settings)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, serve(addr, config))
}

async fn serve(addr: String, config: Arc<rustls::ServerConfig>) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening: floor https://{}", listener.local_addr()?);
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    loop {
        let (tcp, _) = listener.accept().await?;
        let acceptor = acceptor.clone();
        tokio::task::spawn_local(async move {
            let _ = tcp.set_nodelay(true);
            let Ok(mut tls) = acceptor.accept(tcp).await else {
                return;
            };
            let mut buf = [0u8; 4096];
            if matches!(tls.read(&mut buf).await, Ok(n) if n > 0) {
                let _ = tls.write_all(RESPONSE).await;
                let _ = tls.shutdown().await;
            }
        });
    }
}
