//! The HTTP side: a `tiny_http` server on its own thread. `GET /metrics`
//! is answered with [`crate::render`] of `Db::stats()`; other paths get
//! 404, other methods 405.
//!
//! Invariant: the thread runs until [`MetricsServer::stop`] (or drop),
//! which unblocks its `recv` and joins it; no request is answered after
//! `stop` returns. The listening socket is closed by `tiny_http`'s own
//! accept thread, which the server's drop wakes and which exits by itself
//! right after (it is not joined: the port may accept a connection or two
//! more, which are then closed unanswered).

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use shale::Db;
use tiny_http::{Header, Method, Response, Server};

use crate::Error;

/// The content type of the OpenMetrics text format the encoder writes
/// (Prometheus scrapes it as such).
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// A running endpoint. Dropping it stops the server and joins its thread.
pub struct MetricsServer {
    addr: SocketAddr,
    server: Arc<Server>,
    stopping: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for MetricsServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MetricsServer({})", self.addr)
    }
}

/// Serves `GET /metrics` for `db` on `addr` (port 0: an ephemeral port,
/// see [`MetricsServer::local_addr`]). The server keeps a clone of `db`.
pub fn serve(db: &Db, addr: impl ToSocketAddrs) -> Result<MetricsServer, Error> {
    let addr = addr
        .to_socket_addrs()
        .map_err(|e| Error::Bind(e.to_string()))?
        .next()
        .ok_or_else(|| Error::Bind("no address".to_string()))?;
    let server = Server::http(addr).map_err(|e| Error::Bind(e.to_string()))?;
    let addr = server
        .server_addr()
        .to_ip()
        .ok_or_else(|| Error::Bind("not an IP address".to_string()))?;
    let server = Arc::new(server);
    let stopping = Arc::new(AtomicBool::new(false));
    let thread = {
        let (server, stopping, db) = (Arc::clone(&server), Arc::clone(&stopping), db.clone());
        std::thread::Builder::new()
            .name("shale-metrics".to_string())
            .spawn(move || run(&server, &stopping, &db))
            .map_err(|e| Error::Bind(e.to_string()))?
    };
    Ok(MetricsServer {
        addr,
        server,
        stopping,
        thread: Some(thread),
    })
}

fn run(server: &Server, stopping: &AtomicBool, db: &Db) {
    while !stopping.load(Ordering::Acquire) {
        let Ok(req) = server.recv() else {
            continue; // unblocked by `stop` (or a failed accept): look again
        };
        let resp = match (req.method(), req.url()) {
            (Method::Get, "/metrics") => {
                let resp = Response::from_string(crate::render(&db.stats()));
                match Header::from_bytes("Content-Type", CONTENT_TYPE) {
                    Ok(h) => resp.with_header(h),
                    Err(()) => resp, // not reached: the header is valid
                }
            }
            (Method::Get, _) => Response::from_string("not found\n").with_status_code(404),
            _ => Response::from_string("method not allowed\n").with_status_code(405),
        };
        // A client that went away is its own problem.
        let _ = req.respond(resp);
    }
}

impl MetricsServer {
    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops the server and joins its thread.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.stopping.store(true, Ordering::Release);
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}
