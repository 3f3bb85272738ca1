//! The stdio transport of `tickloop mcp`: one JSON-RPC message per line, with
//! the error replies JSON-RPC 2.0 asks for where rmcp's own stdio transport
//! stays silent.
//!
//! * A line that is not JSON gets `-32700 Parse error` with `"id": null`.
//! * JSON that is not a JSON-RPC message (a batch, a request without a
//!   method, a bad `id`) gets `-32600 Invalid Request`, with the request's id
//!   when it has a usable one.
//! * A line over [`MAX_LINE`] (16 MiB) is not buffered: the bridge reads the
//!   `id` from its first 16 MiB when it can, skips the rest, answers
//!   `-32600` saying so, and writes a line on stderr.
//!
//! Everything else goes to rmcp unchanged. A reader task does the reading and
//! answers, so `receive` (which rmcp polls inside a `select!`) is a channel
//! receive and cannot lose a line when it is cancelled. Replies of the reader
//! task and of rmcp go through one writer under a lock, a whole line at a time.

use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::{json, Value};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, Mutex};

/// Longest line read; the same as rmcp's own stdio transport.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

type Writer = Arc<Mutex<Box<dyn AsyncWrite + Send + Unpin>>>;

/// The transport handed to rmcp.
pub struct Gate {
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleServer>>,
    writer: Writer,
}

impl Gate {
    /// A transport over `read`/`write`, its reader task spawned on the
    /// current runtime.
    pub fn new<R, W>(read: R, write: W) -> Gate
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let writer: Writer = Arc::new(Mutex::new(Box::new(write)));
        let (tx, incoming) = mpsc::channel(64);
        tokio::spawn(read_loop(BufReader::new(read), tx, writer.clone()));
        Gate { incoming, writer }
    }

    /// Standard input and output (as pipes when they are: see rmcp's
    /// `stdio_pipes`).
    pub fn stdio() -> Gate {
        let (read, write) = rmcp::transport::stdio_pipes();
        Gate::new(read, write)
    }
}

async fn write_line(writer: &Writer, mut line: Vec<u8>) -> std::io::Result<()> {
    line.push(b'\n');
    let mut w = writer.lock().await;
    w.write_all(&line).await?;
    w.flush().await
}

/// A JSON-RPC error reply, `id` being `null` when none could be read.
fn error_line(id: Value, code: i64, message: &str, data: Option<Value>) -> Vec<u8> {
    let mut error = json!({"code": code, "message": message});
    if let Some(data) = data {
        error["data"] = data;
    }
    let reply = json!({"jsonrpc": "2.0", "id": id, "error": error});
    serde_json::to_vec(&reply).unwrap_or_default()
}

impl Transport<RoleServer> for Gate {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        async move {
            let line = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            write_line(&writer, line).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        self.incoming.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.incoming.close();
        self.writer.lock().await.flush().await
    }
}

/// One line read, or why there is none.
enum Line {
    Whole(Vec<u8>),
    /// Over [`MAX_LINE`]: its first [`MAX_LINE`] bytes (the rest was skipped).
    Oversized(Vec<u8>),
    End,
}

async fn read_line<R: AsyncRead + Unpin>(read: &mut BufReader<R>) -> Line {
    let mut line = Vec::new();
    let mut oversized = false;
    loop {
        let (used, done) = {
            let available = match read.fill_buf().await {
                Ok(a) => a,
                Err(e) => {
                    eprintln!("tickloop mcp: cannot read standard input: {e}");
                    return Line::End;
                }
            };
            if available.is_empty() {
                // End of input; a last line without a newline still counts.
                return match (oversized, line.is_empty()) {
                    (true, _) => Line::Oversized(line),
                    (false, true) => Line::End,
                    (false, false) => Line::Whole(line),
                };
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let room = MAX_LINE.saturating_sub(line.len());
            let body = newline.map_or(take, |i| i);
            if body > room {
                oversized = true;
            }
            line.extend_from_slice(&available[..body.min(room)]);
            (take, newline.is_some())
        };
        read.consume(used);
        if done {
            return if oversized {
                Line::Oversized(line)
            } else {
                Line::Whole(line)
            };
        }
    }
}

async fn read_loop<R: AsyncRead + Unpin>(
    mut read: BufReader<R>,
    tx: mpsc::Sender<RxJsonRpcMessage<RoleServer>>,
    writer: Writer,
) {
    loop {
        let reply = match read_line(&mut read).await {
            Line::End => return,
            Line::Oversized(prefix) => {
                let id = top_level_id(&prefix).unwrap_or(Value::Null);
                eprintln!(
                    "tickloop mcp: a message of more than {MAX_LINE} bytes (16 MiB) was skipped unread (request id {id}); it was answered with an error"
                );
                Some(error_line(
                    id,
                    -32600,
                    "Invalid Request: the message is longer than 16 MiB, the most this server reads as one line; it was skipped. Send less (for example a file path rather than the file's content).",
                    Some(json!({"limit_bytes": MAX_LINE})),
                ))
            }
            Line::Whole(line) => match sort(&line) {
                Sorted::Message(message) => {
                    if tx.send(*message).await.is_err() {
                        return;
                    }
                    None
                }
                Sorted::Ignore => None,
                Sorted::Reply(reply) => Some(reply),
            },
        };
        if let Some(reply) = reply {
            if write_line(&writer, reply).await.is_err() {
                return;
            }
        }
    }
}

/// What to do with one whole line.
enum Sorted {
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    Reply(Vec<u8>),
    Ignore,
}

fn sort(line: &[u8]) -> Sorted {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Sorted::Ignore;
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("tickloop mcp: a line that is not JSON was answered with -32700: {e}");
            return Sorted::Reply(error_line(
                Value::Null,
                -32700,
                &format!(
                    "Parse error: the line is not JSON ({e}). Send one JSON-RPC message per line."
                ),
                None,
            ));
        }
    };
    let Value::Object(map) = &value else {
        return Sorted::Reply(error_line(
            Value::Null,
            -32600,
            "Invalid Request: a message must be one JSON object (JSON-RPC batches are not part of MCP).",
            None,
        ));
    };
    let id = map.get("id").cloned();
    let usable_id = match &id {
        Some(Value::String(_)) => id.clone(),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => id.clone(),
        _ => None,
    };
    let is_notification = id.is_none() && map.contains_key("method");
    match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value.clone()) {
        Ok(message) => Sorted::Message(Box::new(message)),
        // rmcp ignores notifications it cannot read; no reply is allowed.
        Err(_) if is_notification => Sorted::Ignore,
        Err(e) => {
            let why = if map.get("jsonrpc") != Some(&json!("2.0")) {
                "\"jsonrpc\" must be \"2.0\"".to_string()
            } else if id.is_some() && usable_id.is_none() {
                "\"id\" must be a string or an integer".to_string()
            } else if !map.contains_key("method")
                && !map.contains_key("result")
                && !map.contains_key("error")
            {
                "a request needs \"method\"".to_string()
            } else {
                e.to_string()
            };
            Sorted::Reply(error_line(
                usable_id.unwrap_or(Value::Null),
                -32600,
                &format!("Invalid Request: {why}."),
                None,
            ))
        }
    }
}

/// The value of the top-level `"id"` of a JSON object whose text starts
/// with `text` (which may be cut anywhere after the id), if it is a string
/// or an integer.
pub fn top_level_id(text: &[u8]) -> Option<Value> {
    let mut i = skip_ws(text, 0);
    if text.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(text, i);
        if text.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(text, i)?;
        let key = &text[i + 1..key_end - 1];
        i = skip_ws(text, key_end);
        if text.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(text, i + 1);
        let value_end = value_end(text, i)?;
        if key == b"id" {
            let id: Value = serde_json::from_slice(&text[i..value_end]).ok()?;
            return match &id {
                Value::String(_) => Some(id),
                Value::Number(n) if n.is_i64() || n.is_u64() => Some(id),
                _ => None,
            };
        }
        i = skip_ws(text, value_end);
        match text.get(i) {
            Some(b',') => i += 1,
            _ => return None,
        }
    }
}

fn skip_ws(text: &[u8], mut i: usize) -> usize {
    while text.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The index after the string that starts (with `"`) at `i`.
fn string_end(text: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        match text.get(j)? {
            b'\\' => j += 2,
            b'"' => return Some(j + 1),
            _ => j += 1,
        }
    }
}

/// The index after the JSON value that starts at `i`.
fn value_end(text: &[u8], i: usize) -> Option<usize> {
    match text.get(i)? {
        b'"' => string_end(text, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match text.get(j)? {
                    b'"' => {
                        j = string_end(text, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while text
                .get(j)
                .is_some_and(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace())
            {
                j += 1;
            }
            text.get(j)?;
            Some(j)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_found_in_a_cut_message() {
        let cut = br#"{"jsonrpc":"2.0", "params":{"a":[1,{"id":9}],"s":"x\"}"},"id":42,"method":"tools/call","params":{"arguments":{"t":"xxxxxxxx"#;
        assert_eq!(top_level_id(cut), Some(json!(42)));
        assert_eq!(top_level_id(br#"{"id":"abc","#), Some(json!("abc")));
        assert_eq!(
            top_level_id(br#"{"method":"x","params":{"text":"aaaa"#),
            None
        );
        assert_eq!(top_level_id(br#"{"id":null,"#), None);
        assert_eq!(top_level_id(b"[1,2"), None);
    }

    fn reply(line: &[u8]) -> Value {
        match sort(line) {
            Sorted::Reply(r) => serde_json::from_slice(&r).expect("JSON reply"),
            Sorted::Message(_) => panic!("passed on"),
            Sorted::Ignore => panic!("ignored"),
        }
    }

    #[test]
    fn not_json_is_a_parse_error_with_a_null_id() {
        let r = reply(b"{\"jsonrpc\":\"2.0\",\"id\":1,");
        assert_eq!(r["error"]["code"], -32700);
        assert!(r.as_object().is_some_and(|m| m.contains_key("id")));
        assert_eq!(r["id"], Value::Null);
    }

    #[test]
    fn json_that_is_no_message_is_an_invalid_request() {
        assert_eq!(reply(b"[]")["error"]["code"], -32600);
        let r = reply(br#"{"jsonrpc":"2.0","id":7}"#);
        assert_eq!(r["error"]["code"], -32600);
        assert_eq!(r["id"], 7);
        assert!(matches!(
            sort(br#"{"jsonrpc":"2.0","method":"tools/list","id":3}"#),
            Sorted::Message(_)
        ));
        assert!(matches!(
            sort(br#"{"jsonrpc":"2.0","method":"notifications/whatever","params":5}"#),
            Sorted::Ignore | Sorted::Message(_)
        ));
    }
}
