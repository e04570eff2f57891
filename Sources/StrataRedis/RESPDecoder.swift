import NIOCore

/// Decodes replies from the byte stream with one ``RESPParser`` per
/// connection, so a reply split across reads resumes where it stopped.
/// A ``RESPParseError`` goes down the pipeline as an error.
struct RESPDecoder: ByteToMessageDecoder {
    typealias InboundOut = RESPValue

    private var parser: RESPParser

    init(limits: RESPLimits = .default) {
        parser = RESPParser(limits: limits)
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let value = try parser.next(&buffer) else { return .needMoreData }
        context.fireChannelRead(Self.wrapInboundOut(value))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        try decode(context: context, buffer: &buffer)
    }
}
