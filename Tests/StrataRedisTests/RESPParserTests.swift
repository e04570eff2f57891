import NIOCore
import NIOEmbedded
@testable import StrataRedis
import StrataTestSupport
import Testing

/// The reply decoder fed one read at a time (as the connection's handler
/// feeds it): split frames, malformed, nested and oversized replies; and the
/// handler on an `EmbeddedChannel`.
@Suite struct RESPParserTests {
    struct Decoded {
        var values: [RESPValue] = []
        var error: RESPParseError?
    }

    /// Feeds `chunks` one read at a time through the connection's decoder.
    func decode(_ chunks: [[UInt8]], limits: RESPLimits = .default) throws -> Decoded {
        var decoder = RESPDecoder(limits: limits)
        var decoded = Decoded()
        for chunk in chunks {
            decoder.feed(ByteBuffer(bytes: chunk))
            do {
                while let value = try decoder.next() { decoded.values.append(value) }
            } catch {
                decoded.error = error
                break
            }
        }
        return decoded
    }

    func decode(_ text: String, limits: RESPLimits = .default) throws -> Decoded {
        try decode([Array(text.utf8)], limits: limits)
    }

    static func buffer(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    static let stream = "+OK\r\n-ERR wrong type\r\n:42\r\n:-7\r\n$5\r\nhe\r\no\r\n$0\r\n\r\n$-1\r\n*-1\r\n*0\r\n"
        + "*3\r\n:1\r\n*2\r\n+a\r\n$1\r\nb\r\n$-1\r\n"
        + "_\r\n#t\r\n#f\r\n,3.5\r\n,-inf\r\n(-12345678901234567890\r\n!9\r\nERR bad x\r\n=8\r\ntxt:hey!\r\n"
        + "%2\r\n+k\r\n:1\r\n+m\r\n~1\r\n_\r\n~2\r\n:1\r\n:2\r\n>2\r\n+invalidate\r\n*1\r\n$1\r\nk\r\n"
        + "|1\r\n+ttl\r\n:3\r\n$1\r\nv\r\n"

    static let expected: [RESPValue] = [
        .simpleString("OK"), .error("ERR wrong type"), .integer(42), .integer(-7), .bulkString(buffer("he\r\no")),
        .bulkString(buffer("")), .bulkString(nil), .array(nil), .array([]),
        .array([.integer(1), .array([.simpleString("a"), .bulkString(buffer("b"))]), .bulkString(nil)]),
        .null, .boolean(true), .boolean(false), .double(3.5), .double(-.infinity), .bigNumber("-12345678901234567890"),
        .blobError(buffer("ERR bad x")), .verbatimString(format: "txt", text: buffer("hey!")),
        .map([RESPPair(key: .simpleString("k"), value: .integer(1)),
              RESPPair(key: .simpleString("m"), value: .set([.null]))]),
        .set([.integer(1), .integer(2)]), .push([.simpleString("invalidate"), .array([.bulkString(buffer("k"))])]),
        .attributed(attributes: [RESPPair(key: .simpleString("ttl"), value: .integer(3))], value: .bulkString(buffer("v"))),
    ]

    @Test func everySplitPointOfAMultiFrameStreamGivesTheSameReplies() throws {
        let bytes = Array(Self.stream.utf8)
        #expect(try decode([bytes]).values == Self.expected)
        for cut in 0...bytes.count {
            let decoded = try decode([Array(bytes[..<cut]), Array(bytes[cut...])])
            #expect(decoded.error == nil && decoded.values == Self.expected, "split at \(cut)")
        }
        let oneByteReads = try decode(bytes.map { [$0] })
        #expect(oneByteReads.error == nil && oneByteReads.values == Self.expected, "one byte per read")
    }

    @Test func reEncodedRepliesRoundTrip() throws {
        var encoded = ByteBuffer()
        for value in Self.expected { value.write(to: &encoded) }
        #expect(try decode([Array(encoded.readableBytesView)]).values == Self.expected)
    }

    @Test(arguments: [
        "?what\r\n", ":12a\r\n", ":\r\n", ":99999999999999999999\r\n", "$abc\r\n", "$\r\n", "$-2\r\n", "$+3\r\nabc\r\n",
        "$3\r\nabcde\r\n", "+OK\n", "+O\rK\r\n", "#x\r\n", "#\r\n", "_x\r\n", "*-2\r\n", "%-1\r\n", "~-1\r\n",
        "=3\r\ntxt\r\n", "=5\r\ntxt!x\r\n", ",abc\r\n", ",\r\n", "(12a\r\n", "(\r\n", "*2\r\n:1\r\nX\r\n", "\r\n",
    ])
    func malformedRepliesFailWithTheTypedError(_ reply: String) throws {
        let decoded = try decode(reply)
        #expect(decoded.error?.kind == .malformed, "\(reply.debugDescription) → \(String(describing: decoded.error))")
        #expect(decoded.values.isEmpty)
    }

    @Test func repliesBeforeAMalformedOneAreDelivered() throws {
        let decoded = try decode("+first\r\n:2\r\n?garbage\r\n+never\r\n")
        #expect(decoded.values == [.simpleString("first"), .integer(2)])
        #expect(decoded.error?.kind == .malformed)
    }

    @Test func nestingToDepth64IsAcceptedAnd65Rejected() throws {
        var deepest = RESPValue.integer(1)
        for _ in 0..<64 { deepest = .array([deepest]) }
        #expect(try decode(String(repeating: "*1\r\n", count: 64) + ":1\r\n").values == [deepest])
        #expect(try decode(String(repeating: "*1\r\n", count: 65) + ":1\r\n").error?.kind == .tooDeep)
        #expect(try decode(String(repeating: "*1\r\n", count: 64) + "*0\r\n").error?.kind == .tooDeep, "an empty aggregate at depth 65")
        #expect(try decode(String(repeating: "%1\r\n+k\r\n", count: 65) + ":1\r\n").error?.kind == .tooDeep)
        #expect(try decode(String(repeating: "*1\r\n", count: 3) + ":1\r\n",
                           limits: RESPLimits(maxDepth: 2)).error?.kind == .tooDeep)
    }

    @Test func fortyKilobytesOfNestedArraysAreRejectedWithoutCrashing() throws {
        let bytes = Array(String(repeating: "*1\r\n", count: 10_240).utf8)  // 40 KiB
        #expect(bytes.count == 40_960)
        #expect(try decode([bytes]).error?.kind == .tooDeep)
        // Arriving in 1 KiB reads, as from a socket.
        let reads = stride(from: 0, to: bytes.count, by: 1024).map { Array(bytes[$0..<min($0 + 1024, bytes.count)]) }
        #expect(try decode(reads).error?.kind == .tooDeep)
    }

    /// With no cap on bulk lengths, the largest length a header can carry
    /// waits for its payload (the check must not compute `length + 2`).
    @Test func theLargestBulkLengthUnderNoCapWaitsWithoutOverflowing() throws {
        let uncapped = RESPLimits(maxBulkLength: .max)
        let decoded = try decode(["$9223372036854775807\r\n", "abc"].map { Array($0.utf8) }, limits: uncapped)
        #expect(decoded.error == nil && decoded.values.isEmpty)
    }

    @Test func oversizedRepliesAreRejectedFromTheirHeader() throws {
        #expect(try decode("$536870913\r\n").error?.kind == .tooLarge, "one byte above proto-max-bulk-len")
        #expect(try decode("$99999999999999999999\r\n").error?.kind == .tooLarge)
        #expect(try decode("*16777217\r\n").error?.kind == .tooLarge)
        #expect(try decode("%8388609\r\n").error?.kind == .tooLarge, "a map's pairs count twice")
        #expect(try decode("+" + String(repeating: "a", count: 70_000)).error?.kind == .tooLarge, "a line without end")
        let small = RESPLimits(maxBulkLength: 10, maxAggregateCount: 3, maxLineLength: 8)
        #expect(try decode("$11\r\n", limits: small).error?.kind == .tooLarge)
        #expect(try decode("$10\r\n0123456789\r\n", limits: small).values == [.bulkString(Self.buffer("0123456789"))])
        #expect(try decode("*4\r\n", limits: small).error?.kind == .tooLarge)
        #expect(try decode("+123456789\r\n", limits: small).error?.kind == .tooLarge)
        // At the caps, a header alone is no error: the parser waits, and reserves
        // nothing for elements that have not arrived.
        let waiting = try decode("$536870912\r\nabc")
        #expect(waiting.error == nil && waiting.values.isEmpty)
        let counted = try decode("*16777216\r\n:1\r\n")
        #expect(counted.error == nil && counted.values.isEmpty)
    }

    @Test func largeArrayInSmallReadsIsParsedOnceNotPerRead() async throws {
        try await offThePool {
            let count = 100_000
            var whole = ByteBuffer(string: "*\(count)\r\n")
            for i in 0..<count { whole.writeString(":\(i)\r\n") }
            var parser = RESPParser()
            var received = ByteBuffer()
            var values: [RESPValue] = []
            let start = ContinuousClock.now
            while whole.readableBytes > 0 {
                var read = whole.readSlice(length: min(1024, whole.readableBytes))!
                received.writeBuffer(&read)
                while let value = try parser.next(&received) { values.append(value) }
            }
            let elapsed = ContinuousClock.now - start
            guard case .array(let items?) = values.first else { Issue.record("no array"); return }
            #expect(values.count == 1 && items.count == count && items.last == .integer(count - 1))
            // Re-parsing from the start on every 1 KiB read took 131 s for 50,000
            // elements (quadratic); parsing once is well under a second in debug.
            #expect(elapsed < .seconds(5), "\(elapsed)")
            print("RESPParser: \(count)-element array in 1 KiB reads: \(elapsed)")
        }
    }

    @Test func invalidReplyClosesTheConnectionAndFailsEveryPendingCommand() async throws {
        let channel = EmbeddedChannel()
        let queue = RedisRequestQueue(channel: channel, timeout: nil)
        try channel.pipeline.syncOperations.addHandler(RedisCommandHandler(queue: queue))
        try await channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 6379)).get()
        #expect(channel.isActive)
        let slots = (0..<3).map { _ in PendingReply(channel.eventLoop) }
        for slot in slots {
            var bytes = ByteBuffer()
            RESPEncoder.encode([Array("PING".utf8)], into: &bytes)
            queue.submit(bytes, replies: [slot.replies])
        }
        try channel.writeInbound(ByteBuffer(string: "+PONG\r\n" + String(repeating: "*1\r\n", count: 10_240)))
        #expect(try await slots[0].future.get() == .simpleString("PONG"))
        for slot in slots.dropFirst() {
            let outcome = await Result(catching: { try await slot.future.get() })
            guard case .failure(let error) = outcome, case .invalidReply(let parseError)? = error as? RedisError else {
                Issue.record("expected invalidReply, got \(outcome)")
                continue
            }
            #expect(parseError.kind == .tooDeep)
        }
        #expect(!channel.isActive, "the connection was closed")
    }

    @Test func oneTimerTimesOutTheOldestRequestOnlyWhenItsOwnDeadlinePasses() async throws {
        let channel = EmbeddedChannel()
        let queue = RedisRequestQueue(channel: channel, timeout: .seconds(1))
        try channel.pipeline.syncOperations.addHandler(RedisCommandHandler(queue: queue))
        try await channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 6379)).get()
        func request() -> PendingReply {
            let reply = PendingReply(channel.eventLoop)
            var bytes = ByteBuffer()
            RESPEncoder.encode([Array("PING".utf8)], into: &bytes)
            queue.submit(bytes, replies: [reply.replies])
            return reply
        }
        let first = request()
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(600))
        let second = request()  // due at 1.6 s
        try channel.writeInbound(ByteBuffer(string: "+PONG\r\n"))
        #expect(try await first.future.get() == .simpleString("PONG"))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(500))  // 1.1 s: the timer fires for the first, re-arms
        #expect(channel.isActive, "the second request still has time")
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(400))  // 1.5 s
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(200))  // 1.7 s
        #expect(!channel.isActive, "closed: the second request missed its deadline")
        let outcome = await Result(catching: { try await second.future.get() })
        guard case .failure(let error) = outcome else { Issue.record("expected a timeout"); return }
        #expect(error as? RedisError == .timeout)
    }

    /// A batch (a transaction is one) whose deadline passes fails with
    /// `timeout`, like a single command, not with `connectionClosed`.
    @Test func aBatchThatMissesItsDeadlineFailsWithATimeout() async throws {
        let channel = EmbeddedChannel()
        let queue = RedisRequestQueue(channel: channel, timeout: .seconds(1))
        try channel.pipeline.syncOperations.addHandler(RedisCommandHandler(queue: queue))
        try await channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 6379)).get()
        let promise = channel.eventLoop.makePromise(of: [RESPValue].self)
        let replies = PendingReplies(count: 2) { promise.completeWith($0) }
        queue.submit(replies: replies, count: 2) { buffer in
            RESPEncoder.encode([Array("PING".utf8)], into: &buffer)
            RESPEncoder.encode([Array("PING".utf8)], into: &buffer)
        }
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1100))
        #expect(!channel.isActive, "closed: the batch missed its deadline")
        let outcome = await Result(catching: { try await promise.futureResult.get() })
        guard case .failure(let error) = outcome else { Issue.record("expected a timeout"); return }
        #expect(error as? RedisError == .timeout)
    }
}
