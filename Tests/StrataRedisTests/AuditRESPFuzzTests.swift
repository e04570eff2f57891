import Foundation
import NIOCore
@testable import StrataRedis
import Testing

/// Rule 2 audit of the RESP path. Each test here failed when it was written.
@Suite(.serialized) struct AuditRESPFuzzTests {
    /// RESP3 lets an attribute (`|`) precede any frame, a push included. The
    /// parser returns `.attributed(value: .push)`, which the command handler
    /// does not recognise as a push (it matches only a bare `.push`), so the
    /// push is taken as the reply to the oldest pending request and every
    /// later reply on the connection shifts onto the wrong caller.
    @Test func anAttributedPushBetweenRepliesIsNotTakenAsAReply() async throws {
        _ = try await RedisServerWarmUp.group()
        let server = try await HostileServer { command, _ in
            guard command.first == "GET", command.count == 2 else { return .write([bytes("-ERR unknown\r\n")]) }
            return .write([bytes("|1\r\n+ttl\r\n:1\r\n>2\r\n+invalidate\r\n*1\r\n$1\r\nx\r\n" + bulk("value of " + command[1]))])
        }
        let client = RedisClient(configuration: try RedisConfiguration(url: server.url, connections: 1, commandTimeout: .seconds(2)))
        var wrong: [String] = []
        var failed = 0
        try await withThrowingTaskGroup(of: (String, String?, Bool).self) { group in
            for index in 0..<16 {
                group.addTask {
                    do {
                        guard case .bulkString(let buffer?) = try await client.send(["GET", "k\(index)"].map { Array($0.utf8) }) else {
                            return ("k\(index)", nil, false)
                        }
                        return ("k\(index)", String(buffer: buffer), false)
                    } catch { return ("k\(index)", nil, true) }
                }
            }
            for try await (key, value, threw) in group {
                if threw { failed += 1 } else if value != "value of \(key)" { wrong.append("\(key) got \(value ?? "a non-bulk reply")") }
            }
        }
        #expect(wrong.isEmpty, "callers got replies that are not theirs: \(wrong.sorted().prefix(4))")
        #expect(failed == 0, "\(failed) requests failed")
        await client.shutdown()
        await server.close()
    }
}
