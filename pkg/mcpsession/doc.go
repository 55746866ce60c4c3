// Package mcpsession serves MCP sessions (protocol 2025-11-25, 2025-06-18
// and 2025-03-26) on go-sdk from the table, so that any Lambda instance
// serves any session. The SDK keeps a session, and the SSE streams a
// client resumes, only in the memory of the process that started them; a
// Lambda function has many processes, any of which may be cold. So:
//
//   - Sessions in the table (record.go). initialize stores a record (the
//     SDK's session state, the principal, timestamps, later the consents
//     it waits for) under an unguessable
//     id with a sliding TTL; every later request reads it, and only its
//     creator finds it. The TTL is rewritten at most every quarter TTL,
//     so that most requests cost one read and no write.
//   - One request, one SDK connection (conn.go). Each HTTP request runs
//     through a fresh SDK session restored from the record, on a
//     connection that carries that one message and its answer, and is
//     answered as JSON (handler.go, with its statuses: 400 for a bad or
//     missing session id, 404 for no session, 503 when the table fails,
//     which must never look like a lost session).
//   - The consent stream (consent.go). A tool that needs the user's yes
//     records its input request (RecordInput) instead of blocking on an
//     elicitation round trip inside the request. The Handler keeps the
//     pending tools/call in the session record (its consents, by stream
//     id), in one compare-and-set that also slides the TTL, and sends the
//     elicitation/create on the tools/call's SSE stream, which then ends
//     (SEP-1699). The client's answer, POSTed to any instance, is kept
//     there as the stream's settlement, if the record the POST has read
//     shows none: the first answer counts, and keeping it is the POST's
//     one round trip after the session's. Every write of the record is a
//     compare-and-set on the version read; one that loses to another
//     request of the session reads again and decides again (modify), so
//     no request's change undoes another's. A session keeps at most
//     maxWaiting unanswered consents and a record of at most
//     maxRecordBytes; a stream goes a TTL after it asked, from the
//     record's next write. Streams kept by earlier releases as event
//     items are not read: their answer and their GET are refused as
//     expired, and the client asks again.
//   - Replay (replay.go). The client comes back with GET and Last-Event-ID,
//     on any instance, whose read of the session record, which holds the
//     pending call and its settlement, starts with the security chain's
//     (prefetch.go). Once the settlement is there, the GET re-runs the
//     pending tools/call with the answer and sends its result as event 1;
//     the tool's own record (the task's, or a consent record) makes that
//     run count once, and replays it to any later GET. Until then,
//     keep-alive events with new ids; after about a minute without an
//     answer, the GET settles the consent as unanswered, if no answer
//     came first, and the call ends with the server's refusal
//     (Handler.Unanswered), nothing dispatched. So the work of an answer
//     is done by the request that brings the result back, which waits as
//     long as the run takes; a client that answers and never resumes has
//     nothing dispatched.
//
// The 2026-07-28 generation needs none of this: it is stateless, and a
// consent is an MRTR round whose retry may reach any instance.
package mcpsession
