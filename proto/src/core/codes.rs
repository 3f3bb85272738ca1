//! The JSON-RPC error codes of the Tick protocol 3, in one place: the host
//! (the session core, tickhost, the MCP bridge) and the Tick side
//! (`tickloop-tick`) name them from here.
//!
//! A code in [`NOT_EXECUTED`] means the call was refused before it ran
//! (spec-gaps 3.4); every other code means it may have had an effect.

/// JSON-RPC "invalid request"; the host also uses it for "the session is
/// not running" (not executed).
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC "method not found" (not executed).
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Unknown tool, or `args` invalid (not executed).
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC "internal error" (the call may have had an effect).
pub const INTERNAL: i64 = -32603;
/// The tool failed after it started (executed).
pub const TOOL_FAILED: i64 = -32000;
/// The call's `revision` is not the current catalog (not executed).
pub const STALE_REVISION: i64 = -32004;
/// tickhost's own: a person, the approval policy or the wait for approval
/// did not let the call through (not executed; the Tick never saw it).
pub const APPROVAL_REFUSED: i64 = -32010;

/// The codes a Tick uses for "not executed" (spec-gaps 3.4).
pub const NOT_EXECUTED: [i64; 4] = [
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    INVALID_PARAMS,
    STALE_REVISION,
];
