import NIOCore

/// One command on its way: its encoded bytes and where its reply goes.
struct RedisRequest: Sendable {
    let bytes: ByteBuffer
    let reply: ReplySlot
}
