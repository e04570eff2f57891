import Foundation
import Synchronization

/// A point in wall-clock time, in nanoseconds since 1970. Expiry is stored in
/// this form so it survives restarts (disk) and compares cheaply (memory).
public struct CacheInstant: Comparable, Hashable, Sendable, Codable {
    /// Nanoseconds since 1970-01-01 00:00 UTC (negative before it).
    public var nanosecondsSince1970: Int64

    /// The instant `nanosecondsSince1970` nanoseconds after 1970-01-01 00:00 UTC.
    public init(nanosecondsSince1970: Int64) { self.nanosecondsSince1970 = nanosecondsSince1970 }

    /// The instant of `date`; dates beyond what nanoseconds since 1970 can hold
    /// (about ±292 years, `Date.distantFuture` among them) saturate.
    public init(_ date: Date) {
        let nanos = (date.timeIntervalSince1970 * 1e9).rounded()
        if nanos.isNaN || nanos >= 9.2e18 {
            self.nanosecondsSince1970 = .max
        } else if nanos <= -9.2e18 {
            self.nanosecondsSince1970 = .min
        } else {
            self.nanosecondsSince1970 = Int64(nanos)
        }
    }

    /// This instant as a `Date` (to the precision of a `Double`).
    public var date: Date { Date(timeIntervalSince1970: Double(nanosecondsSince1970) / 1e9) }

    /// This instant moved by `duration` (saturating).
    public func advanced(by duration: Duration) -> CacheInstant {
        let (sum, overflow) = nanosecondsSince1970.addingReportingOverflow(duration.nanoseconds)
        return CacheInstant(nanosecondsSince1970: overflow ? (duration < .zero ? .min : .max) : sum)
    }

    /// This instant moved by a TTL; a negative TTL throws ``ExpiryError/invalidTTL(_:)``.
    public func advanced(byTTL ttl: Duration) throws -> CacheInstant {
        guard ttl >= .zero else { throw ExpiryError.invalidTTL("\(ttl)") }
        return advanced(by: ttl)
    }

    /// Whether `lhs` comes before `rhs`.
    public static func < (lhs: CacheInstant, rhs: CacheInstant) -> Bool {
        lhs.nanosecondsSince1970 < rhs.nanosecondsSince1970
    }
}

extension Duration {
    /// Whole nanoseconds (saturating). From the full-width attoseconds, not
    /// `components`, which traps for durations beyond `Int64.max` seconds.
    @usableFromInline package var nanoseconds: Int64 {
        let nanoseconds = attoseconds / 1_000_000_000
        if nanoseconds > Int128(Int64.max) { return .max }
        if nanoseconds < Int128(Int64.min) { return .min }
        return Int64(nanoseconds)
    }
}

/// Where levels read the time from. Inject a ``TestClock`` to test expiry
/// without sleeping.
public protocol CacheClock: Sendable {
    /// The current time on this clock.
    func now() -> CacheInstant
}

/// The system's wall clock.
public struct SystemClock: CacheClock {
    /// The system's wall clock.
    public init() {}
    /// `CLOCK_REALTIME`, to the nanosecond.
    public func now() -> CacheInstant {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return CacheInstant(nanosecondsSince1970: Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec))
    }
}

/// A clock that moves only when told to.
public final class TestClock: CacheClock {
    private let nanos: Atomic<Int64>

    /// A clock stopped at `start` (by default 2023-11-14 22:13:20 UTC) until ``advance(by:)``.
    public init(_ start: CacheInstant = CacheInstant(nanosecondsSince1970: 1_700_000_000_000_000_000)) {
        nanos = Atomic(start.nanosecondsSince1970)
    }

    /// The instant the clock was started at, moved by every ``advance(by:)`` so far.
    public func now() -> CacheInstant { CacheInstant(nanosecondsSince1970: nanos.load(ordering: .relaxed)) }

    /// Moves the clock forward (saturating at the largest representable instant).
    public func advance(by duration: Duration) {
        var current = nanos.load(ordering: .relaxed)
        while true {
            let (sum, overflow) = current.addingReportingOverflow(duration.nanoseconds)
            let next = overflow ? (duration < .zero ? Int64.min : Int64.max) : sum
            let (exchanged, original) = nanos.compareExchange(expected: current, desired: next, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }
}
