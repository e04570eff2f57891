#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Strata
@testable import StrataRedis
import StrataTestSupport
import Testing

@Suite(.serialized) struct RedisBreakerReviewTests {
    /// The same with a real outage: SIGSTOP, three reads time out, SIGCONT;
    /// a clear made while the circuit is still cooling down (server answering)
    /// changes nothing in Redis, reports nothing, and the value comes back.
    @Test func aClearRightAfterARealOutageIsLost() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "brkreal:", codec: .string,
                                                         commandTimeout: .milliseconds(300))
        let stack = MemoryCacheLevel<String, String>(capacity: 1 << 20) + redis
        try await stack.set("before clear", forKey: "k")
        kill(server.process.processIdentifier, SIGSTOP)
        for _ in 0..<3 { _ = try? await redis.getIfPresent("x") }
        kill(server.process.processIdentifier, SIGCONT)
        #expect(redis.client.isCircuitOpen)
        await stack.clear()
        #expect(await poll(timeout: .seconds(10)) {
            do { _ = try await redis.getIfPresent("other"); return true } catch { return false }
        })
        let after = try await stack.getIfPresent("k")
        #expect(after == nil, "after clear() returned, the stack answers \(String(describing: after))")
        await redis.shutdown()
        await server.kill()
    }
}
