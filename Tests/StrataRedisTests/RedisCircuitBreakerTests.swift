import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Strata
@testable import StrataRedis
import StrataTestSupport
import Testing

/// A Redis that stops answering (SIGSTOP: connections are accepted, nothing
/// is answered) cost every request the whole command timeout. The circuit
/// breaker makes it a few timeouts, then fast failures, then a probe that
/// finds the server back.
@Suite(.serialized) struct RedisCircuitBreakerTests {
    @Test func theStateMachineOpensProbesAndCloses() throws {
        let breaker = RedisCircuitBreaker(threshold: 3, coolDown: .seconds(1), maxCoolDown: .seconds(4))
        let t0 = ContinuousClock.now
        // Requests in flight together fail as one: no circuit yet.
        let together = try (0..<5).map { _ in try breaker.admit(now: t0) }
        for (i, admission) in together.enumerated() { breaker.record(admission, error: RedisError.timeout, now: t0 + .milliseconds(1 + i)) }
        #expect(!breaker.isOpen)
        breaker.record(try breaker.admit(now: t0 + .milliseconds(10)), error: RedisError.timeout, now: t0 + .milliseconds(11))
        breaker.record(try breaker.admit(now: t0 + .milliseconds(12)), error: RedisError.timeout, now: t0 + .milliseconds(13))
        #expect(breaker.isOpen)
        #expect(throws: RedisError.self) { try breaker.admit(now: t0 + .milliseconds(500)) }
        // After the cool-down, one probe; the others still fail fast.
        let probe = try breaker.admit(now: t0 + .seconds(2))
        #expect(probe.isProbe)
        #expect(throws: RedisError.self) { try breaker.admit(now: t0 + .seconds(2)) }
        // The probe fails: open twice as long.
        breaker.record(probe, error: RedisError.timeout, now: t0 + .seconds(2))
        #expect(throws: RedisError.self) { try breaker.admit(now: t0 + .seconds(3)) }
        let second = try breaker.admit(now: t0 + .seconds(4) + .milliseconds(1))
        #expect(second.isProbe)
        // A server error reply is an answer: the circuit closes.
        breaker.record(second, error: RedisError.server("ERR wrong type"), now: t0 + .seconds(5))
        #expect(try !breaker.admit(now: t0 + .seconds(5)).isProbe)
        #expect(!breaker.isOpen)
        // A cancelled probe gives its turn back.
        for i in 0..<3 {
            let at = t0 + .seconds(6) + .milliseconds(2 * i)
            breaker.record(try breaker.admit(now: at), error: RedisError.connectionClosed, now: at + .milliseconds(1))
        }
        let third = try breaker.admit(now: t0 + .seconds(8))
        breaker.record(third, error: CancellationError(), now: t0 + .seconds(8))
        #expect(try breaker.admit(now: t0 + .seconds(8)).isProbe)
    }

    /// Writes do not go through the breaker, but one that got an answer
    /// shows the server is up: reads are let through at once, not failed
    /// fast for the rest of the cool-down.
    @Test func anAnsweredWriteClosesTheCircuit() throws {
        let breaker = RedisCircuitBreaker(threshold: 1, coolDown: .seconds(30))
        let t0 = ContinuousClock.now
        breaker.record(try breaker.admit(now: t0), error: RedisError.timeout, now: t0)
        #expect(breaker.isOpen)
        // A write sent before that failure, answered late: nothing newer.
        breaker.answered(sentAt: t0 - .milliseconds(5))
        #expect(breaker.isOpen)
        breaker.answered(sentAt: .now)
        #expect(!breaker.isOpen)
        #expect(try !breaker.admit(now: t0 + .milliseconds(1)).isProbe)
        // A probe in flight keeps its turn: its own answer is recorded as usual.
        let t1 = ContinuousClock.now
        breaker.record(try breaker.admit(now: t1), error: RedisError.timeout, now: t1)
        let probe = try breaker.admit(now: t1 + .seconds(31))
        #expect(probe.isProbe)
        breaker.answered(sentAt: .now)
        #expect(!breaker.isOpen)
        breaker.record(probe, error: nil, now: t1 + .seconds(31))
        #expect(try !breaker.admit(now: t1 + .seconds(31)).isProbe)
    }

    @Test func aStoppedServerCostsAFewTimeoutsThenFailsFastThenRecovers() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "breaker:", codec: .string,
                                                         commandTimeout: .milliseconds(300), invalidatesLevelsAbove: false)
        try await redis.set("v", forKey: "k")
        kill(server.process.processIdentifier, SIGSTOP)
        var outcomes: [String] = []
        for _ in 0..<8 {
            do {
                _ = try await redis.getIfPresent("k")
                outcomes.append("answer")
            } catch RedisError.timeout {
                outcomes.append("timeout")
            } catch RedisError.unavailable {
                outcomes.append("fast")
            } catch {
                outcomes.append("\(error)")
            }
        }
        #expect(outcomes == ["timeout", "timeout", "timeout"] + Array(repeating: "fast", count: 5), "\(outcomes)")
        #expect(redis.client.isCircuitOpen)
        kill(server.process.processIdentifier, SIGCONT)
        #expect(await poll(timeout: .seconds(15)) { (try? await redis.getIfPresent("k")) == "v" }, "not back after SIGCONT")
        #expect(!redis.client.isCircuitOpen)
        await redis.shutdown()
        await server.kill()
    }
}
