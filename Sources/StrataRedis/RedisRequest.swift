import NIOCore

/// Commands on their way, encoded back to back: one entry of `replies` per
/// command, in order (a send of several commands appears once per command).
struct RedisRequest: Sendable {
    let bytes: ByteBuffer
    let replies: [PendingReplies]
}
