//! A view on a launcher's socket spoken to line by line (the attach
//! protocol by hand), for tests of what the launcher sends views.

use super::{Host, WAIT};

/// What a raw view gets: its reader (after the first snapshot), its
/// writer, the first snapshot.
pub type RawView = (
    std::io::BufReader<std::os::unix::net::UnixStream>,
    std::os::unix::net::UnixStream,
    tickloop_proto::attach::Snapshot,
);

/// A raw view on `id`'s launcher, saying `hello` and `cols`x`rows`: its
/// reader (after the first snapshot, returned) and writer.
pub fn raw_view(
    host: &Host,
    id: &str,
    hello: &tickloop_proto::wire::Hello,
    cols: u16,
    rows: u16,
) -> RawView {
    raw_view_lending(host, id, hello, (cols, rows), None)
}

/// [`raw_view`] that lends the launcher its terminal `tty` (`ViewHello::tty`).
pub fn raw_view_lending(
    host: &Host,
    id: &str,
    hello: &tickloop_proto::wire::Hello,
    (cols, rows): (u16, u16),
    tty: Option<tickloop_proto::attach::ViewTty>,
) -> (
    std::io::BufReader<std::os::unix::net::UnixStream>,
    std::os::unix::net::UnixStream,
    tickloop_proto::attach::Snapshot,
) {
    use std::io::{BufRead, Write};
    use tickloop_proto::attach::{TermCaps, ToView, ViewHello};
    use tickloop_proto::wire::HelloReply;
    let (kind, name) = tickloop_client::paths::parse_id(id).expect("an id");
    let socket = tickloop_client::paths::RuntimeDir::at(host.runtime())
        .instance_files(kind, name)
        .expect("instance files")
        .socket;
    let stream = std::os::unix::net::UnixStream::connect(socket).expect("the launcher");
    stream.set_read_timeout(Some(WAIT)).expect("timeout");
    let mut writer = stream.try_clone().expect("clone");
    let mut reader = std::io::BufReader::new(stream);
    let mut send = |line: String| writeln!(writer, "{line}").expect("write to the launcher");
    send(serde_json::to_string(hello).expect("json"));
    let mut line = String::new();
    reader.read_line(&mut line).expect("hello reply");
    let reply: HelloReply = serde_json::from_str(&line).expect("hello reply JSON");
    assert!(reply.refused.is_none(), "{line}");
    let view = ViewHello {
        cols,
        rows,
        term: TermCaps::default(),
        client: Some("raw-test".into()),
        tty,
    };
    send(serde_json::to_string(&view).expect("json"));
    line.clear();
    reader.read_line(&mut line).expect("the first snapshot");
    let Ok(ToView::Snapshot(first)) = serde_json::from_str::<ToView>(&line) else {
        panic!("expected a snapshot first: {line}");
    };
    (reader, writer, first)
}
