#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// One stripe of a level's counters (Caffeine's `LongAdder` cell): a thread
/// adds to the stripe its thread id hashes to, so two threads rarely write
/// the same cache line. Counts are exact (each add is atomic); a snapshot
/// sums the stripes.
@usableFromInline
final class CounterStripe: Sendable {
    @usableFromInline let hits = Atomic<Int>(0), misses = Atomic<Int>(0), errors = Atomic<Int>(0)
    @usableFromInline let cancelledGets = Atomic<Int>(0)
    @usableFromInline let sets = Atomic<Int>(0), setErrors = Atomic<Int>(0)
    @usableFromInline let removes = Atomic<Int>(0), removeErrors = Atomic<Int>(0)
    @usableFromInline let invalidations = Atomic<Int>(0)
    @usableFromInline let clears = Atomic<Int>(0), memoryWarnings = Atomic<Int>(0)
    @usableFromInline let backfills = Atomic<Int>(0), backfillFailures = Atomic<Int>(0)
    /// xorshift state that picks which gets are timed; plain loads and stores
    /// (a lost update only changes which get is sampled, never a count).
    /// 0 until the stripe's first get, which is always timed (so a level
    /// has percentiles from its first get on).
    @usableFromInline let sampler = Atomic<UInt64>(0)
    @usableFromInline let seed: UInt64
    /// Keeps the next stripe's counters off this one's cache lines (and the
    /// adjacent-line prefetcher's pair).
    private let padding: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    @usableFromInline init(seed: UInt64) { self.seed = seed | 1 }

    /// `true` for about one get in `2^shift`, at random, and for the first.
    @inlinable func sample(shift: UInt64) -> Bool {
        let draw = nextSample(shift: shift)
        take(draw)
        return draw.sampled
    }

    /// ``sample(shift:)``'s next answer, not taken yet: a get that may not
    /// count here (a synchronous read that missed) leaves it to the get that does.
    @inlinable func nextSample(shift: UInt64) -> (sampled: Bool, state: UInt64) {
        var x = sampler.load(ordering: .relaxed)
        if x == 0 { return (true, seed) }
        x ^= x << 13
        x ^= x >> 7
        x ^= x << 17
        return (x >> (64 - shift) == 0, x)
    }

    /// Takes a draw of ``nextSample(shift:)``.
    @inlinable func take(_ draw: (sampled: Bool, state: UInt64)) { sampler.store(draw.state, ordering: .relaxed) }

    /// Adds this stripe's counts to `s`.
    func add(into s: inout StatisticsSnapshot) {
        let h = hits.load(ordering: .relaxed), m = misses.load(ordering: .relaxed)
        let e = errors.load(ordering: .relaxed), c = cancelledGets.load(ordering: .relaxed)
        s.hits += h
        s.misses += m
        s.errors += e
        s.gets += h + m + e + c
        s.sets += sets.load(ordering: .relaxed)
        s.setErrors += setErrors.load(ordering: .relaxed)
        s.removes += removes.load(ordering: .relaxed)
        s.removeErrors += removeErrors.load(ordering: .relaxed)
        s.invalidations += invalidations.load(ordering: .relaxed)
        s.clears += clears.load(ordering: .relaxed)
        s.memoryWarnings += memoryWarnings.load(ordering: .relaxed)
        s.backfills += backfills.load(ordering: .relaxed)
        s.backfillFailures += backfillFailures.load(ordering: .relaxed)
    }

    func reset() {
        hits.store(0, ordering: .relaxed); misses.store(0, ordering: .relaxed)
        errors.store(0, ordering: .relaxed); cancelledGets.store(0, ordering: .relaxed)
        sets.store(0, ordering: .relaxed); setErrors.store(0, ordering: .relaxed)
        removes.store(0, ordering: .relaxed); removeErrors.store(0, ordering: .relaxed)
        invalidations.store(0, ordering: .relaxed)
        clears.store(0, ordering: .relaxed); memoryWarnings.store(0, ordering: .relaxed)
        backfills.store(0, ordering: .relaxed); backfillFailures.store(0, ordering: .relaxed)
        sampler.store(0, ordering: .relaxed)
    }
}

extension Atomic<Int> {
    /// Adds one (relaxed).
    @inlinable func increment() { add(1, ordering: .relaxed) }
}

/// Monotonic nanoseconds, read straight from the system clock (cheaper than
/// `ContinuousClock.now`, which converts through 128-bit arithmetic).
@inlinable
func monotonicNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
}

/// ``monotonicNanoseconds()`` as of the system's last clock tick (1–4 ms
/// behind it, never ahead): a fifth of the cost (5 ns against 23 here), for
/// times only shown, such as a memory entry's age.
@inlinable
func coarseMonotonicNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC_COARSE, &spec)
    return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
}
