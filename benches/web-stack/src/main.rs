//! The smallest server each stack can make that answers a page and echoes
//! WebSocket messages, so that the size each adds to a release executable
//! can be measured (`bash measure.sh`, written down in ../web-stack.md).

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("{}", listener.local_addr()?);
    #[cfg(feature = "tls")]
    tls::touch();
    #[cfg(feature = "hyper")]
    with_hyper::serve(listener).await;
    #[cfg(feature = "axum")]
    with_axum::serve(listener).await;
    #[cfg(feature = "baseline")]
    drop(listener);
    Ok(())
}

#[cfg(feature = "tls")]
mod tls {
    /// Builds a server configuration, so the handshake code is linked.
    pub fn touch() {
        use rustls_pki_types::pem::PemObject;
        let certs: Vec<_> = rustls_pki_types::CertificateDer::pem_file_iter("cert.pem")
            .map(|i| i.filter_map(Result::ok).collect())
            .unwrap_or_default();
        let Ok(key) = rustls_pki_types::PrivateKeyDer::from_pem_file("key.pem") else {
            return;
        };
        let config = tokio_rustls::rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(certs, key);
        if let Ok(config) = config {
            let _ = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
        }
    }
}

#[cfg(feature = "hyper")]
mod with_hyper {
    use futures_util::{SinkExt, StreamExt};
    use http_body_util::Full;
    use hyper::body::{Bytes, Incoming};
    use hyper::{Request, Response};
    use hyper_util::rt::TokioIo;
    use tokio_tungstenite::tungstenite::protocol::Role;

    async fn handle(mut req: Request<Incoming>) -> Result<Response<Full<Bytes>>, hyper::Error> {
        if let Some(key) = req.headers().get("sec-websocket-key") {
            let accept = tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes());
            tokio::spawn(async move {
                if let Ok(up) = hyper::upgrade::on(&mut req).await {
                    let mut ws = tokio_tungstenite::WebSocketStream::from_raw_socket(
                        TokioIo::new(up),
                        Role::Server,
                        None,
                    )
                    .await;
                    while let Some(Ok(m)) = ws.next().await {
                        let _ = ws.send(m).await;
                    }
                }
            });
            let mut res = Response::new(Full::new(Bytes::new()));
            *res.status_mut() = hyper::StatusCode::SWITCHING_PROTOCOLS;
            res.headers_mut().insert("upgrade", "websocket".parse().unwrap());
            res.headers_mut().insert("connection", "upgrade".parse().unwrap());
            res.headers_mut().insert("sec-websocket-accept", accept.parse().unwrap());
            return Ok(res);
        }
        Ok(Response::new(Full::new(Bytes::from_static(b"<p>hi</p>"))))
    }

    pub async fn serve(listener: tokio::net::TcpListener) {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), hyper::service::service_fn(handle))
                    .with_upgrades()
                    .await;
            });
        }
    }
}

#[cfg(feature = "axum")]
mod with_axum {
    use axum::extract::ws::{WebSocket, WebSocketUpgrade};
    use axum::routing::get;

    async fn echo(mut socket: WebSocket) {
        while let Some(Ok(m)) = socket.recv().await {
            let _ = socket.send(m).await;
        }
    }

    pub async fn serve(listener: tokio::net::TcpListener) {
        let app = axum::Router::new()
            .route("/", get(|| async { axum::response::Html("<p>hi</p>") }))
            .route("/ws", get(|ws: WebSocketUpgrade| async { ws.on_upgrade(echo) }));
        let _ = axum::serve(listener, app).await;
    }
}
