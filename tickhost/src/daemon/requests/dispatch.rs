//! The one dispatch of a client's request: the request checked in itself
//! ([`super::gated::problem`]), admitted by its consent class
//! ([`super::admit`], the one reader of the request table), then answered
//! by its family: [`super::reads`], [`super::gated`], [`super::ending`],
//! [`super::policy`], `open`, `watch`. The [`Caller`] is made once here and
//! handed on.

use super::admit::{admit, Admission};
use super::{ending, gated, policy, reads, timeline};
use crate::daemon::connection::{Caller, Connection};
use crate::daemon::consent;
use crate::daemon::open::open;
use crate::daemon::registry::Shared;
use crate::daemon::watch::{self, Flow};
use std::sync::Arc;
use tickloop_proto::wire::{ClientReply, ClientRequest, Envelope, ServerMessage};

/// Answers `envelope` on `conn`: `Flow::Continue` to read the next
/// request, `Flow::HungUp` when the connection is over (the client went
/// away, or tickhost shuts down).
pub async fn dispatch(
    shared: &Arc<Shared>,
    conn: &mut Connection,
    envelope: Envelope<ClientRequest>,
) -> Flow {
    let mut caller = Caller {
        conn,
        id: envelope.id,
    };
    let request = envelope.request;
    if let Some(problem) = gated::problem(shared, &request) {
        return reply(&caller, problem).await;
    }
    let licence = match admit(shared, &request, &mut caller).await {
        Admission::Go(licence) => licence,
        Admission::Answer(answer) => return reply(&caller, answer).await,
    };
    let client = caller.client();
    let answer = match request {
        ClientRequest::Watch {
            instances,
            interval_ms,
        } => {
            let conn = &mut *caller.conn;
            let streamed = watch::stream(
                shared,
                client,
                caller.id,
                instances,
                interval_ms,
                &mut conn.reader,
                &conn.out,
            );
            return streamed.await.unwrap_or(Flow::HungUp);
        }
        ClientRequest::Shutdown => {
            let answer = ending::shutdown(shared, client).await;
            // No new client reaches this daemon from now on (and the
            // socket is not made again).
            shared.leave();
            let _ = std::fs::remove_file(shared.dir.socket());
            let message = ServerMessage::Reply {
                id: caller.id,
                reply: answer,
            };
            let _ = caller.conn.out.send_written(&message).await;
            shared.shutdown.send_replace(true);
            return Flow::HungUp;
        }
        ClientRequest::Open(request) => open(shared, request, client, licence).await,
        ClientRequest::List => reads::list(shared),
        ClientRequest::Describe { instance } => reads::describe(shared, &instance, client).await,
        ClientRequest::Read { instance } => reads::read(shared, &instance, client).await,
        ClientRequest::Screen {
            instance,
            history,
            image,
        } => reads::screen(shared, &instance, history, image).await,
        ClientRequest::Approvals => reads::approvals(shared),
        ClientRequest::ApprovalLog { instance } => reads::approval_log(shared, &instance),
        ClientRequest::Activity { instance, after } => {
            reads::activity(shared, &instance, after).await
        }
        ClientRequest::Timeline {
            since,
            agent,
            after,
            limit,
        } => {
            let asked = timeline::Asked {
                since,
                agent,
                after,
                limit,
            };
            timeline::timeline(shared, asked).await
        }
        ClientRequest::Wait { instance, wait } => {
            match reads::wait(shared, &instance, wait, &mut caller).await {
                Some(answer) => answer,
                None => return Flow::HungUp,
            }
        }
        ClientRequest::Call { instance, call } => {
            gated::call(shared, &instance, call, &caller).await
        }
        ClientRequest::Input { instance, text } => {
            gated::input(shared, &instance, text, &caller).await
        }
        ClientRequest::Keys {
            instance,
            text,
            keys,
        } => gated::keys(shared, &instance, (text, keys), &caller).await,
        ClientRequest::Run { instance, run } => {
            match gated::run(shared, &instance, run, &mut caller).await {
                Some(answer) => answer,
                None => return Flow::HungUp,
            }
        }
        ClientRequest::Reload { instance } => gated::reload(shared, &instance, &caller).await,
        ClientRequest::Record { instance } => gated::record(shared, &instance),
        ClientRequest::Close { instance } => {
            ending::close(shared, &instance, client, licence).await
        }
        ClientRequest::Decide {
            instance,
            call,
            approve,
            reason,
            by,
            host,
        } => policy::decide(shared, (&instance, &call), approve, reason, (by, host)).await,
        ClientRequest::SetApproval { instance, change } => {
            policy::set_approval(shared, &instance, change, client).await
        }
        // Nothing of this connection is held now (a held request's
        // `withdraw` is read while it waits).
        ClientRequest::Withdraw { request, .. } => consent::not_held(request),
    };
    reply(&caller, answer).await
}

/// Sends the answer to `caller`'s request.
async fn reply(caller: &Caller<'_>, reply: ClientReply) -> Flow {
    let message = ServerMessage::Reply {
        id: caller.id,
        reply,
    };
    match caller.conn.out.send(&message).await {
        Ok(()) => Flow::Continue,
        Err(_) => Flow::HungUp,
    }
}
