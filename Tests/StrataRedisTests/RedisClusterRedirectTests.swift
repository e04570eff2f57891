import Foundation
@testable import StrataRedis
import StrataTestSupport
import Testing

/// Redirects that cannot be followed are typed errors, never a guess.
@Suite struct RedisClusterRedirectTests {
    /// Random and mutated redirect messages from a fixed seed: each parses
    /// to nothing (another error), `TRYAGAIN`, a redirect to a slot in range
    /// and a `host:port` whose port is 1 to 65535 that prints back to itself
    /// parsed, or ``RedisClusterRedirect/malformed(_:)``; never a trap.
    /// `STRATA_FUZZ_ITERATIONS` and `STRATA_FUZZ_SEED` as for the RESP parser.
    @Test func redirectMessagesParseToAFollowableRedirectOrATypedFailure() async {
        await offThePool {
            let environment = ProcessInfo.processInfo.environment
            let iterations = environment["STRATA_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 100_000
            let seed = environment["STRATA_FUZZ_SEED"].flatMap(UInt64.init) ?? 0x4D4F_5645_44  // "MOVED"
            var random = SeededGenerator(seed: seed)
            let words = ["MOVED", "ASK", "TRYAGAIN", "ERR", "moved", "MOVED ", "", " "]
            let slots = ["0", "16383", "16384", "-1", "3999", "", "x", "99999999999999999999", "+5", "1.5"]
            let hosts = ["127.0.0.1", "", "::1", "[::1]", "host.example", "a:b", " "]
            let ports = ["6379", "0", "65535", "65536", "-1", "", "abc", "63 79", "+7000", "٣", "99999999999999999999"]
            for iteration in 0..<iterations {
                var message: String
                if random.chance(0.7) {
                    message = "\(random.pick(words)) \(random.pick(slots)) \(random.pick(hosts)):\(random.pick(ports))"
                } else {
                    let alphabet = Array("MOVEDASK 0123456789:.abc-\u{0}\r\n")
                    message = String((0..<random.int(0..<40)).map { _ in random.pick(alphabet) })
                }
                if random.chance(0.2), !message.isEmpty {  // a byte flipped
                    var scalars = Array(message.unicodeScalars)
                    scalars[random.int(0..<scalars.count)] = Unicode.Scalar(UInt8(random.int(0..<128)))
                    message = String(String.UnicodeScalarView(scalars))
                }
                switch RedisClusterRedirect(message: message) {
                case nil, .tryAgain?, .malformed?: continue
                case .moved(let slot, let address)?, .ask(let slot, let address)?:
                    let port = address.lastIndex(of: ":").flatMap { Int(address[address.index(after: $0)...]) }
                    guard (0..<RedisClusterSlot.count).contains(slot), let port, (1...65_535).contains(port),
                          let reparsed = RedisClusterRedirect(message: "\(RedisClusterRedirect(message: message)!)"),
                          reparsed == RedisClusterRedirect(message: message) else {
                        Issue.record("seed \(seed), iteration \(iteration): \(message.debugDescription) parsed to \(RedisClusterRedirect(message: message)!)")
                        return
                    }
                }
            }
        }
    }

    /// A node whose `MOVED` names a port that is not a number fails the
    /// command with a protocol error naming the node and the redirect (it was
    /// followed to the seed's port instead).
    @Test(arguments: ["MOVED 1 127.0.0.1:abc", "ASK 1 127.0.0.1:70000"])
    func aRedirectWithoutAUsablePortIsAProtocolError(redirect: String) async throws {
        let port = Locked<Int>(0)
        let node = try await HostileServer { command, _ in
            switch command.first?.uppercased() {
            case "CLUSTER":  // one node serving every slot: itself
                let own = port.value.withLock { $0 }
                return .write([bytes("*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n" + bulk("127.0.0.1") + ":\(own)\r\n")])
            default: return .write([bytes("-\(redirect)\r\n")])
            }
        }
        port.value.withLock { $0 = node.port }
        let client = try RedisClient(cluster: [node.url])
        await #expect {
            _ = try await client.send("GET", "k")
        } throws: { error in
            guard case RedisError.protocolError(let text) = error else { return false }
            return text.contains(redirect) && text.contains("cannot be followed")
        }
        await client.shutdown(); await node.close()
    }
}
