/// Chooses the admission window's share of the cache by hill climbing on the
/// hit ratio (Caffeine's scheme).
///
/// Over each sample of requests it compares the hit ratio with the previous
/// sample's: if it improved, it keeps moving the window the same way; if it
/// got worse, it turns around. The step shrinks geometrically while the hit
/// ratio is stable and jumps back to its full size when the ratio moves by
/// more than `restartThreshold` (the workload changed).
///
/// Tuned on the LIRS traces (multi1, multi2, ps, sprite) and Zipf: samples of
/// 5× the entries held, steps of 12.5% decaying by 5% a sample, a restart
/// when the hit ratio moves by 10 points, and a window allowed to take the
/// whole cache (recency-heavy traces such as sprite want nearly plain LRU).
/// Caffeine's constants (10×, 6.25%, 2%, 5 points) adapted too slowly for
/// sprite at 1,000 entries (85.5% against LRU's 90.6%).
@usableFromInline
struct HillClimber: Sendable {
    @usableFromInline static var initialShare: Double { 0.01 }
    @usableFromInline static var stepShare: Double { 0.125 }
    @usableFromInline static var decay: Double { 0.95 }
    @usableFromInline static var restartThreshold: Double { 0.1 }
    @usableFromInline static var maximumShare: Double { 1 }

    /// The window's current share of the capacity (0...1; at 1 the level is plain LRU).
    @usableFromInline var share = HillClimber.initialShare
    @usableFromInline var step = -HillClimber.stepShare
    @usableFromInline var hits = 0
    @usableFromInline var misses = 0
    @usableFromInline var previousHitRatio = 0.0

    @inlinable init() {}

    @inlinable mutating func recordHit() { hits += 1 }
    @inlinable mutating func recordMiss() { misses += 1 }

    /// Ends the sample once `sampleSize` requests were seen; returns whether
    /// the share changed.
    @inlinable mutating func climb(sampleSize: Int) -> Bool {
        let requests = hits + misses
        guard requests >= sampleSize else { return false }
        let ratio = Double(hits) / Double(requests)
        let change = ratio - previousHitRatio
        let amount = change >= 0 ? step : -step
        step = abs(change) >= Self.restartThreshold
            ? (amount >= 0 ? Self.stepShare : -Self.stepShare)
            : amount * Self.decay
        previousHitRatio = ratio
        hits = 0
        misses = 0
        let old = share
        share = min(max(share + amount, 0), Self.maximumShare)
        return share != old
    }
}
