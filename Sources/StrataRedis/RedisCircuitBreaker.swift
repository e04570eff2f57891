import Synchronization

/// Fails requests fast while Redis does not answer: after `threshold`
/// consecutive timeouts or lost connections (a stopped or unreachable
/// server: each would cost the whole command timeout; requests that were
/// already in flight when one failed count with it, as one), requests throw
/// ``RedisError/unavailable(_:)`` at once for a cool-down; then one request
/// probes, and its answer closes the circuit, or its failure opens it again
/// for twice as long (at most `maxCoolDown`). A server that answers, even
/// with an error reply, is up.
///
/// Only reads go through it: a write (a set, a remove, a clear's `SCAN` and
/// `UNLINK`) refused without trying would leave Redis holding what the
/// levels above dropped; writes wait for their answer as before, and one
/// that gets an answer closes the circuit (``answered()``).
final class RedisCircuitBreaker: Sendable {
    private struct State {
        var failures = 0
        var lastFailure: ContinuousClock.Instant?
        var openUntil: ContinuousClock.Instant?
        var probing = false
        var coolDown: Duration
    }

    /// A request let through: when, and whether it probes an open circuit.
    struct Admission: Equatable {
        let startedAt: ContinuousClock.Instant
        let isProbe: Bool
    }

    let threshold: Int
    let minCoolDown: Duration
    let maxCoolDown: Duration
    private let state: Mutex<State>

    init(threshold: Int = 3, coolDown: Duration = .seconds(1), maxCoolDown: Duration = .seconds(30)) {
        self.threshold = max(threshold, 1)
        minCoolDown = coolDown
        self.maxCoolDown = max(maxCoolDown, coolDown)
        state = Mutex(State(coolDown: coolDown))
    }

    /// Lets a request through, or throws ``RedisError/unavailable(_:)``.
    func admit(now: ContinuousClock.Instant = .now) throws -> Admission {
        let refusal = state.withLock { state -> String? in
            guard let until = state.openUntil else { return nil }
            if now < until {
                let left = until - now
                return "\(threshold) requests in a row got no answer; trying again in \(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000) ms"
            }
            if state.probing { return "\(threshold) requests in a row got no answer; one is probing now" }
            state.probing = true
            return ""
        }
        switch refusal {
        case nil: return Admission(startedAt: now, isProbe: false)
        case "": return Admission(startedAt: now, isProbe: true)
        case let reason?: throw RedisError.unavailable(reason)
        }
    }

    /// The request ended: with an answer (`error` nil, or an error that is one), or not.
    func record(_ admission: Admission, error: (any Error)?, now: ContinuousClock.Instant = .now) {
        let noAnswer: Bool
        switch error as? RedisError {
        case .timeout?, .connectionFailed?, .connectionClosed?: noAnswer = true
        default: noAnswer = false
        }
        // Cancelled, or failed fast by a reconnecting slot: says nothing about the server.
        let cancelled = error is CancellationError || { if case .unavailable? = error as? RedisError { true } else { false } }()
        state.withLock { state in
            if admission.isProbe { state.probing = false }
            if cancelled { return }  // says nothing about the server
            guard noAnswer else {
                state.failures = 0
                state.lastFailure = nil
                state.openUntil = nil
                state.coolDown = minCoolDown
                return
            }
            // In flight when another failed: the same outage, counted once.
            if let last = state.lastFailure, admission.startedAt <= last, !admission.isProbe { return }
            state.lastFailure = now
            state.failures += 1
            if admission.isProbe {
                state.coolDown = min(state.coolDown * 2, maxCoolDown)
                state.openUntil = now + state.coolDown
            } else if state.failures >= threshold && state.openUntil == nil {
                state.openUntil = now + state.coolDown
            }
        }
    }

    /// A request sent past the breaker (a write) at `sentAt` got an answer:
    /// the server is up, so reads are let through at once. One sent before
    /// the last failure says nothing newer (an answer handled late, from
    /// before the outage). A probe in flight is left to record its own end.
    func answered(sentAt: ContinuousClock.Instant) {
        state.withLock { state in
            guard state.failures > 0 || state.openUntil != nil else { return }
            if let last = state.lastFailure, sentAt <= last { return }
            state.failures = 0
            state.lastFailure = nil
            state.openUntil = nil
            state.coolDown = minCoolDown
        }
    }

    /// Runs `body` if admitted, recording how it ended.
    func guarded<T>(_ body: () async throws -> T) async throws -> T {
        let admission = try admit()
        do {
            let result = try await body()
            record(admission, error: nil)
            return result
        } catch {
            record(admission, error: error)
            throw error
        }
    }

    /// Whether requests fail fast now.
    var isOpen: Bool { state.withLock { $0.openUntil != nil } }
}
