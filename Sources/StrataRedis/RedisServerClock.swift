import Strata
import Synchronization

/// What this machine knows of one Redis server's clock: a lower bound of
/// the server's time now, learned from `TIME` replies, so that a write's
/// deadline can be sent as an absolute time on the server's clock (`SET …
/// PXAT`) and no value outlives its deadline however long the command waits
/// (for a connection, in a stalled server, on a slow network).
///
/// **The bound.** A `TIME` reply received at this machine's monotonic
/// instant `r` says `S`: the server read its clock at some instant before
/// `r`, so its time at `r` is at least `S` (the error is at most the round
/// trip; half of it on average, but only the low end is safe). Later, at
/// instant `n`, the server's time is at least `S + (n − r)` less the drift
/// two clocks slewed by NTP can gather meanwhile (``driftPerMillion``, each
/// side at most 500 ppm). Among the samples learned, the one giving the
/// highest bound is kept. A deadline `D` on this machine's wall clock is
/// then `serverNow + (D − wallNow)` on the server's, with `wallNow` read after
/// `n`: never later than the true one.
///
/// **Refreshed**: a sample is asked for (`TIME`) when there is none, and
/// again in the background once the last was learned more than
/// ``refreshInterval`` ago, so the drift allowance stays small (10 ms).
/// Every miss's `TIME` (``RedisMissBook``) is learned too. A reconnect of
/// the client forgets the sample: the address may now be another machine.
///
/// Not covered: a *step* of the server's clock (set by hand, or NTP stepping
/// instead of slewing) between two samples. A step of this machine's wall
/// clock is covered: the elapsed time is measured on the monotonic clock.
final class RedisServerClock: Sendable {
    private struct State {
        /// The server's time (microseconds since 1970), and this machine's
        /// monotonic instant once its reply was in.
        var sample: (server: Int64, at: ContinuousClock.Instant)?
        /// When a sample was last learned (kept or not), for ``refreshIsDue(now:)``.
        var learnedAt: ContinuousClock.Instant?
        var refreshing = false
        /// The server refused `TIME` (an ACL without it): until then, no sample is asked for.
        var refusedUntil: ContinuousClock.Instant?
    }

    /// Relative drift allowed between the two clocks (parts per million):
    /// NTP slews each by at most 500 ppm.
    static var driftPerMillion: Int64 { 1_000 }
    /// How old the last sample may be before another is asked for.
    static var refreshInterval: Duration { .seconds(10) }

    private let state = Mutex(State())
    private let pxatRefused = Atomic<Bool>(false)

    init() {}

    /// Learns a `TIME` reply (`server` microseconds since 1970) whose reply
    /// came at `receivedAt` (read after the reply was in).
    func learn(server: Int64, receivedAt: ContinuousClock.Instant) {
        state.withLock { state in
            state.learnedAt = max(state.learnedAt ?? receivedAt, receivedAt)
            state.refusedUntil = nil
            guard let kept = state.sample else {
                state.sample = (server, receivedAt)
                return
            }
            // Both bounds taken at the later instant: the higher is the better.
            let later = max(kept.at, receivedAt)
            if Self.bound(server, receivedAt, at: later) >= Self.bound(kept.server, kept.at, at: later) {
                state.sample = (server, receivedAt)
            }
        }
    }

    /// Forgets what was learned (the client reconnected: perhaps to another machine).
    func forget() {
        state.withLock { state in
            state.sample = nil
            state.learnedAt = nil
        }
    }

    /// Whether a sample is known.
    var isKnown: Bool { state.withLock { $0.sample != nil } }

    /// A lower bound of the server's time at `now`, in microseconds since
    /// 1970; `nil` when nothing was learned.
    func serverNow(at now: ContinuousClock.Instant) -> Int64? {
        state.withLock { $0.sample }.map { Self.bound($0.server, $0.at, at: now) }
    }

    /// `deadline` (on `clock`, this machine's wall clock) on the server's
    /// clock, in microseconds since 1970: never later than the true one.
    /// `nil` when nothing was learned, or past 64 bits.
    func serverMicroseconds(of deadline: CacheInstant, clock: any CacheClock) -> Int64? {
        let now = ContinuousClock.now
        guard let serverNow = serverNow(at: now) else { return nil }
        let wallNow = clock.now()  // after `now`: the time left is, if anything, shorter
        let (left, overflow) = deadline.nanosecondsSince1970.subtractingReportingOverflow(wallNow.nanosecondsSince1970)
        guard !overflow else { return nil }
        let (result, overflow2) = serverNow.addingReportingOverflow(Self.floorDivide(left, 1_000))
        return overflow2 ? nil : result
    }

    /// Whether a sample must be asked for before a deadline can be sent:
    /// none is known, and the server did not refuse `TIME` lately.
    func needsSample(now: ContinuousClock.Instant) -> Bool {
        state.withLock { state in state.sample == nil && !(state.refusedUntil.map { now < $0 } ?? false) }
    }

    /// Whether a new sample should be asked for in the background now (the
    /// last is older than ``refreshInterval``); claims the refresh (one at a time).
    func claimRefresh(now: ContinuousClock.Instant) -> Bool {
        state.withLock { state in
            if state.refreshing { return false }
            if let until = state.refusedUntil, now < until { return false }
            if let learnedAt = state.learnedAt, now - learnedAt < Self.refreshInterval { return false }
            state.refreshing = true
            return true
        }
    }

    /// The refresh claimed by ``claimRefresh(now:)`` is over.
    func refreshEnded() {
        state.withLock { $0.refreshing = false }
    }

    /// The server refused `TIME` (an ACL without it): no sample is asked
    /// for during ``refreshInterval``, and deadlines go as `PX`, counted
    /// from when the server runs the write.
    func refused() {
        state.withLock { $0.refusedUntil = ContinuousClock.now + Self.refreshInterval }
    }

    /// Whether the server refused `SET … PXAT` (Redis before 6.2): writes
    /// then send their server deadline to a script (see `RedisCacheLevel`).
    var refusesPXAT: Bool { pxatRefused.load(ordering: .relaxed) }

    /// Notes that the server refused `SET … PXAT`.
    func notePXATRefused() { pxatRefused.store(true, ordering: .relaxed) }

    /// The server's time at `now` is at least this, by a sample `server` received at `at`.
    private static func bound(_ server: Int64, _ at: ContinuousClock.Instant, at now: ContinuousClock.Instant) -> Int64 {
        let elapsed = (now - at).nanoseconds / 1_000
        // Before the sample (a caller's instant read earlier): no more than the sample says.
        guard elapsed > 0 else { return server + elapsed }
        return server + elapsed - (elapsed * driftPerMillion + 999_999) / 1_000_000
    }

    /// `value / divisor` rounded towards minus infinity.
    static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return (value % divisor != 0 && (value < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    /// A `TIME` reply in microseconds since 1970.
    static func microseconds(fromTime reply: RESPValue) -> Int64? {
        guard case .array(let parts?) = reply, parts.count == 2,
              let seconds = parts[0].bytes.flatMap({ Int64(String(decoding: $0, as: UTF8.self)) }),
              let micros = parts[1].bytes.flatMap({ Int64(String(decoding: $0, as: UTF8.self)) }) else { return nil }
        return seconds * 1_000_000 + micros
    }

    /// The `PXAT` (milliseconds since 1970 on the server's clock) for a
    /// deadline of `microseconds`: Redis keeps a key while its clock in
    /// whole milliseconds is not past the `PXAT`, that is until the start
    /// of the millisecond after it, so one millisecond is taken off.
    static func pxat(forMicroseconds microseconds: Int64) -> Int64 {
        floorDivide(microseconds, 1_000) - 1
    }
}
